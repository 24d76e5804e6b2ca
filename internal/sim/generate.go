package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/podfailurepolicy"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
	"github.com/jobkit/jobkit/successpolicy"
)

// Namespace and JobName name the simulated Job.
const (
	Namespace = "sim"
	JobName   = "job"
)

// exitCodes are the codes the simulated kubelet fails containers with.
var exitCodes = []int32{1, 2, 42, 137}

// generator draws a run from one seed. Every random choice comes from rng, in a
// fixed order, so a seed always gives the same run.
type generator struct {
	cfg   Config
	rng   *rand.Rand
	scale float64 // FaultRate relative to 10%: scales the faults that are not call errors
	job   *batchv1.Job
	ctl   ControllerSettings

	// The kubelet's temper for this run: probabilities per pod and step.
	pRun, pReady, pSucceed, pFail, pEvict, pDelete, pFinish float64

	chaosSteps int
	delayLeft  int
	elastic    bool

	// Owner deletion and orphans draw from their own source, so that they leave
	// the draws of rng, and thus every run without them, as they were.
	extra      *rand.Rand
	steps      int  // chaotic steps played
	deleteStep int  // the step that deletes the owner; -1: none
	orphans    bool // orphans and relabelled pods (Jobs only: a Task has no selector)

	// Releases of active pods of an Indexed Job draw from a third source, so that
	// the runs with orphans stay as they were too.
	live     *rand.Rand
	releases bool

	// Events handled in the middle of a sync's pod list draw from a fourth source,
	// so that the runs without them stay as they were.
	list *rand.Rand
}

func newGenerator(cfg Config) *generator {
	if cfg.MaxPods <= 0 {
		cfg.MaxPods = DefaultMaxPods
	}
	g := &generator{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x73696d756c61746f))}
	g.scale = cfg.FaultRate / 0.1
	g.job = g.genJob()
	g.ctl = g.genController()
	g.genKubelet()
	size := int(max(deref32(g.job.Spec.Completions, 1), deref32(g.job.Spec.Parallelism, 1)))
	g.chaosSteps = 10 + g.rng.IntN(40) + size/2
	g.extra = rand.New(rand.NewPCG(cfg.Seed, 0x6f727068616e6167))
	g.deleteStep = -1
	if g.extra.Float64() < pDeleteOwner {
		g.deleteStep = g.extra.IntN(g.chaosSteps)
	}
	// Both may come in one seed: the controller reads its owner from the cluster
	// before it adopts (reconcile.Config.ReadOwner), so a sync from a cache that has
	// not seen the deletion adopts nothing for the deleted Job.
	g.orphans = g.extra.Float64() < pOrphans && (cfg.Owner == owner.Kind{} || cfg.Owner == owner.BatchJob)
	g.live = rand.New(rand.NewPCG(cfg.Seed, 0x72656c6561736573))
	g.releases = g.live.Float64() < pReleases && (cfg.Owner == owner.Kind{} || cfg.Owner == owner.BatchJob) &&
		g.job.Spec.CompletionMode != nil && *g.job.Spec.CompletionMode == batchv1.IndexedCompletion
	g.list = rand.New(rand.NewPCG(cfg.Seed, 0x6475726c69737421))
	return g
}

// The draws of owner deletion and orphans: the share of seeds that delete the owner
// during the chaotic phase, the share of Job seeds with orphans and relabelled pods,
// and in those the chance per step of an orphan, of a relabelled pod, and (after a
// deletion) of a garbage collector pass and of an orphan cleanup pass.
const (
	pDeleteOwner = 0.04
	pOrphans     = 0.12
	pOrphanStep  = 0.08
	pRelabelStep = 0.04
	pCleanupStep = 0.3
	// The share of Indexed Job seeds that release active pods, and the chance per
	// step of a release in those.
	pReleases      = 0.4
	pReleaseActive = 0.1
)

func (g *generator) trace() *Trace {
	tr := &Trace{Seed: g.cfg.Seed, Job: g.job, Controller: g.ctl}
	if k := g.cfg.Owner; k != (owner.Kind{}) && k != owner.BatchJob {
		tr.Owner = &k
	}
	return tr
}

func (g *generator) chance(p float64) bool { return g.rng.Float64() < p }

// size draws a Job size: 85% below 20, 12% up to 100, 3% up to MaxPods.
func (g *generator) size() int {
	hi := g.cfg.MaxPods
	switch r := g.rng.Float64(); {
	case r < 0.85 || hi < 20:
		return 1 + g.rng.IntN(min(19, hi))
	case r < 0.97 || hi < 100:
		return 20 + g.rng.IntN(min(81, hi-19))
	default:
		return 100 + g.rng.IntN(hi-99)
	}
}

// genJob draws the Job: its mode, size, limits and policies.
func (g *generator) genJob() *batchv1.Job {
	n := g.size()
	par := n
	switch r := g.rng.Float64(); {
	case r < 0.5:
		par = 1 + g.rng.IntN(n)
	case r < 0.55:
		par = n + 1 + g.rng.IntN(3)
	}
	j := reconciletest.NewJob(Namespace, JobName, int32(n), int32(par))
	j.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
	s := &j.Spec
	indexed := g.chance(0.5)
	if indexed {
		s.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	} else if g.chance(0.1) {
		s.Completions = nil // a work queue: done when one pod succeeded and none is active
	}

	switch r := g.rng.Float64(); {
	case r < 0.4:
		s.BackoffLimit = ptr.To[int32](1000)
	case r < 0.8:
		s.BackoffLimit = ptr.To(int32(g.rng.IntN(7)))
	}
	if indexed && g.chance(0.3) {
		s.BackoffLimitPerIndex = ptr.To(int32(g.rng.IntN(4)))
		if s.BackoffLimit != nil && g.chance(0.7) {
			s.BackoffLimit = nil // defaulted to MaxInt32 with backoffLimitPerIndex
		}
		if g.chance(0.5) {
			s.MaxFailedIndexes = ptr.To(int32(g.rng.IntN(n + 1)))
		}
	}
	if g.chance(0.25) {
		s.PodFailurePolicy = g.genFailurePolicy(s.BackoffLimitPerIndex != nil)
		if g.chance(0.5) {
			s.PodReplacementPolicy = ptr.To(batchv1.Failed)
		}
	} else {
		switch r := g.rng.Float64(); {
		case r < 0.3:
			s.PodReplacementPolicy = ptr.To(batchv1.Failed)
		case r < 0.6:
			s.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}
		if g.chance(0.1) {
			s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}
	}
	if indexed && g.chance(0.15) {
		s.SuccessPolicy = g.genSuccessPolicy(n)
	}
	if indexed && s.BackoffLimitPerIndex == nil && s.SuccessPolicy == nil && g.chance(0.15) {
		s.Parallelism = ptr.To(int32(n)) // elastic: completions change with parallelism
		g.elastic = true
	}
	if g.chance(0.1) {
		s.ActiveDeadlineSeconds = ptr.To(int64(20 + g.rng.IntN(280)))
	}
	if g.chance(0.05) {
		s.Suspend = ptr.To(true)
	}
	// The generator writes valid specs by construction; the library's validators
	// double-check it.
	if errs := podfailurepolicy.Validate(s, nil); len(errs) > 0 {
		panic(fmt.Sprintf("sim: generated an invalid podFailurePolicy: %v", errs))
	}
	if errs := successpolicy.Validate(s, nil); len(errs) > 0 {
		panic(fmt.Sprintf("sim: generated an invalid successPolicy: %v", errs))
	}
	return j
}

func (g *generator) genFailurePolicy(perIndex bool) *batchv1.PodFailurePolicy {
	actions := []batchv1.PodFailurePolicyAction{
		batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailJob,
	}
	if perIndex {
		actions = append(actions, batchv1.PodFailurePolicyActionFailIndex)
	}
	p := &batchv1.PodFailurePolicy{}
	for range 1 + g.rng.IntN(3) {
		rule := batchv1.PodFailurePolicyRule{Action: actions[g.rng.IntN(len(actions))]}
		if g.chance(0.3) {
			rule.OnPodConditions = []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}
		} else {
			var values []int32
			for _, c := range exitCodes {
				if g.chance(0.4) {
					values = append(values, c)
				}
			}
			if len(values) == 0 {
				values = []int32{exitCodes[g.rng.IntN(len(exitCodes))]}
			}
			slices.Sort(values)
			op := batchv1.PodFailurePolicyOnExitCodesOpIn
			if g.chance(0.3) {
				op = batchv1.PodFailurePolicyOnExitCodesOpNotIn
			}
			rule.OnExitCodes = &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: values}
		}
		p.Rules = append(p.Rules, rule)
	}
	return p
}

func (g *generator) genSuccessPolicy(n int) *batchv1.SuccessPolicy {
	p := &batchv1.SuccessPolicy{}
	for range 1 + g.rng.IntN(2) {
		var rule batchv1.SuccessPolicyRule
		lo := g.rng.IntN(n)
		hi := lo + g.rng.IntN(n-lo)
		span := hi - lo + 1
		switch g.rng.IntN(3) {
		case 0:
			rule.SucceededCount = ptr.To(int32(1 + g.rng.IntN(n)))
		case 1:
			rule.SucceededIndexes = ptr.To(indexRange(lo, hi))
		default:
			rule.SucceededIndexes = ptr.To(indexRange(lo, hi))
			rule.SucceededCount = ptr.To(int32(1 + g.rng.IntN(span)))
		}
		p.Rules = append(p.Rules, rule)
	}
	return p
}

func indexRange(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

func (g *generator) genController() ControllerSettings {
	var s ControllerSettings
	if g.chance(0.4) {
		s.MaxCreatesPerSync = 1 + g.rng.IntN(8)
	}
	if g.chance(0.4) {
		s.MaxUncounted = 1 + g.rng.IntN(6)
	}
	return s
}

func (g *generator) genKubelet() {
	g.pRun = 0.3 + 0.7*g.rng.Float64()
	g.pReady = 0.5 * g.rng.Float64()
	g.pSucceed = 0.05 + 0.45*g.rng.Float64()
	g.pFail = 0.3 * g.rng.Float64() * g.rng.Float64()
	g.pEvict = 0.05 * g.rng.Float64()
	g.pDelete = 0.04 * g.rng.Float64()
	g.pFinish = 0.2 + 0.8*g.rng.Float64()
}

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
