package reconciletest

import (
	"fmt"
	"reflect"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
)

// Store holds the owners of one kind of a Cluster as objects of one Go type T,
// converted with typ: the batch/v1 Jobs every Cluster holds (Cluster.Jobs, over
// reconcile.JobType), and the owners of the Cluster's own kind (NewStore) as
// objects of the test's type (a *TrainingJob), the rig's Task (TaskType) or its
// Run (RunType). typ is the reconcile.Type that the controller-runtime
// integration (controllerruntime.Setup) reads in production, so the test
// exercises the user's conversions and status round trip in memory, and every
// reader of an owner (CollectGarbage, the Driver's pod events, its orphan
// cleanup) sees what production sees (reconcile.Type.Owner: an owner of roles is
// never finished).
//
// Like the API server, a Store versions its owners with the Cluster's one
// resourceVersion counter and reports every change as a watch event, which
// reaches the Cluster's Cache as pod events do (event latency, reordering, lost
// events, Reset): Cached, CachedList and CachedOwner read the Cache's view,
// OnEvent hears its deliveries. Create, Update and Delete are a user's writes:
// no fault applies and the call log does not record them. The status
// subresource (WriteStatus; RolesWriter for owners of roles;
// Cluster.UpdateJobStatus for Jobs) is a controller call: faults and
// interceptors apply, the UID and resourceVersion are preconditions, and it
// checks the rules of the shape (a Job-shaped owner's status as the API server
// checks a Job's, jobstatus.ValidateUpdate; an owner of roles' or a group's
// counters, attempts and totals never decrease and its terminal state never
// changes).
//
// It serves every shape typ has: a Job-shaped owner (synced by Reconciler.Sync;
// the Store, or the Cluster, is the Reconciler's StatusWriter), an owner of
// several roles (Reconciler.SyncRoles, with the Store's status subresource) and
// a group whose roles run as child Jobs (Reconciler.SyncChildJobs; each step
// then also runs its children with the Store's own Job controller, a Reconciler
// of batch/v1 Jobs named by the group's Input.ChildManagedBy, or
// reconciletest.jobkit.dev/job-controller when it is empty, and finishes the
// foreground deletions of children whose pods are gone; a group under
// restartStrategy InPlaceRestart is given its cached pods, as controllerruntime
// gives them with Options.InPlaceRestart; the pods' agents are the test's to
// play, as a Kubelet script). The group's writes to
// its child Jobs and Services are administrative (the call log does not record
// them and no fault applies); its status writes and the children's pod calls
// and status writes are controller calls as any. A Driver syncs a Store's owners
// in their shape with no more set up:
//
//	c, runs := reconciletest.NewStore(reconciletest.Options{Owner: kind}, reconciletest.RunType)
//	r, _ := reconcile.New(reconcile.Config{Name: name, Owner: kind, Clock: c.Clock()}, c, runs)
//	runs.Create(&reconciletest.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train"}, Spec: ...})
//	rr, err := reconciletest.NewDriver(c, r).Run(ctx, "default", "train", 0) // then runs.Get("default", "train")
//
// It is safe for concurrent use; the Cluster's lock guards it.
type Store[T interface {
	metav1.Object
	runtime.Object
}] struct {
	c     *Cluster
	typ   reconcile.Type[T]
	kind  owner.Kind
	rules apiRules[T]
	// objs and handlers are guarded by c.mu.
	objs     map[types.NamespacedName]T
	handlers []func(reconcile.OwnerEvent)
	child    childJobsState
}

// apiRules are what the API server does differently for one resource.
type apiRules[T any] struct {
	// defaults applies the API defaults to a new object (nil: none).
	defaults func(T)
	// spec returns what a change of bumps the generation (nil: any change).
	spec func(T) any
	// statusOp is the call log operation of a status write.
	statusOp Op
	// typeMeta: a created object gets the kind's apiVersion and kind.
	typeMeta bool
}

// rulesFor returns the API rules of the rig's owner types: a Job's defaults and
// generated selector, a Task's Job defaults; none for the test's own types.
func rulesFor[T any](sample T) apiRules[T] {
	r := apiRules[T]{statusOp: OpUpdateStatus, typeMeta: true}
	switch any(sample).(type) {
	case *batchv1.Job:
		r.defaults = func(o T) { defaultJob(any(o).(*batchv1.Job)) }
		r.spec = func(o T) any { return any(o).(*batchv1.Job).Spec }
		r.statusOp, r.typeMeta = OpUpdateJobStatus, false
	case *Task:
		r.defaults = func(o T) { defaultJobSpec(&any(o).(*Task).Spec) }
		r.spec = func(o T) any { return any(o).(*Task).Spec }
	}
	return r
}

// newStore returns the Store of c's owners of kind, registered with c.
func newStore[T interface {
	metav1.Object
	runtime.Object
}](c *Cluster, kind owner.Kind, typ reconcile.Type[T]) *Store[T] {
	return &Store[T]{c: c, typ: typ, kind: kind, rules: rulesFor(typ.New()), objs: map[types.NamespacedName]T{}}
}

// NewStore returns a Cluster (NewCluster(opts)) whose owners of kind
// opts.Owner are held by the returned Store, as objects of type T converted by
// typ. It panics as NewCluster does, when opts.Owner is batch/v1 Job (every
// Cluster holds its Jobs: Cluster.Jobs) and when typ.Validate fails.
func NewStore[T interface {
	metav1.Object
	runtime.Object
}](opts Options, typ reconcile.Type[T]) (*Cluster, *Store[T]) {
	if opts.Owner == (owner.Kind{}) || opts.Owner == owner.BatchJob {
		panic("reconciletest: NewStore needs Options.Owner set to a kind other than batch/v1 Job")
	}
	if err := typ.Validate(); err != nil {
		panic(fmt.Sprintf("reconciletest: NewStore: %v", err))
	}
	c := NewCluster(opts)
	s := newStore(c, c.owner, typ)
	c.custom = s
	return c, s
}

var _ reconcile.StatusWriter = (*Store[*Run])(nil)

// Create stores a copy of obj as the API server stores a new object: a name
// from GenerateName when Name is empty, a UID, a resourceVersion, generation 1,
// the creation time, the kind's apiVersion and kind (not for Jobs, whose
// TypeMeta is left as given), and the API defaults of the rig's types (a Job's,
// with the generated selector and template labels unless spec.manualSelector
// is true; a Task's spec gets a Job's); the status is kept as given (the API
// server would clear it; tests may seed one). The namespace is required.
func (s *Store[T]) Create(obj T) (T, error) {
	var zero T
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	o := s.copy(obj)
	if o.GetNamespace() == "" {
		return zero, apierrors.NewInvalid(s.groupKind(), o.GetName(), field.ErrorList{field.Required(field.NewPath("metadata", "namespace"), "")})
	}
	if o.GetName() == "" {
		if o.GetGenerateName() == "" {
			return zero, apierrors.NewInvalid(s.groupKind(), "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
		}
		o.SetName(uniqueName(c, o.GetGenerateName(), func(n string) bool { _, taken := s.objs[key(o.GetNamespace(), n)]; return taken }))
	} else if _, taken := s.objs[key(o.GetNamespace(), o.GetName())]; taken {
		return zero, apierrors.NewAlreadyExists(s.resource(), o.GetName())
	}
	if s.rules.typeMeta {
		o.GetObjectKind().SetGroupVersionKind(s.kind.GroupVersionKind())
	}
	o.SetUID(c.nextUID())
	o.SetResourceVersion(c.nextRV())
	o.SetGeneration(1)
	o.SetCreationTimestamp(c.now())
	if s.rules.defaults != nil {
		s.rules.defaults(o)
	}
	s.objs[key(o.GetNamespace(), o.GetName())] = o
	s.emitLocked(watch.Added, o)
	return s.copy(o), nil
}

// Get returns a copy of the stored owner, or a NotFound error.
func (s *Store[T]) Get(namespace, name string) (T, error) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.getLocked(namespace, name)
}

func (s *Store[T]) getLocked(namespace, name string) (T, error) {
	o, ok := s.objs[key(namespace, name)]
	if !ok {
		var zero T
		return zero, apierrors.NewNotFound(s.resource(), name)
	}
	return s.copy(o), nil
}

// List returns copies of the stored owners, sorted by namespace and name.
func (s *Store[T]) List() []T {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	out := sortedValues(s.objs)
	for i, o := range out {
		out[i] = s.copy(o)
	}
	return out
}

// Update changes the stored owner as a user's update would: mutate gets a copy
// (outside the Cluster's lock: it may call the Cluster), whose identity, kind
// and status are then set back as stored (the status through the Type's
// conversions). A deletionTimestamp mutate sets is kept: a test models a
// deletion in progress (a foreground deletion's finalizer) that way. An update that changes nothing writes nothing; one that
// changes the spec (a Job's or a Task's; anything, for other types) bumps the
// generation; the owner changing meanwhile is a Conflict. It returns the owner
// as stored, or a NotFound error.
func (s *Store[T]) Update(namespace, name string, mutate func(T)) (T, error) {
	var zero T
	c := s.c
	c.mu.Lock()
	cur, ok := s.objs[key(namespace, name)]
	c.mu.Unlock()
	if !ok {
		return zero, apierrors.NewNotFound(s.resource(), name)
	}
	next := s.copy(cur)
	mutate(next)
	next.SetNamespace(cur.GetNamespace())
	next.SetName(cur.GetName())
	next.SetUID(cur.GetUID())
	next.SetResourceVersion(cur.GetResourceVersion())
	next.SetGeneration(cur.GetGeneration())
	next.SetCreationTimestamp(cur.GetCreationTimestamp())
	next.GetObjectKind().SetGroupVersionKind(cur.GetObjectKind().GroupVersionKind())
	if err := s.keepStatus(cur, next); err != nil {
		return zero, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now, ok := s.objs[key(namespace, name)]; !ok || now.GetResourceVersion() != cur.GetResourceVersion() {
		return zero, apierrors.NewConflict(s.resource(), name, fmt.Errorf("the owner changed during the update"))
	}
	if sameObject(next, cur) {
		return s.copy(cur), nil
	}
	if s.rules.spec == nil || !equality.Semantic.DeepEqual(s.rules.spec(next), s.rules.spec(cur)) {
		next.SetGeneration(cur.GetGeneration() + 1)
	}
	next.SetResourceVersion(c.nextRV())
	s.objs[key(namespace, name)] = next
	s.emitLocked(watch.Modified, next)
	return s.copy(next), nil
}

// keepStatus sets cur's status on next, through the shape's conversions.
func (s *Store[T]) keepStatus(cur, next T) error {
	w, g, cj, err := s.typ.Shape(cur)
	switch {
	case err != nil:
		return err
	case g != nil:
		return s.typ.SetRolesStatus(next, copyRolesStatus(g.Status))
	case cj != nil:
		return s.typ.SetChildJobsStatus(next, cj.Status)
	}
	s.typ.SetStatus(next, *w.Status.DeepCopy())
	return nil
}

// Delete removes an owner at once (there is no deletionTimestamp on owners).
// Its pods stay, with their owner reference and finalizers, until
// CollectGarbage or the test removes them; the deletion is a watch event, which
// a Driver passes to its Reconciler's ObserveOwnerEvent once the Cache has it.
func (s *Store[T]) Delete(namespace, name string) error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.deleteLocked(namespace, name)
}

func (s *Store[T]) deleteLocked(namespace, name string) error {
	k := key(namespace, name)
	cur, ok := s.objs[k]
	if !ok {
		return apierrors.NewNotFound(s.resource(), name)
	}
	delete(s.objs, k)
	final := s.copy(cur)
	final.SetResourceVersion(s.c.nextRV())
	s.emitLocked(watch.Deleted, final)
	return nil
}

// emitLocked queues the watch event of a change to o for the Cache.
func (s *Store[T]) emitLocked(typ watch.EventType, o T) {
	s.c.emitEventLocked(WatchEvent{Type: typ, Owner: o, src: s})
}

func (s *Store[T]) copy(o T) T {
	out, ok := o.DeepCopyObject().(T)
	if !ok {
		panic(fmt.Sprintf("reconciletest: a copy of %T is a %T", o, o.DeepCopyObject()))
	}
	return out
}

// resource and groupKind name the Store's owners in API errors.
func (s *Store[T]) resource() schema.GroupResource {
	if s.kind == owner.BatchJob {
		return jobsResource
	}
	return schema.GroupResource{Group: s.kind.Group, Resource: strings.ToLower(s.kind.Kind) + "s"}
}

func (s *Store[T]) groupKind() schema.GroupKind {
	return schema.GroupKind{Group: s.kind.Group, Kind: s.kind.Kind}
}

// sameObject reports whether a and b are semantically equal objects; an object
// with unexported fields that the semantic comparison cannot read (a test's own
// type) is compared as Go values.
func sameObject(a, b any) (same bool) {
	defer func() {
		if recover() != nil {
			same = reflect.DeepEqual(a, b)
		}
	}()
	return equality.Semantic.DeepEqual(a, b)
}
