package reconciletest

// The status subresource of a Store, for every shape.

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/plan"
)

// WriteStatus is the status subresource of a Job-shaped owner, the
// reconcile.StatusWriter of Reconciler.Sync: w.Object must be a T (the Type's
// Workload sets it); status replaces the stored one through Type.SetStatus when
// w's UID and resourceVersion are current (or empty), else a Conflict, and when
// the API server's rules for a Job's status accept the update, else Invalid. It
// returns the owner as stored, converted with Type.Workload; a write that changes
// nothing keeps its resourceVersion.
func (s *Store[T]) WriteStatus(ctx context.Context, w *plan.Workload, status batchv1.JobStatus) (*plan.Workload, error) {
	if w == nil {
		return nil, apierrors.NewBadRequest("workload is nil")
	}
	if _, ok := w.Object.(T); !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reconciletest: WriteStatus: Workload.Object is a %T, not a %T", w.Object, s.typ.New()))
	}
	given := jobOf(w).DeepCopy()
	status.DeepCopyInto(&given.Status)
	out, err := s.writeStatus(ctx, Call{Namespace: w.Namespace, Name: w.Name, Job: given}, w.UID, w.ResourceVersion, func(cur, next T) error {
		old, err := s.typ.Workload(cur)
		if err != nil {
			return err
		}
		s.typ.SetStatus(next, status)
		oldJob := jobOf(old)
		if j, ok := any(cur).(*batchv1.Job); ok {
			oldJob = j
		}
		curJob := *oldJob
		curJob.Status = status
		if errs := jobstatus.ValidateUpdate(oldJob, &curJob); len(errs) > 0 {
			return apierrors.NewInvalid(s.groupKind(), w.Name, errs)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.typ.Workload(out)
}

// RolesWriter returns the status subresource of the owners of roles, the
// ownedpods.StatusWriter SyncFunc gives Reconciler.SyncRoles: the status
// replaces the stored one through Type.SetRolesStatus under the same
// preconditions, call log and faults as WriteStatus, when the rules of such a
// status hold (restarts, restartsCountTowardsMax (at most restarts), and each
// role's attempt, succeeded, failed and failedOnTheirOwn never decrease; a
// terminal state never changes), else Invalid naming the field. It returns the
// owner as stored, converted with Type.Roles.
func (s *Store[T]) RolesWriter() ownedpods.StatusWriter { return rolesWriter[T]{s} }

// rolesWriter is what RolesWriter returns.
type rolesWriter[T interface {
	metav1.Object
	runtime.Object
}] struct{ s *Store[T] }

func (rw rolesWriter[T]) WriteStatus(ctx context.Context, g *ownedpods.Workload, status ownedpods.Status) (*ownedpods.Workload, error) {
	s := rw.s
	if g == nil {
		return nil, apierrors.NewBadRequest("workload is nil")
	}
	out, err := s.writeStatus(ctx, Call{Namespace: g.Namespace, Name: g.Name}, g.UID, g.ResourceVersion, func(cur, next T) error {
		old, err := s.typ.Roles(cur)
		if err != nil {
			return err
		}
		if old == nil {
			return apierrors.NewBadRequest(fmt.Sprintf("%s/%s is not an owner of roles", g.Namespace, g.Name))
		}
		if errs := validateRolesStatus(&old.Status, &status); len(errs) > 0 {
			return apierrors.NewInvalid(s.groupKind(), g.Name, errs)
		}
		return s.typ.SetRolesStatus(next, copyRolesStatus(status))
	})
	if err != nil {
		return nil, err
	}
	return s.typ.Roles(out)
}

// writeStatus is the status subresource for every shape: under the Cluster's
// lock and its fault model, it logs the call (operation and object as given;
// the Store's status operation when empty), checks the preconditions against
// the stored owner, lets set put the new status on a copy (and check it), and
// stores the copy with a new resourceVersion, a watch event, unless nothing
// changed. It returns a copy of the owner as stored.
func (s *Store[T]) writeStatus(ctx context.Context, call Call, uid types.UID, rv string, set func(cur, next T) error) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if call.Op == "" {
		call.Op = s.rules.statusOp
	}
	namespace, name := call.Namespace, call.Name
	return statusCallLocked(c, call, func() (T, error) {
		cur, ok := s.objs[key(namespace, name)]
		if !ok {
			return zero, apierrors.NewNotFound(s.resource(), name)
		}
		if err := checkPreconditions(s.resource(), &metav1.ObjectMeta{Name: name, UID: uid, ResourceVersion: rv}, cur); err != nil {
			return zero, err
		}
		next := s.copy(cur)
		if err := set(cur, next); err != nil {
			return zero, err
		}
		if sameObject(next, cur) {
			return s.copy(cur), nil
		}
		next.SetResourceVersion(c.nextRV())
		s.objs[key(namespace, name)] = next
		s.emitLocked(watch.Modified, next)
		return s.copy(next), nil
	})
}

// jobOf presents w as the Job whose status rules its status follows: the spec
// fields those rules read, and its status.
func jobOf(w *plan.Workload) *batchv1.Job {
	s := &w.Spec
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, UID: w.UID},
		Spec: batchv1.JobSpec{
			Parallelism: s.Parallelism, Completions: s.Completions, CompletionMode: s.CompletionMode,
			BackoffLimit: s.BackoffLimit, BackoffLimitPerIndex: s.BackoffLimitPerIndex, MaxFailedIndexes: s.MaxFailedIndexes,
			PodFailurePolicy: s.PodFailurePolicy, SuccessPolicy: s.SuccessPolicy, PodReplacementPolicy: s.PodReplacementPolicy,
			Suspend: s.Suspend, ActiveDeadlineSeconds: s.ActiveDeadlineSeconds, Selector: s.Selector, ManagedBy: s.ManagedBy,
		},
		Status: w.Status,
	}
}
