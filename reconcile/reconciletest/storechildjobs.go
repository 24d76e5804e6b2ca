package reconciletest

// The Store's groups whose roles run as child Jobs: the group synced by
// Reconciler.SyncChildJobs, its children run by an in-memory Job controller of
// the Store's (a Reconciler of batch/v1 Jobs named by the group's
// ChildManagedBy), foreground deletion of a child done by the Store.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// childJobController is the name of the Store's Job controller (the children's
// spec.managedBy) when a group's Input.ChildManagedBy is empty.
const childJobController = "reconciletest.jobkit.dev/job-controller"

var servicesResource = schema.GroupResource{Resource: "services"}

// childJobsState is what a Store keeps for its groups of child Jobs: the Job
// controller that runs the children, and the Services and claims created.
type childJobsState struct {
	mu       sync.Mutex
	jobs     *reconcile.Reconciler // nil until the first group sync
	services map[types.NamespacedName]bool
	claims   map[types.NamespacedName]bool
	budgets  map[types.NamespacedName]bool
}

// syncChildJobs syncs the group in (converted by Type.ChildJobs) with
// r.SyncChildJobs (under InPlaceRestart, with its cached pods), then finishes the foreground deletions of its children whose
// pods are gone and syncs each child Job with the Store's Job controller.
func (s *Store[T]) syncChildJobs(ctx context.Context, r *reconcile.Reconciler, obj T, in *childjobs.Input) (reconcile.Result, error) {
	if in.ChildManagedBy == "" {
		in.ChildManagedBy = childJobController
	}
	jobs, err := s.childController(in.ChildManagedBy)
	if err != nil {
		return reconcile.Result{}, err
	}
	in.Children = s.children(obj)
	in.ServiceExists = s.serviceExists(in)
	if p := in.Spec.FailurePolicy; p != nil && p.RestartStrategy == plaingroup.InPlaceRestart {
		// As controllerruntime with Options.InPlaceRestart: the cached pods
		// labelled with the group's name.
		for _, pod := range s.c.Cache().Pods(in.Namespace) {
			if pod.Labels[plaingroup.LabelJobSetName] == in.Name {
				in.Pods = append(in.Pods, pod)
			}
		}
	}
	res, err := r.SyncChildJobs(ctx, in, childJobClient[T]{s}, groupWriter[T]{s})
	errs := []error{err}
	s.collectForeground(obj)
	errs = append(errs, s.cleanChildOrphans(ctx, jobs))
	for _, j := range s.children(obj) {
		w := plan.JobWorkload(j)
		if !w.HandledBy(in.ChildManagedBy, owner.BatchJob) {
			continue
		}
		_, err := jobs.Sync(ctx, w, s.c.Cache().OwnerPods)
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

// childController returns the Store's Job controller, named name, creating it
// and registering its event handlers on the Cluster's Cache at the first call.
func (s *Store[T]) childController(name string) (*reconcile.Reconciler, error) {
	s.child.mu.Lock()
	defer s.child.mu.Unlock()
	if s.child.jobs != nil {
		return s.child.jobs, nil
	}
	r, err := reconcile.New(reconcile.Config{Name: name, Owner: owner.BatchJob, Clock: s.c.Clock()}, s.c, reconcile.JobStatusWriter(s.c))
	if err != nil {
		return nil, err
	}
	cache := s.c.Cache()
	cache.OnPodEvent(func(ev reconcile.PodEvent) { r.ObservePodEvent(ev, s.c.jobs.CachedOwner) })
	s.c.jobs.OnEvent(func(ev reconcile.OwnerEvent) { r.ObserveOwnerEvent(ev) })
	s.child.jobs = r
	return r, nil
}

// cleanChildOrphans is the orphan worker of the Store's Job controller, as every
// Job controller runs one: the tracking finalizer of a cached pod whose Job is
// gone, replaced or finished is removed (Reconciler.CleanOrphan over the cached
// Jobs' facts). A pod created by a sync whose cache still showed a Job deleted
// since is freed this way.
func (s *Store[T]) cleanChildOrphans(ctx context.Context, jobs *reconcile.Reconciler) error {
	cache := s.c.Cache()
	var errs []error
	for _, p := range cache.Pods("") {
		if !owner.BatchJob.HasFinalizer(p) {
			continue
		}
		var own *finalizers.OrphanOwner
		if ref := owner.BatchJob.ControllerOf(p); ref != nil {
			own = s.c.jobs.CachedOwner(p.Namespace, ref.Name)
		}
		if _, err := jobs.CleanOrphan(ctx, p, own); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// children returns the cached Jobs whose controller reference has obj's UID.
func (s *Store[T]) children(obj T) []*batchv1.Job {
	var out []*batchv1.Job
	for _, j := range s.c.jobs.CachedList() {
		if j.Namespace == obj.GetNamespace() {
			if ref := metav1.GetControllerOfNoCopy(j); ref != nil && ref.UID == obj.GetUID() {
				out = append(out, j)
			}
		}
	}
	return out
}

func (s *Store[T]) serviceExists(in *childjobs.Input) bool {
	s.child.mu.Lock()
	defer s.child.mu.Unlock()
	name := in.Spec.Subdomain
	if name == "" {
		name = in.Name
	}
	return s.child.services[key(in.Namespace, name)]
}

// collectForeground is the garbage collector of a foreground deletion: the pods
// of a child being deleted are deleted, and the child goes once none is left.
func (s *Store[T]) collectForeground(obj T) {
	for _, j := range s.c.jobs.List() {
		ref := metav1.GetControllerOfNoCopy(j)
		if j.DeletionTimestamp == nil || ref == nil || ref.UID != obj.GetUID() {
			continue
		}
		left := 0
		for _, p := range s.c.ListPods(j.Namespace) {
			if pr := metav1.GetControllerOfNoCopy(p); pr == nil || pr.UID != j.UID {
				continue
			}
			left++
			if p.DeletionTimestamp == nil {
				_ = s.c.RemovePod(p.Namespace, p.Name, nil)
			}
		}
		if left == 0 {
			_ = s.c.jobs.Delete(j.Namespace, j.Name)
		}
	}
}

// childJobsDone reports whether the group has finished and nothing of its
// children is left to count: each child finished or gone, and no pod of a child
// carries the Job tracking finalizer.
func (s *Store[T]) childJobsDone(obj T, in *childjobs.Input) bool {
	if in.Status.TerminalState == "" && groups.Finished(in.Status.Conditions) == nil {
		return false
	}
	for _, j := range s.children(obj) {
		if _, done := jobstatus.Finished(&j.Status); j.DeletionTimestamp == nil && !done {
			return false
		}
		for _, p := range s.c.ListPods(j.Namespace) {
			if pr := metav1.GetControllerOfNoCopy(p); pr != nil && pr.UID == j.UID && owner.BatchJob.HasFinalizer(p) {
				return false
			}
		}
	}
	return true
}

// childJobClient is the reconcile.ChildJobClient of a Store's groups: the
// Cluster's Jobs (administrative writes: the call log does not record them and no
// fault applies), the Store's Services and the Store's owners.
type childJobClient[T interface {
	metav1.Object
	runtime.Object
}] struct{ s *Store[T] }

func (cl childJobClient[T]) CreateJob(_ context.Context, job *batchv1.Job) error {
	_, err := cl.s.c.jobs.Create(job)
	return err
}

func (cl childJobClient[T]) DeleteJob(_ context.Context, job *batchv1.Job, propagation metav1.DeletionPropagation) error {
	c := cl.s.c
	cur, err := c.jobs.Get(job.Namespace, job.Name)
	switch {
	case err != nil:
		return err
	case cur.UID != job.UID:
		return apierrors.NewConflict(jobsResource, job.Name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s)", job.UID, cur.UID))
	case propagation != metav1.DeletePropagationForeground:
		return c.jobs.Delete(job.Namespace, job.Name)
	}
	_, err = c.jobs.Update(job.Namespace, job.Name, func(j *batchv1.Job) {
		if j.DeletionTimestamp == nil {
			j.DeletionTimestamp = ptr.To(c.now())
			j.Finalizers = append(j.Finalizers, metav1.FinalizerDeleteDependents)
		}
	})
	return err
}

func (cl childJobClient[T]) SuspendJob(_ context.Context, job *batchv1.Job, suspend bool) error {
	c := cl.s.c
	cur, err := c.jobs.Get(job.Namespace, job.Name)
	switch {
	case err != nil:
		return err
	case cur.UID != job.UID:
		return apierrors.NewInvalid(jobKind, job.Name, nil)
	}
	_, err = c.jobs.Update(job.Namespace, job.Name, func(j *batchv1.Job) {
		j.Spec.Suspend = ptr.To(suspend)
		if !suspend {
			// A resume writes the pod template changes the plan carries.
			t, from := &j.Spec.Template, &job.Spec.Template
			t.Labels, t.Annotations = maps.Clone(from.Labels), maps.Clone(from.Annotations)
			t.Spec.NodeSelector = maps.Clone(from.Spec.NodeSelector)
			t.Spec.Tolerations, t.Spec.SchedulingGates = slices.Clone(from.Spec.Tolerations), slices.Clone(from.Spec.SchedulingGates)
		}
	})
	return err
}

func (cl childJobClient[T]) ScaleJob(_ context.Context, job *batchv1.Job) error {
	c := cl.s.c
	cur, err := c.jobs.Get(job.Namespace, job.Name)
	switch {
	case err != nil:
		return err
	case cur.UID != job.UID:
		return apierrors.NewInvalid(jobKind, job.Name, nil)
	}
	_, err = c.jobs.Update(job.Namespace, job.Name, func(j *batchv1.Job) {
		j.Spec.Parallelism, j.Spec.Completions = ptr.To(ptr.Deref(job.Spec.Parallelism, 1)), job.Spec.Completions
	})
	return err
}

// CreateClaim records the claim as the Service is recorded: the rig has no
// volumes, and AlreadyExists answers a name taken.
func (cl childJobClient[T]) CreateClaim(_ context.Context, pvc *corev1.PersistentVolumeClaim) error {
	st := &cl.s.child
	st.mu.Lock()
	defer st.mu.Unlock()
	k := key(pvc.Namespace, pvc.Name)
	if st.claims[k] {
		return apierrors.NewAlreadyExists(corev1.Resource("persistentvolumeclaims"), pvc.Name)
	}
	if st.claims == nil {
		st.claims = map[types.NamespacedName]bool{}
	}
	st.claims[k] = true
	return nil
}

// CreateDisruptionBudget records the budget: the rig evicts no pod, so
// nothing reads it; AlreadyExists answers a name taken.
func (cl childJobClient[T]) CreateDisruptionBudget(_ context.Context, pdb *policyv1.PodDisruptionBudget) error {
	st := &cl.s.child
	st.mu.Lock()
	defer st.mu.Unlock()
	k := key(pdb.Namespace, pdb.Name)
	if st.budgets[k] {
		return apierrors.NewAlreadyExists(policyv1.Resource("poddisruptionbudgets"), pdb.Name)
	}
	if st.budgets == nil {
		st.budgets = map[types.NamespacedName]bool{}
	}
	st.budgets[k] = true
	return nil
}

func (cl childJobClient[T]) CreateService(_ context.Context, svc *corev1.Service) error {
	st := &cl.s.child
	st.mu.Lock()
	defer st.mu.Unlock()
	k := key(svc.Namespace, svc.Name)
	if st.services[k] {
		return apierrors.NewAlreadyExists(servicesResource, svc.Name)
	}
	if st.services == nil {
		st.services = map[types.NamespacedName]bool{}
	}
	st.services[k] = true
	return nil
}

func (cl childJobClient[T]) DeleteGroup(_ context.Context, in *childjobs.Input) error {
	obj, err := cl.s.Get(in.Namespace, in.Name)
	switch {
	case err != nil:
		return err
	case obj.GetUID() != in.UID:
		return apierrors.NewConflict(cl.s.resource(), in.Name, errors.New("the group was replaced"))
	}
	return cl.s.Delete(in.Namespace, in.Name)
}

// groupWriter is the status subresource of a Store's groups of child Jobs, the
// childjobs.StatusWriter of SyncChildJobs: as RolesWriter, through
// Type.SetChildJobsStatus, with the rules of such a status (restarts and
// restartsCountTowardsMax never decrease, the latter at most the former, a
// terminal state never changes).
type groupWriter[T interface {
	metav1.Object
	runtime.Object
}] struct{ s *Store[T] }

func (gw groupWriter[T]) WriteStatus(ctx context.Context, in *childjobs.Input, status childjobs.Status) (*childjobs.Input, error) {
	s := gw.s
	if in == nil {
		return nil, apierrors.NewBadRequest("input is nil")
	}
	out, err := s.writeStatus(ctx, Call{Namespace: in.Namespace, Name: in.Name}, in.UID, in.ResourceVersion, func(cur, next T) error {
		_, _, old, err := s.typ.Shape(cur)
		if err != nil {
			return err
		}
		if old == nil {
			return apierrors.NewBadRequest(fmt.Sprintf("%s/%s is not a group of child Jobs", in.Namespace, in.Name))
		}
		if errs := validateGroupStatus(&old.Status, &status); len(errs) > 0 {
			return apierrors.NewInvalid(s.groupKind(), in.Name, errs)
		}
		return s.typ.SetChildJobsStatus(next, status)
	})
	if err != nil {
		return nil, err
	}
	stored, err := s.typ.ChildJobs(out)
	if err != nil {
		return nil, err
	}
	stored.Children, stored.ServiceExists, stored.ChildManagedBy = in.Children, in.ServiceExists, in.ChildManagedBy
	return stored, nil
}

// validateGroupStatus checks the update of old to st against the rules a CRD of a
// group of child Jobs states.
func validateGroupStatus(old, st *childjobs.Status) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status")
	if st.Restarts < old.Restarts {
		errs = append(errs, field.Invalid(p.Child("restarts"), st.Restarts, "must not decrease"))
	}
	if st.RestartsCountTowardsMax < old.RestartsCountTowardsMax {
		errs = append(errs, field.Invalid(p.Child("restartsCountTowardsMax"), st.RestartsCountTowardsMax, "must not decrease"))
	}
	if st.RestartsCountTowardsMax > st.Restarts {
		errs = append(errs, field.Invalid(p.Child("restartsCountTowardsMax"), st.RestartsCountTowardsMax, fmt.Sprintf("must not exceed restarts (%d)", st.Restarts)))
	}
	if old.TerminalState != "" && st.TerminalState != old.TerminalState {
		errs = append(errs, field.Invalid(p.Child("terminalState"), st.TerminalState, fmt.Sprintf("must not change once set (%q)", old.TerminalState)))
	}
	return errs
}
