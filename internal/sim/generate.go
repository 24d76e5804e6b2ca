package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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

// generator draws a run from one seed. Every random choice comes from rng, in a
// fixed order, so a seed always gives the same run. newGenerator draws what the run
// is (the owner, the controller's settings, the kubelet's temper); run plays it step
// by step.
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
