package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// inPlaceGroupSeed returns the random source of the in-place draws of a
// child-Jobs seed when its group runs restarted in place (one seed in three),
// nil otherwise: a stream of its own, so that the other seeds draw as before.
func inPlaceGroupSeed(seed uint64) *rand.Rand {
	r := rand.New(rand.NewPCG(seed, inPlaceStream+1))
	if r.IntN(3) != 0 {
		return nil
	}
	return r
}

// inPlaceGroup turns a drawn group into one restarted in place, with the
// strategy's template rules, and returns its agents: they read the group's
// status and its pods in the cluster c.
func (w *childJobsWorld) inPlaceGroup(g *simGroup, r *rand.Rand, c *reconciletest.Cluster, store *reconciletest.Store[*simGroup]) *inPlaceAgents {
	g.Spec.FailurePolicy.RestartStrategy = plaingroup.InPlaceRestart
	w.maxRest = int32(2 + r.IntN(4))
	g.Spec.FailurePolicy.MaxRestarts = w.maxRest
	for i := range g.Templates {
		s := &g.Templates[i].Spec
		s.BackoffLimit, s.PodReplacementPolicy = ptr.To[int32](math.MaxInt32), ptr.To(batchv1.Failed)
		s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	}
	return &inPlaceAgents{rng: r, cluster: c, violate: w.violate, state: map[types.UID]*agentState{},
		pods: func() []*corev1.Pod {
			var out []*corev1.Pod
			for _, p := range c.ListPods(g.Namespace) {
				if p.Labels[plaingroup.LabelJobSetName] == g.Name {
					out = append(out, p)
				}
			}
			return out
		},
		attempts: func() (plaingroup.InPlaceAttempts, bool) {
			stored, err := store.Get(g.Namespace, g.Name)
			if err != nil {
				return plaingroup.InPlaceAttempts{}, false
			}
			return plaingroup.InPlaceAttempts{Previous: stored.Status.PreviousInPlaceRestartAttempt, Current: stored.Status.CurrentInPlaceRestartAttempt}, true
		}}
}

// inPlaceKubelet is the kubelet of a group restarted in place, for one pod:
// pods run and become ready; in the chaotic phase a worker's process fails
// now and then (its containers restart in place), a pod fails as a whole (the
// Job replaces it), or a pod whose worker runs succeeds (its index is done,
// even while the others restart in place); in the calm phase a pod succeeds
// once its worker runs (its barrier lifted).
func (a *inPlaceAgents) inPlaceKubelet(k *reconciletest.Kubelet, p *corev1.Pod, chaos bool) error {
	switch {
	case p.DeletionTimestamp != nil:
		return nil
	case p.Status.Phase == corev1.PodPending:
		if err := k.Run(p.Namespace, p.Name); err != nil {
			return err
		}
		return k.SetReady(p.Namespace, p.Name, true)
	case p.Status.Phase != corev1.PodRunning:
		return nil
	case !chaos:
		if a.working(p) {
			return k.Succeed(p.Namespace, p.Name)
		}
		return nil
	}
	switch a.rng.IntN(40) {
	case 0:
		a.crash(p)
	case 1:
		return k.Fail(p.Namespace, p.Name, 137)
	case 2:
		if a.working(p) {
			return k.Succeed(p.Namespace, p.Name)
		}
	}
	return nil
}

// describeInPlace is the group's description when restarted in place.
func describeInPlace(g *simGroup, workers int32) string {
	return fmt.Sprintf("group leader+workers(%d replicas of Indexed %d) maxRestarts=%d InPlaceRestart",
		g.Spec.Roles[1].Replicas, workers, g.Spec.FailurePolicy.MaxRestarts)
}
