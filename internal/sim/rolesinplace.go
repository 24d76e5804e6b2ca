package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// The invariants of a group restarted in place.
const (
	// InvInPlaceBarrier: a pod worked on one in-place restart attempt while
	// another worked on another: a pod of an old attempt ran beside the new
	// one past the barrier.
	InvInPlaceBarrier Invariant = "in-place-barrier"
	// InvInPlaceAttempts: the group's in-place attempts went back, the current
	// one moved by more than one in a write (a restart counted twice), or the
	// previous one passed the current one.
	InvInPlaceAttempts Invariant = "in-place-attempts"
)

// inPlaceStream is the PCG stream that decides whether a roles seed runs its
// owner restarted in place: a seed draws the same owner and run as before
// otherwise.
const inPlaceStream = 0x696e706c616365

// inPlaceAgents play the in-place restart agent of every pod of an owner
// restarted in place, as JobSet's does: a container that (re)starts reports
// the attempt after the group's current one; a pod whose attempt is at most
// the group's previous one restarts its containers (the agent exits, the
// kubelet's restart rule restarts the pod in place); a pod on the current
// attempt runs its worker (the barrier lifts). The agents read the owner's
// status as stored; their writes (the annotation) take no fault.
type inPlaceAgents struct {
	rng     *rand.Rand
	cluster *reconciletest.Cluster
	// pods lists the group's pods; attempts reads its status's attempts as
	// stored (ok false when it cannot be read); violate reports a broken
	// invariant.
	pods     func() []*corev1.Pod
	attempts func() (a plaingroup.InPlaceAttempts, ok bool)
	violate  func(inv Invariant, format string, args ...any)
	// leaving, when set, says a pod is on its way out of the group's size (a
	// child scaled away, an index resized away): it holds no barrier, and
	// its worker may run on beside the new attempt until it is stopped.
	leaving func(p *corev1.Pod) bool
	state   map[types.UID]*agentState
	last    plaingroup.InPlaceAttempts // the status's attempts as last checked
}

// agentState is one pod's agent: the container run it reported for (its
// restart count), the attempt it reported, and whether its worker runs.
type agentState struct {
	restarts int32
	attempt  int32
	working  bool
}

// makeInPlace turns a drawn owner into one restarted in place, with the
// strategy's template rules: no backoff limit, a pod replaced once it has
// failed, containers restarted in place (OnFailure, which a pod failure
// policy does not allow: the FailJobSet rule goes).
func (rw *rolesWorld) makeInPlace(w *ownedpods.Workload, r *rand.Rand) {
	rw.agents = &inPlaceAgents{rng: rw.rng, pods: rw.ownerPods, violate: rw.violate,
		state: map[types.UID]*agentState{},
		attempts: func() (plaingroup.InPlaceAttempts, bool) {
			run, err := rw.owners.Get(rw.ns, rw.name)
			if err != nil {
				return plaingroup.InPlaceAttempts{}, false
			}
			return run.Status.InPlace, true
		}}
	w.FailurePolicy.RestartStrategy = plaingroup.InPlaceRestart
	w.FailurePolicy.MaxRestarts = int32(2 + r.IntN(4))
	w.FailurePolicy.Rules = nil
	rw.failGroup = false
	for i := range w.Roles {
		s := &w.Roles[i].Spec
		s.BackoffLimit, s.BackoffLimitPerIndex, s.PodFailurePolicy = ptr.To[int32](math.MaxInt32), nil, nil
		s.PodReplacementPolicy = ptr.To(batchv1.Failed)
		s.Template = rolesTemplate()
		s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	}
	rw.describe = fmt.Sprintf("roles launcher+worker(Indexed %d) maxRestarts=%d InPlaceRestart",
		*w.Roles[0].Spec.Completions, w.FailurePolicy.MaxRestarts)
}

// inPlaceSeed returns the random source of the in-place draws of seed when
// its roles owner runs restarted in place (one seed in three), nil otherwise.
func inPlaceSeed(seed uint64) *rand.Rand {
	r := rand.New(rand.NewPCG(seed, inPlaceStream))
	if r.IntN(3) != 0 {
		return nil
	}
	return r
}

// kubelet moves one pod of an owner restarted in place at random (x): pending
// pods run, running ones become ready; a ready pod's worker fails now and
// then (its containers restart in place), or the pod fails as a whole (its
// node lost) or is evicted, and a worker whose barrier lifted succeeds now and
// then (its index done, even while the others restart in place: it holds
// their barrier no more); pods being deleted finish.
func (a *inPlaceAgents) kubelet(p *corev1.Pod, x float64) {
	k := a.cluster.Kubelet()
	switch {
	case isTerminal(p):
	case p.DeletionTimestamp != nil:
		if x < 0.5 {
			_ = k.FinishTermination(p.Namespace, p.Name)
		}
	case p.Status.Phase == corev1.PodPending:
		if x < 0.4 {
			_ = k.Run(p.Namespace, p.Name)
		}
	case !podReady(p):
		if x < 0.5 {
			_ = k.SetReady(p.Namespace, p.Name, true)
		}
	case x < 0.015:
		a.crash(p)
	case x < 0.02:
		_ = k.Fail(p.Namespace, p.Name, 137)
	case x < 0.025:
		_ = k.Evict(p.Namespace, p.Name)
	case x < 0.035 && p.Labels[plaingroup.LabelRoleName] == "worker" && a.working(p):
		_ = k.Succeed(p.Namespace, p.Name)
	}
}

// working reports whether p's worker runs: its barrier lifted.
func (a *inPlaceAgents) working(p *corev1.Pod) bool {
	s := a.state[p.UID]
	return s != nil && s.working && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount == s.restarts
}

// step runs each agent once, each at the chance given (its lag), then checks
// the barrier.
func (a *inPlaceAgents) step(chance float64) {
	st, ok := a.attempts()
	if !ok {
		return
	}
	prev, cur := st.Previous, st.Current
	k := a.cluster.Kubelet()
	pods := a.pods()
	for _, p := range pods {
		s := a.state[p.UID]
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
			if s != nil {
				s.working = false // a pod stopping or stopped runs no worker
			}
			continue
		}
		restarts := p.Status.ContainerStatuses[0].RestartCount
		if s != nil && s.restarts != restarts {
			s = nil // the agent restarted with its container: its state is gone
		}
		if chance < 1 && a.rng.Float64() >= chance {
			if s == nil {
				delete(a.state, p.UID)
			}
			continue
		}
		switch {
		case s == nil:
			attempt := int32(0)
			if cur != nil {
				attempt = *cur + 1
			}
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, plaingroup.AnnotationInPlaceRestartAttempt, strconv.Itoa(int(attempt)))
			if _, err := a.cluster.PatchPodAs(p.Namespace, p.Name, []byte(patch)); err == nil {
				a.state[p.UID] = &agentState{restarts: restarts, attempt: attempt}
			} else {
				delete(a.state, p.UID)
			}
		case prev != nil && s.attempt <= *prev:
			s.working = false
			_ = k.RestartContainer(p.Namespace, p.Name)
		case cur != nil && s.attempt == *cur:
			s.working = true
		}
	}
	a.checkBarrier(pods)
}

// crash is a working worker's process exiting non-zero: the kubelet restarts
// the pod's containers in place.
func (a *inPlaceAgents) crash(p *corev1.Pod) {
	if s := a.state[p.UID]; s != nil {
		s.working = false
	}
	_ = a.cluster.Kubelet().RestartContainer(p.Namespace, p.Name)
}

// checkBarrier checks that every pod whose worker runs is on one attempt.
func (a *inPlaceAgents) checkBarrier(pods []*corev1.Pod) {
	var first *corev1.Pod
	var at int32
	for _, p := range pods {
		s := a.state[p.UID]
		if s == nil || !s.working || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning ||
			len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].RestartCount != s.restarts ||
			(a.leaving != nil && a.leaving(p)) {
			continue
		}
		switch {
		case first == nil:
			first, at = p, s.attempt
		case s.attempt != at:
			a.violate(InvInPlaceBarrier, "pod %s works on attempt %d beside pod %s on attempt %d", p.Name, s.attempt, first.Name, at)
			return
		}
	}
}

// checkStatus checks the in-place attempts of the status after a sync:
// neither goes back, the current one moves by one at most (every pod reports
// at most the attempt after it), and the previous one stays below or at it.
func (a *inPlaceAgents) checkStatus(st plaingroup.InPlaceAttempts) {
	old := a.last
	a.last = st
	back := func(o, n *int32) bool { return o != nil && (n == nil || *n < *o) }
	switch {
	case back(old.Previous, st.Previous) || back(old.Current, st.Current):
		a.violate(InvInPlaceAttempts, "the attempts went back: %s → %s", attempts(old), attempts(st))
	case st.Current != nil && *st.Current > ptr.Deref(old.Current, -1)+1:
		a.violate(InvInPlaceAttempts, "the current attempt moved by more than one: %s → %s", attempts(old), attempts(st))
	case st.Previous != nil && (st.Current == nil || *st.Previous > *st.Current):
		a.violate(InvInPlaceAttempts, "the previous attempt passed the current one: %s", attempts(st))
	}
}

func attempts(a plaingroup.InPlaceAttempts) string {
	s := func(p *int32) string {
		if p == nil {
			return "unset"
		}
		return strconv.Itoa(int(*p))
	}
	return "previous " + s(a.Previous) + ", current " + s(a.Current)
}
