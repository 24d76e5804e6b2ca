package reconciletest

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// Store holds the owners of a Cluster's owner kind as objects of the test's own
// type T (a *TrainingJob, or the rig's Run), converted with typ: the same
// reconcile.Type that the controller-runtime integration (controllerruntime.Setup)
// reads in production, so the test exercises the user's conversions and status
// round trip in memory, and every reader of an owner (CollectGarbage, the
// Driver's pod events, its orphan cleanup) sees what production sees
// (reconcile.Type.Owner: an owner of roles is never finished). It serves every
// shape typ has: a Job-shaped owner (synced by Reconciler.Sync; the Store is the
// Reconciler's StatusWriter), an owner of several roles (Reconciler.SyncRoles,
// with the Store's status subresource) and a group whose roles run as child Jobs
// (Reconciler.SyncChildJobs; each step then also runs its children with the
// Store's own Job controller, a Reconciler of batch/v1 Jobs named by the group's
// Input.ChildManagedBy, or reconciletest.jobkit.dev/job-controller when it is
// empty, and finishes the foreground deletions of children whose pods are gone;
// a group under restartStrategy InPlaceRestart is given its cached pods, as
// controllerruntime gives them with Options.InPlaceRestart; the pods' agents
// are the test's to play, as a Kubelet script).
// The group's writes to its child Jobs and Services are administrative (the call
// log does not record them and no fault applies); its status writes and the
// children's pod calls and status writes are controller calls as any. NewStore returns a Cluster and its Store:
//
//	c, runs := reconciletest.NewStore(reconciletest.Options{Owner: kind}, reconciletest.RunType)
//	r, _ := reconcile.New(reconcile.Config{Name: name, Owner: kind, Clock: c.Clock()}, c, runs)
//	runs.Create(&reconciletest.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train"}, Spec: ...})
//	d := reconciletest.NewDriver(c, r)
//	d.SyncFunc, d.DoneFunc = runs.SyncFunc(r), runs.DoneFunc()
//	rr, err := d.Run(ctx, "default", "train", 0) // then runs.Get("default", "train")
//
// The status subresource (WriteStatus, and the roles' writer SyncFunc uses) is a
// controller call: call log operation OpUpdateStatus, faults and interceptors
// apply, resourceVersions come from the Cluster's one counter, the UID and
// resourceVersion are preconditions. It checks the rules a CRD of the shape
// states: a Job-shaped owner's status as the API server checks a Job's
// (jobstatus.ValidateUpdate); an owner of roles' counters, attempts and totals
// never decrease and its terminal state never changes. The Store has no watch
// and no cache lag: a sync reads what is stored. It is safe for concurrent use.
type Store[T interface {
	metav1.Object
	runtime.Object
}] struct {
	c     *Cluster
	typ   reconcile.Type[T]
	mu    sync.Mutex
	objs  map[types.NamespacedName]T
	child childJobsState
}

// NewStore returns a Cluster (NewCluster(opts)) whose owners of kind opts.Owner
// are held by the returned Store, as objects of type T converted by typ;
// opts.Owners is set to the Store. It panics as NewCluster does, when
// opts.Owners is already set, when opts.Owner is batch/v1 Job (the Cluster holds
// Jobs itself) and when typ.Validate fails.
func NewStore[T interface {
	metav1.Object
	runtime.Object
}](opts Options, typ reconcile.Type[T]) (*Cluster, *Store[T]) {
	switch {
	case opts.Owners != nil:
		panic("reconciletest: NewStore sets Options.Owners itself")
	case opts.Owner == (owner.Kind{}) || opts.Owner == owner.BatchJob:
		panic("reconciletest: NewStore needs Options.Owner set to a kind other than batch/v1 Job")
	}
	if err := typ.Validate(); err != nil {
		panic(fmt.Sprintf("reconciletest: NewStore: %v", err))
	}
	s := &Store[T]{typ: typ, objs: map[types.NamespacedName]T{}}
	opts.Owners = s.facts
	s.c = NewCluster(opts)
	return s.c, s
}

var _ reconcile.StatusWriter = (*Store[*Run])(nil)

// Create stores a copy of obj as the API server stores a custom resource: the
// Cluster's kind, a UID, a resourceVersion, generation 1 and the creation time;
// namespace and name are required, the status is kept as given. It is not a
// controller call: no fault applies and the call log does not record it.
func (s *Store[T]) Create(obj T) (T, error) {
	var zero T
	if obj.GetNamespace() == "" || obj.GetName() == "" {
		return zero, apierrors.NewInvalid(s.groupKind(), obj.GetName(), field.ErrorList{field.Required(field.NewPath("metadata", "name"), "namespace and name are required")})
	}
	o := s.copy(obj)
	o.GetObjectKind().SetGroupVersionKind(s.c.owner.GroupVersionKind())
	s.c.mu.Lock()
	o.SetUID(s.c.nextUID())
	o.SetResourceVersion(s.c.nextRV())
	o.SetCreationTimestamp(s.c.now())
	s.c.mu.Unlock()
	o.SetGeneration(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(o.GetNamespace(), o.GetName())
	if _, taken := s.objs[k]; taken {
		return zero, apierrors.NewAlreadyExists(s.resource(), o.GetName())
	}
	s.objs[k] = o
	return s.copy(o), nil
}

// Get returns a copy of the stored owner, or a NotFound error.
func (s *Store[T]) Get(namespace, name string) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key(namespace, name)]
	if !ok {
		var zero T
		return zero, apierrors.NewNotFound(s.resource(), name)
	}
	return s.copy(o), nil
}

// Update changes the stored owner as a user's update would: mutate gets a copy,
// whose identity, kind and status are then set back as stored (the status
// through the Type's conversions); the update gives a new resourceVersion and
// generation. It is not a controller call, and it returns the owner as stored, or
// a NotFound error.
func (s *Store[T]) Update(namespace, name string, mutate func(T)) (T, error) {
	var zero T
	s.mu.Lock()
	cur, ok := s.objs[key(namespace, name)]
	s.mu.Unlock()
	if !ok {
		return zero, apierrors.NewNotFound(s.resource(), name)
	}
	next := s.copy(cur)
	mutate(next)
	next.SetNamespace(cur.GetNamespace())
	next.SetName(cur.GetName())
	next.SetUID(cur.GetUID())
	next.SetDeletionTimestamp(cur.GetDeletionTimestamp())
	next.SetCreationTimestamp(cur.GetCreationTimestamp())
	next.GetObjectKind().SetGroupVersionKind(cur.GetObjectKind().GroupVersionKind())
	if err := s.keepStatus(cur, next); err != nil {
		return zero, err
	}
	s.c.mu.Lock()
	rv := s.c.nextRV()
	s.c.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !equality.Semantic.DeepEqual(s.objs[key(namespace, name)], cur) {
		return zero, apierrors.NewConflict(s.resource(), name, fmt.Errorf("the owner changed during the update"))
	}
	next.SetResourceVersion(rv)
	next.SetGeneration(cur.GetGeneration() + 1)
	s.objs[key(namespace, name)] = next
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

// Delete removes an owner at once. Its pods stay, with their owner reference and
// finalizers, until CollectGarbage or the test removes them; tell the Reconciler
// (ObserveOwnerEvent with Old), as the controller's owner event handler would. It
// is not a controller call.
func (s *Store[T]) Delete(namespace, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(namespace, name)
	if _, ok := s.objs[k]; !ok {
		return apierrors.NewNotFound(s.resource(), name)
	}
	delete(s.objs, k)
	return nil
}

// SyncFunc returns a Driver.SyncFunc that syncs the stored owner in its shape:
// Reconciler.Sync for a Job-shaped one (r's StatusWriter must be the Store),
// Reconciler.SyncRoles for an owner of roles (with the Store's status
// subresource), listing its pods from the Cluster's Cache. An owner the store
// does not hold is forgotten and not synced; one the Type's conversions refuse
// is skipped (Report.Skipped) with no error, as the production integration does
// after its Warning event.
func (s *Store[T]) SyncFunc(r *reconcile.Reconciler) func(ctx context.Context, namespace, name string) (bool, reconcile.Result, error) {
	return func(ctx context.Context, namespace, name string) (bool, reconcile.Result, error) {
		obj, err := s.Get(namespace, name)
		if err != nil {
			r.Forget(reconcile.Key(namespace, name))
			return false, reconcile.Result{}, nil
		}
		w, g, cj, err := s.typ.Shape(obj)
		switch {
		case err != nil:
			return true, reconcile.Result{Report: reconcile.Report{Skipped: err.Error()}}, nil
		case cj != nil:
			res, err := s.syncChildJobs(ctx, r, obj, cj)
			return true, res, err
		}
		if g != nil {
			res, err := r.SyncRoles(ctx, g, s.rolesPods, s.RolesWriter())
			return true, res, err
		}
		res, err := r.Sync(ctx, w, s.c.Cache().OwnerPods)
		return true, res, err
	}
}

// DoneFunc returns a Driver.DoneFunc: an owner is done when it has finished and
// nothing of it is left to count or stop. A Job-shaped owner: its status is
// finished and none of its pods carries the tracking finalizer. An owner of
// roles: its status has a terminal state (or a true Completed or Failed
// condition), none of its pods carries the finalizer or still runs (a pod
// neither finished nor being deleted: one whose finalizer was removed but whose
// deletion failed is deleted by a later sync), and its status shows what is left
// of each role's pods: none active or ready, as many terminating as are being
// deleted (the group stops its roles in the write that finishes it; a later
// write shows them stopped).
func (s *Store[T]) DoneFunc() func(namespace, name string) (done, exists bool) {
	return func(namespace, name string) (bool, bool) {
		obj, err := s.Get(namespace, name)
		if err != nil {
			return false, false
		}
		w, g, cj, err := s.typ.Shape(obj)
		switch {
		case err != nil:
			return false, true
		case g != nil:
			return s.rolesDone(g), true
		case cj != nil:
			return s.childJobsDone(obj, cj), true
		}
		if !jobstatus.IsFinished(&w.Status) {
			return false, true
		}
		for _, p := range s.c.ListPods(namespace) {
			if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == obj.GetUID() && s.c.owner.HasFinalizer(p) {
				return false, true
			}
		}
		return true, true
	}
}

func (s *Store[T]) rolesDone(g *ownedpods.Workload) bool {
	if g.Status.TerminalState == "" && groups.Finished(g.Status.Conditions) == nil {
		return false
	}
	terminating := map[string]int32{}
	for _, p := range s.c.ListPods(g.Namespace) {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || ref.UID != g.UID {
			continue
		}
		if s.c.owner.HasFinalizer(p) || (!podutil.IsTerminal(p) && p.DeletionTimestamp == nil) {
			return false
		}
		if !podutil.IsTerminal(p) {
			terminating[p.Labels[plaingroup.LabelRoleName]+"/"+p.Labels[plaingroup.LabelRestartAttempt]]++
		}
	}
	for _, rs := range g.Status.Roles {
		j := &rs.Job
		if j.Active != 0 || ptr.Deref(j.Ready, 0) != 0 ||
			ptr.Deref(j.Terminating, 0) != terminating[rs.Name+"/"+strconv.Itoa(int(rs.Attempt))] {
			return false
		}
	}
	return true
}

// rolesPods lists an owner of roles' pods from the Cluster's Cache (controller
// reference with its UID: an owner of roles adopts nothing).
func (s *Store[T]) rolesPods(g *ownedpods.Workload) ([]*corev1.Pod, error) {
	return s.c.Cache().OwnerPods(&plan.Workload{Namespace: g.Namespace, UID: g.UID})
}

// facts is Options.Owners: the stored owner as production presents it
// (reconcile.Type.Owner); an owner the conversions refuse is presented with its
// identity and managedBy, unfinished, as reconcile.Type.OrphanOwner does.
func (s *Store[T]) facts(namespace, name string) *plan.Workload {
	obj, err := s.Get(namespace, name)
	if err != nil {
		return nil
	}
	w, err := s.typ.Owner(obj)
	if err != nil {
		w = &plan.Workload{Namespace: namespace, Name: name, UID: obj.GetUID(), Object: obj}
		if s.typ.ManagedBy != nil {
			w.Spec.ManagedBy = s.typ.ManagedBy(obj)
		}
	}
	return w
}

func (s *Store[T]) copy(o T) T {
	out, ok := o.DeepCopyObject().(T)
	if !ok {
		panic(fmt.Sprintf("reconciletest: a copy of %T is a %T", o, o.DeepCopyObject()))
	}
	return out
}

func (s *Store[T]) resource() schema.GroupResource { return s.c.taskResource() }

func (s *Store[T]) groupKind() schema.GroupKind { return s.c.taskGroupKind() }
