package sim

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// exitCodes are the codes the simulated kubelet fails containers with.
var exitCodes = []int32{1, 2, 42, 137}

// run plays the chaos phase, then finishes the Job calmly.
func (g *generator) run(w *world) {
	w.draw = g.drawFault
	for step := 0; step < g.chaosSteps && !w.stopped && !w.finished(); step++ {
		g.step(w)
	}
	w.draw = nil
	w.complete()
}

// drawFault decides the fault of one API call.
func (g *generator) drawFault(call reconciletest.Call, creates int) (FaultKind, bool) {
	rate := g.cfg.FaultRate
	if rate <= 0 {
		return "", false
	}
	if call.Op == reconciletest.OpCreatePod && creates > 1 && g.chance(rate/2) {
		return FaultPartialBatch, true
	}
	if !g.chance(rate) {
		return "", false
	}
	switch r := g.rng.Float64(); {
	case r < 0.3:
		return FaultServerError, true
	case r < 0.5:
		return FaultTooManyRequests, true
	case r < 0.7:
		return FaultConflict, true
	default:
		return FaultTimeout, true
	}
}

// step plays one chaotic step: maybe a spec change, the watch events, maybe a
// restart, a sync, the kubelet, the clock.
func (g *generator) step(w *world) {
	g.owners(w)
	job := w.model.job
	if w.model.deleted {
		job = nil
	}
	orig := int(deref32(g.job.Spec.Parallelism, 1))
	switch r := g.rng.Float64(); {
	case job == nil:
	case r < 0.02:
		if g.elastic {
			w.do(Action{Do: VerbSetElastic, N: 1 + g.rng.IntN(2*orig)})
		} else {
			w.do(Action{Do: VerbSetParallelism, N: g.rng.IntN(2*orig + 1)})
		}
	case r < 0.03:
		if job.Spec.Suspend != nil && *job.Spec.Suspend {
			w.do(Action{Do: VerbResume})
		} else {
			w.do(Action{Do: VerbSuspend})
		}
	}

	// Stale caches: bursts of late events.
	if g.delayLeft > 0 {
		g.delayLeft--
		if g.delayLeft == 0 {
			w.do(Action{Do: VerbLatency, N: 0})
		}
	} else if g.chance(0.03 * g.scale) {
		g.delayLeft = 2 + g.rng.IntN(10)
		w.do(Action{Do: VerbLatency, N: 500 * (1 + g.rng.IntN(8))})
	}

	if g.chance(0.01 * g.scale) {
		w.do(Action{Do: VerbRestart})
	}

	pending := w.cluster.Cache().Pending()
	switch r := g.rng.Float64(); {
	case r < 0.03*g.scale && hasDelete(pending):
		var dels []int
		for i, ev := range pending {
			if ev.Type == watch.Deleted && ev.Pod != nil {
				dels = append(dels, i)
			}
		}
		ev := pending[dels[g.rng.IntN(len(dels))]]
		if ps := w.model.pods[ev.Pod.UID]; ps != nil {
			w.do(Action{Do: VerbDropDelete, Pod: ps.ordinal})
		}
		w.do(Action{Do: VerbDeliverDue})
	case r < 0.13*g.scale && len(pending) > 1:
		for range 1 + g.rng.IntN(3) {
			pending = w.cluster.Cache().Pending()
			if len(pending) == 0 {
				break
			}
			i := g.rng.IntN(len(pending))
			ev := pending[i]
			a := Action{Do: VerbDeliverOne}
			if ev.Pod != nil {
				ps := w.model.pods[ev.Pod.UID]
				if ps == nil {
					continue
				}
				a.Pod = ps.ordinal
			}
			w.do(a)
		}
	default:
		w.do(Action{Do: VerbDeliverDue})
	}

	a := Action{Do: VerbSync}
	if g.chance(0.01 * g.scale) {
		a.Crash = ptr.To(g.rng.IntN(6))
	}
	a.DuringList = g.duringList(len(w.cluster.Cache().Pending()))
	w.do(a)
	if w.stopped {
		return
	}
	g.kubelet(w)
	switch r := g.rng.Float64(); {
	case r < 0.7:
		w.do(Action{Do: VerbAdvance, N: 1000})
	case r < 0.9:
		w.do(Action{Do: VerbAdvance, N: 250})
	default:
		w.do(Action{Do: VerbAdvance, N: 5000})
	}
}

// owners plays the draws of the extra source at the start of a step: the owner's
// deletion at its step, then garbage collector and orphan cleanup passes; orphans
// (pending, running, succeeded or failed, with an index that may be out of range or
// missing for an Indexed Job) and relabelled pods of the owner.
func (g *generator) owners(w *world) {
	step := g.steps
	g.steps++
	m := w.model
	if step == g.deleteStep {
		w.do(Action{Do: VerbDeleteOwner})
	}
	if m.deleted {
		if g.extra.Float64() < pCleanupStep {
			w.do(Action{Do: VerbCollectGarbage})
		}
		if g.extra.Float64() < pCleanupStep {
			w.do(Action{Do: VerbCleanOrphans})
		}
		return
	}
	if g.releases && g.live.Float64() < pReleaseActive {
		var candidates []int
		for _, ps := range m.order {
			if !ps.gone && !ps.released && ps.index >= 0 && isActive(ps.last) {
				candidates = append(candidates, ps.ordinal)
			}
		}
		if len(candidates) > 0 {
			w.do(Action{Do: VerbReleaseActive, Pod: candidates[g.live.IntN(len(candidates))]})
		}
	}
	if !g.orphans {
		return
	}
	if g.extra.Float64() < pOrphanStep {
		a := Action{Do: VerbOrphan, N: g.extra.IntN(4)}
		if m.indexed() && g.extra.Float64() < 0.9 {
			a.Index = ptr.To(g.extra.IntN(int(deref32(m.job.Spec.Completions, 1)) + 2))
		}
		w.do(a)
	}
	if g.extra.Float64() < pRelabelStep {
		var candidates []int
		for _, ps := range m.order {
			if !ps.gone && !ps.released && ps.last.DeletionTimestamp == nil {
				candidates = append(candidates, ps.ordinal)
			}
		}
		if len(candidates) > 0 {
			w.do(Action{Do: VerbRelabel, Pod: candidates[g.extra.IntN(len(candidates))]})
		}
	}
}

func hasDelete(pending []reconciletest.WatchEvent) bool {
	for _, ev := range pending {
		if ev.Type == watch.Deleted && ev.Pod != nil {
			return true
		}
	}
	return false
}

// kubelet moves each pod at random, in creation order. A pod being deleted only
// ever stops as Failed: its outcome is then the same whoever looks first.
func (g *generator) kubelet(w *world) {
	onFailure := g.job.Spec.Template.Spec.RestartPolicy == corev1.RestartPolicyOnFailure
	for _, ps := range slices.Clone(w.model.order) {
		if ps.gone || ps.released || w.stopped {
			continue
		}
		p := ps.last
		pod := ps.ordinal
		switch {
		case p.DeletionTimestamp != nil:
			if !isTerminal(p) && g.chance(g.pFinish) {
				w.do(Action{Do: VerbFinishTermination, Pod: pod})
			}
		case p.Status.Phase == corev1.PodPending:
			if g.chance(g.pRun) {
				w.do(Action{Do: VerbRun, Pod: pod})
			} else if g.chance(g.pDelete / 2) {
				w.do(Action{Do: VerbDelete, Pod: pod})
			}
		case p.Status.Phase == corev1.PodRunning:
			switch r := g.rng.Float64(); {
			case r < g.pSucceed:
				w.do(Action{Do: VerbSucceed, Pod: pod})
			case r < g.pSucceed+g.pFail:
				if onFailure && g.chance(0.8) {
					w.do(Action{Do: VerbRestartContainer, Pod: pod})
				} else {
					w.do(Action{Do: VerbFail, Pod: pod, N: int(exitCodes[g.rng.IntN(len(exitCodes))])})
				}
			case r < g.pSucceed+g.pFail+g.pEvict:
				w.do(Action{Do: VerbEvict, Pod: pod})
			case r < g.pSucceed+g.pFail+g.pEvict+g.pDelete:
				w.do(Action{Do: VerbDelete, Pod: pod})
			case r < g.pSucceed+g.pFail+g.pEvict+g.pDelete+g.pReady:
				w.do(Action{Do: VerbReady, Pod: pod})
			}
		}
	}
}

// pDuringList is the chance, scaled like the other faults, that a sync with watch
// events queued handles some of them in the middle of its pod list.
const pDuringList = 0.25

// duringList draws, for a sync with that many events queued, how many of them it
// handles in the middle of its pod list (Action.DuringList): none, most often; a
// few; or, one time in four, every one.
func (g *generator) duringList(queued int) int {
	if queued == 0 || g.cfg.FaultRate <= 0 || g.list.Float64() >= pDuringList*g.scale {
		return 0
	}
	if g.list.IntN(4) == 0 {
		return -1
	}
	return 1 + g.list.IntN(queued)
}
