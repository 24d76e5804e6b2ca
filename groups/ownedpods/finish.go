package ownedpods

// The end of a group: whether it is finished, whether anything of it is left
// to stop or count, and how its roles' pods are stopped.

import (
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/plan"
)

// finished reports whether the group has finished (Completed or Failed).
func (s *sync) finished() bool {
	return s.TerminalState != "" || s.State.Finished() != nil
}

// tracking reports whether anything is left to count or stop: a pod of the
// owner with the tracking finalizer, one still running (its finalizer removed
// by a stop whose deletion did not happen), or a role status with uncounted
// pods.
func (s *sync) tracking() bool {
	for _, p := range s.in.Pods {
		if p == nil || !s.in.Owner.IsControlledBy(p, string(s.in.Workload.UID)) {
			continue
		}
		running := p.DeletionTimestamp == nil && !podutil.IsTerminal(p)
		if running || s.in.Owner.HasFinalizer(p) {
			return true
		}
	}
	for i := range s.status {
		if uncounted(&s.status[i].Job) {
			return true
		}
	}
	return false
}

// shown reports whether every role's stored status shows what is left of its
// pods once none runs (tracking is false): none active or ready, and as many
// terminating as are being deleted. A finished group stops its roles in the
// write that finishes it, and their pods go after it: until a write shows them
// gone, the group is synced, or its status would say they run forever.
func (s *sync) shown() bool {
	for i := range s.status {
		j := &s.status[i].Job
		var terminating int32
		for _, p := range s.pods[i] {
			if p.DeletionTimestamp != nil && !podutil.IsTerminal(p) {
				terminating++
			}
		}
		if j.Active != 0 || ptr.Deref(j.Ready, 0) != 0 || ptr.Deref(j.Terminating, 0) != terminating {
			return false
		}
	}
	return true
}

// ownFailures counts the pods that base records as failed and old did not,
// that failed by themselves: in phase Failed and not being deleted. base is the
// status with this sync's pods recorded, before any is counted, so a pod
// recorded and counted in one write is seen; a pod enters the ledger once.
func ownFailures(old, base *batchv1.JobStatus, pods []*corev1.Pod) int32 {
	if base.UncountedTerminatedPods == nil || len(base.UncountedTerminatedPods.Failed) == 0 {
		return 0
	}
	var was sets.Set[types.UID]
	if u := old.UncountedTerminatedPods; u != nil {
		was = sets.New(u.Failed...)
	}
	recorded := sets.New[types.UID]()
	for _, uid := range base.UncountedTerminatedPods.Failed {
		if !was.Has(uid) {
			recorded.Insert(uid)
		}
	}
	var n int32
	for _, p := range pods {
		if recorded.Has(p.UID) && p.Status.Phase == corev1.PodFailed && p.DeletionTimestamp == nil {
			recorded.Delete(p.UID) // a pod listed twice counts once
			n++
		}
	}
	return n
}

func uncounted(st *batchv1.JobStatus) bool {
	u := st.UncountedTerminatedPods
	return u != nil && len(u.Succeeded)+len(u.Failed) > 0
}

// stops counts the pods stopAll stops, and the ready ones among them.
type stops struct{ pods, ready int32 }

// stopAll makes the plan of a stopping role (planned as being deleted, which
// deletes nothing) delete its pods that still run, their finalizer removed first
// so that they are not counted, as a suspension would; a pod the plan deletes
// already (the role is failing on its own and counts them) is left to it. The
// plan's uncounted finalizer removal of such a pod gives way to the deletion's,
// so that each pod gets one patch. Nothing is deleted while expectations are
// unsatisfied, as in plan. It MUTATES p and returns what it stopped.
func stopAll(p *plan.Plan, pods []*corev1.Pod, satisfied bool) stops {
	var out stops
	if !satisfied {
		return out
	}
	planned := make(map[*corev1.Pod]bool, len(p.Delete))
	for _, d := range p.Delete {
		planned[d.Pod] = true
	}
	stop := map[*corev1.Pod]bool{}
	for _, pod := range pods {
		if planned[pod] || pod.DeletionTimestamp != nil || podutil.IsTerminal(pod) {
			continue
		}
		stop[pod] = true
		p.Delete = append(p.Delete, plan.Deletion{Pod: pod, RemoveFinalizerFirst: true, Reason: "the role stops"})
		out.pods++
		if podutil.IsReady(pod) {
			out.ready++
		}
	}
	if len(stop) > 0 {
		p.RemoveFinalizers = slices.DeleteFunc(p.RemoveFinalizers, func(a plan.PodAction) bool { return stop[a.Pod] })
	}
	return out
}
