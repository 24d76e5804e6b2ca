package reconciletest

// How a Store's owners are synced and when they are done.

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/jobstatus"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// SyncFunc returns a Driver.SyncFunc that syncs the owner as stored (no cache
// lag), in its shape, as a Driver syncs a Store's owners by default from its
// Cache: Reconciler.Sync for a Job-shaped one (r's StatusWriter must be the
// Store or the Cluster), Reconciler.SyncRoles for an owner of roles (with the
// Store's status subresource), Reconciler.SyncChildJobs for a group of child
// Jobs, listing pods from the Cluster's Cache. An owner the store does not hold
// is forgotten and not synced; one the Type's conversions refuse is skipped
// (Report.Skipped) with no error, as the production integration does after its
// Warning event.
func (s *Store[T]) SyncFunc(r *reconcile.Reconciler) func(ctx context.Context, namespace, name string) (bool, reconcile.Result, error) {
	return func(ctx context.Context, namespace, name string) (bool, reconcile.Result, error) {
		return s.sync(ctx, r, namespace, name, false)
	}
}

func (s *Store[T]) sync(ctx context.Context, r *reconcile.Reconciler, namespace, name string, cached bool) (bool, reconcile.Result, error) {
	obj, ok := s.cached(namespace, name)
	if !cached {
		var err error
		obj, err = s.Get(namespace, name)
		ok = err == nil
	}
	if !ok {
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
	case g != nil:
		res, err := r.SyncRoles(ctx, g, s.rolesPods, s.RolesWriter())
		return true, res, err
	}
	res, err := r.Sync(ctx, w, s.c.Cache().OwnerPods)
	return true, res, err
}

// ReadOwner is the reconcile.OwnerReader of the Store's owners (for
// Config.ReadOwner): the stored owner, not the cached one, as
// reconcile.Type.Owner presents it; nil, and no error, when there is none. An
// owner the conversions refuse is their error.
func (s *Store[T]) ReadOwner(ctx context.Context, namespace, name string) (*plan.Workload, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o, err := s.Get(namespace, name)
	if err != nil {
		return nil, nil
	}
	return s.typ.Owner(o)
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
func (s *Store[T]) DoneFunc() func(namespace, name string) (done, exists bool) { return s.done }

func (s *Store[T]) done(namespace, name string) (bool, bool) {
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
	if _, done := jobstatus.Finished(&w.Status); !done {
		return false, true
	}
	for _, p := range s.c.ListPods(namespace) {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == obj.GetUID() && s.kind.HasFinalizer(p) {
			return false, true
		}
	}
	return true, true
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
		if s.kind.HasFinalizer(p) || (!podutil.IsTerminal(p) && p.DeletionTimestamp == nil) {
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
