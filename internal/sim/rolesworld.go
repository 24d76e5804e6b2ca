package sim

import (
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// rolesWorld runs one owner of two roles against an in-memory cluster.
type rolesWorld struct {
	rng       *rand.Rand
	rate      float64
	ns, name  string
	uid       types.UID
	describe  string
	failGroup bool // the workers have a FailJobSet rule on exitFailGroup
	// agents, for an owner restarted in place, play its pods' agents.
	agents *inPlaceAgents
	// scale is the size changes made on the running owner.
	scale *rolesScale

	cluster *reconciletest.Cluster
	owners  *reconciletest.Store[*reconciletest.Run]
	driver  *reconciletest.Driver
	model   *rolesModel

	inSync, drawFaults, faulted bool
	calls, crashAfter           int

	faults     Counts
	violations []Violation
	syncs      int
	step       int
	stopped    bool
}

// chaosStep is one step of the chaotic phase: the watch events (some late, one
// out of order, a delete event lost), maybe a controller restart, a sync with
// faults, the kubelet at random, and a second of the clock.
func (rw *rolesWorld) chaosStep() {
	rw.step++
	r := rw.rng
	rw.scale.resize(rw.step, rw.owners, rw.ns, rw.name)
	rw.deliver(r.Float64() < rw.rate*3)
	if r.Float64() < rw.rate/12 {
		rw.faults[FaultRestart]++
		rw.restart()
	}
	rw.sync(true)
	if rw.stopped {
		return
	}
	rw.chaosKubelet()
	if rw.agents != nil {
		rw.agents.step(0.6)
	}
	rw.cluster.Clock().Step(time.Second)
}

// deliver delivers the watch events: all of them, or when lagging a few, maybe
// one out of order first and maybe a delete event lost.
func (rw *rolesWorld) deliver(lag bool) {
	cache := rw.cluster.Cache()
	if !lag {
		cache.DeliverAll()
		return
	}
	r := rw.rng
	rw.faults[FaultDelay]++
	if n := len(cache.Pending()); n > 1 && r.IntN(2) == 0 {
		rw.faults[FaultReorder]++
		_ = cache.DeliverAt(r.IntN(n))
	}
	for i, ev := range cache.Pending() {
		if ev.Type == watch.Deleted && r.IntN(4) == 0 {
			rw.faults[FaultLostDelete]++
			_ = cache.DropAt(i)
			break
		}
	}
	if n := len(cache.Pending()); n > 0 {
		cache.DeliverN(r.IntN(n))
	}
}

// chaosKubelet moves each pod of the owner at random: pending pods run, running
// ones become ready, succeed, fail with an exit code or are evicted, and
// terminating ones finish.
func (rw *rolesWorld) chaosKubelet() {
	r, k := rw.rng, rw.cluster.Kubelet()
	for _, p := range rw.ownerPods() {
		worker := p.Labels[plaingroup.LabelRoleName] == "worker"
		x := r.Float64()
		if rw.agents != nil {
			rw.agents.kubelet(p, x)
			continue
		}
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
			} else if x < 0.53 {
				_ = k.Fail(p.Namespace, p.Name, 1)
			}
		case worker && x < 0.04:
			_ = k.Fail(p.Namespace, p.Name, 1)
		case worker && x < 0.05 && rw.failGroup:
			_ = k.Fail(p.Namespace, p.Name, exitFailGroup)
		case x < 0.06:
			_ = k.Evict(p.Namespace, p.Name)
		case !worker && x < 0.09:
			_ = k.Fail(p.Namespace, p.Name, 1)
		case x < 0.13:
			_ = k.Succeed(p.Namespace, p.Name)
		}
	}
}

// complete runs calm steps (no fault, every event delivered, the pods run and
// made ready, the launcher succeeding) until the owner is done, then checks the
// end of the run.
func (rw *rolesWorld) complete() {
	for calm := range 150 {
		if rw.stopped {
			return
		}
		if rw.model.done() {
			break
		}
		rw.step++
		rw.cluster.Cache().DeliverAll()
		rw.sync(false)
		k := rw.cluster.Kubelet()
		for _, p := range rw.ownerPods() {
			switch {
			case isTerminal(p):
			case p.DeletionTimestamp != nil:
				_ = k.FinishTermination(p.Namespace, p.Name)
			case p.Status.Phase == corev1.PodPending:
				_ = k.Run(p.Namespace, p.Name)
			case !podReady(p):
				_ = k.SetReady(p.Namespace, p.Name, true)
			case rw.agents != nil && !rw.agents.working(p):
				// Restarted in place, a pod finishes its work only once its
				// barrier lifted (never otherwise: no index fails for good
				// under the strategy, so the barrier must lift).
			case p.Labels[plaingroup.LabelRoleName] == "launcher" || calm >= calmWorkers:
				_ = k.Succeed(p.Namespace, p.Name)
			}
		}
		if rw.agents != nil && !rw.stopped {
			rw.agents.step(1)
		}
		rw.cluster.Clock().Step(time.Second)
	}
	if !rw.stopped {
		rw.model.checkEnd()
	}
}

// calmWorkers is the calm step from which the workers succeed too: a launcher
// that waits for every worker to be ready waits for good when an index failed
// for good, until the workers end and the role fails.
const calmWorkers = 30

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
