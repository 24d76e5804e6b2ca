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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/internal/podutil"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// RolesStore holds owners of several roles (package groups/ownedpods) of a Cluster's owner
// kind, for tests of Reconciler.SyncRoles: the Cluster's Options.Owners, so that
// CollectGarbage, the Driver's pod events, its orphan cleanup and its "done" test
// see them, with a status subresource of the Cluster's (WriteStatus: call log
// operation OpUpdateStatus, faults and interceptors apply, resourceVersions from
// the Cluster's one counter). NewRolesCluster returns a Cluster and its store:
//
//	c, owners := reconciletest.NewRolesCluster(reconciletest.Options{Owner: kind})
//	r, _ := reconcile.New(reconcile.Config{Name: name, Owner: kind, Clock: c.Clock()}, c, c)
//	w, _ := owners.Create(&ownedpods.Workload{Namespace: "default", Name: "train", ManagedBy: &name, Roles: ...})
//	d := reconciletest.NewDriver(c, r)
//	d.SyncFunc, d.DoneFunc = owners.SyncFunc(r), owners.DoneFunc()
//	rr, err := d.Run(ctx, "default", "train", 0) // then owners.Get("default", "train")
//
// An owner is stored as a *ownedpods.Workload whose Object is a
// *metav1.PartialObjectMetadata of the kind (events are recorded on it). The store
// has no watch and no cache lag: a sync reads what is stored. The roles' specs are
// shared between the stored owner and the copies handed out: do not modify them.
// WriteStatus checks the rules a CRD of such an owner would state (counters and
// attempts never decrease, a terminal state never changes), not the roles' Job
// statuses. A RolesStore is safe for concurrent use.
type RolesStore struct {
	c    *Cluster
	mu   sync.Mutex
	objs map[types.NamespacedName]*ownedpods.Workload
}

var _ ownedpods.StatusWriter = (*RolesStore)(nil)

// NewRolesCluster returns a Cluster (NewCluster(opts)) whose owners of kind
// opts.Owner are held by the returned RolesStore; opts.Owners is set to the store.
// It panics as NewCluster does, and when opts.Owners is already set.
func NewRolesCluster(opts Options) (*Cluster, *RolesStore) {
	if opts.Owners != nil {
		panic("reconciletest: NewRolesCluster sets Options.Owners itself")
	}
	s := &RolesStore{objs: map[types.NamespacedName]*ownedpods.Workload{}}
	opts.Owners = s.facts
	s.c = NewCluster(opts)
	return s.c, s
}

// Create stores a copy of w as the API server stores a custom resource: a UID, a
// resourceVersion, generation 1 and an Object of the Cluster's kind; Name is
// required, Status is kept as given. It is not a controller call: no fault
// applies and the call log does not record it.
func (s *RolesStore) Create(w *ownedpods.Workload) (*ownedpods.Workload, error) {
	if w == nil {
		return nil, apierrors.NewBadRequest("workload is nil")
	}
	if w.Namespace == "" || w.Name == "" {
		return nil, apierrors.NewInvalid(s.groupKind(), w.Name, field.ErrorList{field.Required(field.NewPath("metadata", "name"), "namespace and name are required")})
	}
	o := copyRoles(w)
	s.c.mu.Lock()
	o.UID, o.ResourceVersion, o.Generation = s.c.nextUID(), s.c.nextRV(), 1
	s.c.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(o.Namespace, o.Name)
	if _, taken := s.objs[k]; taken {
		return nil, apierrors.NewAlreadyExists(s.resource(), o.Name)
	}
	s.objs[k] = s.withObject(o)
	return copyRoles(s.objs[k]), nil
}

// Get returns a copy of the stored owner, or a NotFound error.
func (s *RolesStore) Get(namespace, name string) (*ownedpods.Workload, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(s.resource(), name)
	}
	return copyRoles(o), nil
}

// Update changes the stored owner's spec as a user's update would: mutate gets
// a copy, whose identity, status and deletion state are then kept as stored; the
// update gives a new resourceVersion and generation. The roles' specs are shared
// with the stored owner: replace a Role (or its Spec's pointers), do not modify
// them in place. It is not a controller call, and it returns the owner as stored,
// or a NotFound error.
func (s *RolesStore) Update(namespace, name string, mutate func(*ownedpods.Workload)) (*ownedpods.Workload, error) {
	s.mu.Lock()
	cur, ok := s.objs[key(namespace, name)]
	if !ok {
		s.mu.Unlock()
		return nil, apierrors.NewNotFound(s.resource(), name)
	}
	next := copyRoles(cur)
	s.mu.Unlock()
	mutate(next)
	next.Namespace, next.Name, next.UID, next.Deleting = cur.Namespace, cur.Name, cur.UID, cur.Deleting
	next.Status = copyRolesStatus(cur.Status)
	s.c.mu.Lock()
	rv := s.c.nextRV()
	s.c.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.objs[key(namespace, name)] != cur {
		return nil, apierrors.NewConflict(s.resource(), name, fmt.Errorf("the owner changed during the update"))
	}
	next.ResourceVersion, next.Generation = rv, cur.Generation+1
	s.objs[key(namespace, name)] = s.withObject(next)
	return copyRoles(next), nil
}

// Delete removes an owner at once. Its pods stay, with their owner reference and
// finalizers, until CollectGarbage or the test removes them; tell the Reconciler
// (ObserveOwnerEvent with Old), as the controller's owner event handler would. It
// is not a controller call.
func (s *RolesStore) Delete(namespace, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(namespace, name)
	if _, ok := s.objs[k]; !ok {
		return apierrors.NewNotFound(s.resource(), name)
	}
	delete(s.objs, k)
	return nil
}

// WriteStatus is the status subresource, a controller call (operation
// OpUpdateStatus, faults apply): it replaces the stored owner's status with status
// when w's UID and resourceVersion are current (or empty), else a Conflict, and
// when the update keeps the rules of such a status, else Invalid naming the field:
// restarts, restartsCountTowardsMax (at most restarts), and each role's attempt,
// succeeded, failed and failedOnTheirOwn never decrease, and a terminal state never changes. It
// returns the owner as stored; a write that changes nothing keeps its
// resourceVersion.
func (s *RolesStore) WriteStatus(ctx context.Context, w *ownedpods.Workload, status ownedpods.Status) (*ownedpods.Workload, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if w == nil {
		return nil, apierrors.NewBadRequest("workload is nil")
	}
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	call := Call{Op: OpUpdateStatus, Namespace: w.Namespace, Name: w.Name}
	return statusCallLocked(c, call, func() (*ownedpods.Workload, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		cur, ok := s.objs[key(w.Namespace, w.Name)]
		if !ok {
			return nil, apierrors.NewNotFound(s.resource(), w.Name)
		}
		if err := checkPreconditions(s.resource(), &metav1.ObjectMeta{Name: w.Name, UID: w.UID, ResourceVersion: w.ResourceVersion}, &metav1.ObjectMeta{UID: cur.UID, ResourceVersion: cur.ResourceVersion}); err != nil {
			return nil, err
		}
		if errs := validateRolesStatus(&cur.Status, &status); len(errs) > 0 {
			return nil, apierrors.NewInvalid(s.groupKind(), w.Name, errs)
		}
		if equality.Semantic.DeepEqual(cur.Status, status) {
			return copyRoles(cur), nil
		}
		next := copyRoles(cur)
		next.Status = copyRolesStatus(status)
		next.ResourceVersion = c.nextRV()
		s.objs[key(next.Namespace, next.Name)] = s.withObject(next)
		return copyRoles(next), nil
	})
}

// SyncFunc returns a Driver.SyncFunc that syncs the stored owner with
// r.SyncRoles, listing its pods from the Cluster's Cache and writing its status
// through the store; an owner the store does not hold is forgotten and not synced.
func (s *RolesStore) SyncFunc(r *reconcile.Reconciler) func(ctx context.Context, namespace, name string) (bool, reconcile.Result, error) {
	return func(ctx context.Context, namespace, name string) (bool, reconcile.Result, error) {
		w, err := s.Get(namespace, name)
		if err != nil {
			r.Forget(reconcile.Key(namespace, name))
			return false, reconcile.Result{}, nil
		}
		res, err := r.SyncRoles(ctx, w, s.pods, s)
		return true, res, err
	}
}

// DoneFunc returns a Driver.DoneFunc: an owner is done when its status has a
// terminal state (or a true Completed or Failed condition), none of its pods
// carries the tracking finalizer of the Cluster's owner kind or still runs (a pod
// neither finished nor being deleted: one whose finalizer was removed but whose
// deletion failed is deleted by a later sync), and its status shows what is
// left of each role's pods: none active or ready, as many terminating as are
// being deleted (the group stops its roles in the write that finishes it; a
// later write shows them stopped).
func (s *RolesStore) DoneFunc() func(namespace, name string) (done, exists bool) {
	return func(namespace, name string) (bool, bool) {
		w, err := s.Get(namespace, name)
		if err != nil {
			return false, false
		}
		if w.Status.TerminalState == "" && groups.Finished(w.Status.Conditions) == nil {
			return false, true
		}
		terminating := map[string]int32{}
		for _, p := range s.c.ListPods(namespace) {
			ref := metav1.GetControllerOfNoCopy(p)
			if ref == nil || ref.UID != w.UID {
				continue
			}
			if s.c.owner.HasFinalizer(p) || (!podutil.IsTerminal(p) && p.DeletionTimestamp == nil) {
				return false, true
			}
			if !podutil.IsTerminal(p) {
				terminating[p.Labels[plaingroup.LabelRoleName]+"/"+p.Labels[plaingroup.LabelRestartAttempt]]++
			}
		}
		for _, rs := range w.Status.Roles {
			j := &rs.Job
			if j.Active != 0 || ptr.Deref(j.Ready, 0) != 0 ||
				ptr.Deref(j.Terminating, 0) != terminating[rs.Name+"/"+strconv.Itoa(int(rs.Attempt))] {
				return false, true
			}
		}
		return true, true
	}
}

// pods lists the owner's pods from the Cluster's Cache (controller reference with
// its UID).
func (s *RolesStore) pods(w *ownedpods.Workload) ([]*corev1.Pod, error) {
	return s.c.Cache().OwnerPods(&plan.Workload{Namespace: w.Namespace, UID: w.UID})
}

// facts is Options.Owners: the stored owner as production presents it
// (ownedpods.Workload.AsWorkload: its identity and managedBy, never finished, so
// that CollectGarbage and the Driver's orphan cleanup leave the pods of a
// finished group to SyncRoles, which stops and counts them).
func (s *RolesStore) facts(namespace, name string) *plan.Workload {
	w, err := s.Get(namespace, name)
	if err != nil {
		return nil
	}
	return w.AsWorkload()
}

// withObject sets w.Object to the object events are recorded on, and returns w.
func (s *RolesStore) withObject(w *ownedpods.Workload) *ownedpods.Workload {
	gvk := s.c.owner.GroupVersionKind()
	w.Object = &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: w.Namespace, Name: w.Name, UID: w.UID,
			ResourceVersion: w.ResourceVersion, Generation: w.Generation,
		},
	}
	return w
}

func (s *RolesStore) resource() schema.GroupResource { return s.c.taskResource() }

func (s *RolesStore) groupKind() schema.GroupKind { return s.c.taskGroupKind() }

// validateRolesStatus checks the update of old to st against the rules a CRD of
// an owner of several roles states.
func validateRolesStatus(old, st *ownedpods.Status) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status")
	never := "must not decrease"
	if st.Restarts < old.Restarts {
		errs = append(errs, field.Invalid(p.Child("restarts"), st.Restarts, never))
	}
	if st.RestartsCountTowardsMax < old.RestartsCountTowardsMax {
		errs = append(errs, field.Invalid(p.Child("restartsCountTowardsMax"), st.RestartsCountTowardsMax, never))
	}
	if st.RestartsCountTowardsMax > st.Restarts {
		errs = append(errs, field.Invalid(p.Child("restartsCountTowardsMax"), st.RestartsCountTowardsMax, fmt.Sprintf("must not exceed restarts (%d)", st.Restarts)))
	}
	if old.TerminalState != "" && st.TerminalState != old.TerminalState {
		errs = append(errs, field.Invalid(p.Child("terminalState"), st.TerminalState, fmt.Sprintf("must not change once set (%q)", old.TerminalState)))
	}
	for i, r := range st.Roles {
		for _, o := range old.Roles {
			if o.Name != r.Name {
				continue
			}
			rp := p.Child("roles").Index(i)
			if r.Attempt < o.Attempt {
				errs = append(errs, field.Invalid(rp.Child("attempt"), r.Attempt, never))
			}
			if r.Succeeded < o.Succeeded {
				errs = append(errs, field.Invalid(rp.Child("succeeded"), r.Succeeded, never))
			}
			if r.Failed < o.Failed {
				errs = append(errs, field.Invalid(rp.Child("failed"), r.Failed, never))
			}
			if r.FailedOnTheirOwn < o.FailedOnTheirOwn {
				errs = append(errs, field.Invalid(rp.Child("failedOnTheirOwn"), r.FailedOnTheirOwn, never))
			}
		}
	}
	return errs
}

// copyRoles returns a copy of w whose status and role list are its own; the roles'
// specs and the policies are shared.
func copyRoles(w *ownedpods.Workload) *ownedpods.Workload {
	out := *w
	out.Roles = append([]ownedpods.Role(nil), w.Roles...)
	out.Status = copyRolesStatus(w.Status)
	return &out
}

func copyRolesStatus(st ownedpods.Status) ownedpods.Status {
	out := st
	out.Conditions = nil
	for _, c := range st.Conditions {
		out.Conditions = append(out.Conditions, *c.DeepCopy())
	}
	out.Roles = nil
	for _, r := range st.Roles {
		r.Job = *r.Job.DeepCopy()
		out.Roles = append(out.Roles, r)
	}
	return out
}
