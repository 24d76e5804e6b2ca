package sim

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
)

// DefaultMaxPods is the largest completions or parallelism Run generates when
// Config.MaxPods is zero.
const DefaultMaxPods = 300

// Config configures a generated run. The zero value is a fault-free run of seed 0.
type Config struct {
	// Seed determines the whole run: the Job, the kubelet, the faults, the timing.
	Seed uint64
	// FaultRate is the probability that an API call of the controller fails (0.1
	// means 10%). It also scales the other faults: restarts, crashes, stale and
	// reordered events, lost delete events. Zero means no fault at all.
	FaultRate float64
	// MaxPods caps completions and parallelism; zero means DefaultMaxPods. Sizes are
	// skewed small: most Jobs have fewer than 20 pods.
	MaxPods int
	// Owner, when set and not owner.BatchJob, runs the Job as a custom resource of
	// that kind with its own finalizer (Trace.Owner; TaskKind is one). It draws
	// nothing: a seed makes the same run, call for call, with either owner.
	Owner owner.Kind
}

// TaskKind is the custom owner kind of the simulation's tests: a
// reconciletest.Task of group test.jobkit.dev tracked by
// test.jobkit.dev/task-tracking.
var TaskKind = owner.Kind{Group: "test.jobkit.dev", Version: "v1", Kind: "Task", Finalizer: "test.jobkit.dev/task-tracking"}

// Result is the outcome of a run.
type Result struct {
	// Trace is the run as executed, replayable with Replay.
	Trace *Trace
	// Violations holds the first broken invariant, if any: a run stops there.
	Violations []Violation
	// Faults counts the faults injected, by kind.
	Faults Counts
	// Syncs is the number of syncs; Pods the number of pods created.
	Syncs, Pods int
	// Finished says whether the Job reached a terminal condition with every pod
	// counted; Condition is that condition (Complete or Failed, or empty); Status
	// is the Job's final status.
	Finished  bool
	Condition batchv1.JobConditionType
	Status    batchv1.JobStatus
	// OwnerDeleted says whether the owner was deleted during the run (Finished then
	// means that its pods are all gone); Orphans counts the orphan pods created,
	// Adopted the pods the controller adopted and Released those it released.
	OwnerDeleted               bool
	Orphans, Adopted, Released int
}

// OK reports whether no invariant was broken.
func (r *Result) OK() bool { return len(r.Violations) == 0 }

// Summary renders the result on one line.
func (r *Result) Summary() string {
	mode := "NonIndexed"
	if m := r.Trace.Job.Spec.CompletionMode; m != nil && *m == batchv1.IndexedCompletion {
		mode = "Indexed"
	}
	if r.Trace.Owner != nil {
		mode += " " + r.Trace.Owner.String()
	}
	s := fmt.Sprintf("%s completions=%s parallelism=%d: %d syncs, %d pods, faults %s; %s",
		mode, ptrText(r.Trace.Job.Spec.Completions), deref32(r.Trace.Job.Spec.Parallelism, 1),
		r.Syncs, r.Pods, r.Faults, statusText(&r.Status))
	if r.OwnerDeleted {
		s += "; owner deleted"
	}
	if r.Orphans+r.Adopted+r.Released > 0 {
		s += fmt.Sprintf("; orphans %d, adopted %d, released %d", r.Orphans, r.Adopted, r.Released)
	}
	if !r.OK() {
		s += "; VIOLATION " + r.Violations[0].String()
	}
	return s
}

func ptrText(p *int32) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// ReplayCommand is the command that replays seed with faultRate from the root of
// the repository.
func ReplayCommand(seed uint64, faultRate float64) string {
	return fmt.Sprintf("go test ./internal/sim -run 'TestSimulation$' -sim.seed=%d -sim.faults=%g -v", seed, faultRate)
}

// Run generates and runs the simulation of cfg.Seed. It returns an error only when
// the simulation cannot be set up; broken invariants are in Result.Violations.
func Run(cfg Config) (*Result, error) {
	g := newGenerator(cfg)
	w, err := newWorld(g.trace())
	if err != nil {
		return nil, err
	}
	g.run(w)
	return w.result(), nil
}

// Replay runs tr as recorded. When its actions end before the Job has finished,
// Replay finishes it the way every generated run ends (no faults, every event
// delivered, every pod succeeding) and then checks the end-of-run invariants, so a
// minimised trace also proves that the Job still finishes.
func Replay(tr *Trace) (*Result, error) {
	return ReplayLog(tr, nil)
}

// ReplayLog is Replay that also tells log, when not nil, about every action and
// every sync: the Job as cached, the plan, the API calls and their errors. It is
// how a failing trace is read.
func ReplayLog(tr *Trace, log func(string)) (*Result, error) {
	w, err := newWorld(tr)
	if err != nil {
		return nil, err
	}
	w.debug = log
	for _, a := range tr.Actions {
		if w.stopped {
			break
		}
		w.do(a)
	}
	w.complete()
	return w.result(), nil
}

func (w *world) result() *Result {
	r := &Result{
		Trace:        w.tr,
		Violations:   w.violations,
		Faults:       w.faults,
		Syncs:        w.syncs,
		Pods:         len(w.model.order),
		Finished:     w.finished(),
		Status:       *w.model.job.Status.DeepCopy(),
		OwnerDeleted: w.model.deleted,
		Orphans:      w.orphans,
		Adopted:      w.model.adoptions,
		Released:     w.model.releases,
	}
	if t, ok := jobstatus.Finished(&w.model.job.Status); ok {
		r.Condition = t
	}
	return r
}

// complete runs calm steps until the Job has finished, then checks the end of run.
// The steps are deterministic: no fault, all events delivered, the Job resumed and
// given back a parallelism, every pod run to success.
func (w *world) complete() {
	size := int(max(deref32(w.tr.Job.Spec.Completions, 1), deref32(w.tr.Job.Spec.Parallelism, 1)))
	limit := 200 + 4*size + int(w.tr.Controller.expectationsTTL()/time.Second)
	for range limit {
		if w.stopped || w.finished() {
			break
		}
		w.calmStep()
	}
	w.checkEnd()
}

// calmStep is one deterministic step towards the end of a run.
func (w *world) calmStep() {
	j := w.model.job
	if w.model.deleted {
		w.calmStepDeleted()
		return
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		w.do(Action{Do: VerbResume})
	}
	if deref32(j.Spec.Parallelism, 1) == 0 {
		w.do(Action{Do: VerbSetParallelism, N: int(max(deref32(w.tr.Job.Spec.Parallelism, 1), 1))})
	}
	if w.latency() != 0 {
		w.do(Action{Do: VerbLatency, N: 0})
	}
	if len(w.cluster.Cache().Pending()) > 0 {
		w.do(Action{Do: VerbDeliverAll})
	}
	w.do(Action{Do: VerbSync})
	w.calmKubelet()
}

// calmKubelet ends a calm step: the kubelet finishes what is being deleted and runs
// every other pod of the owner to success, and the clock moves a second.
func (w *world) calmKubelet() {
	for _, ps := range w.model.order {
		if ps.gone || ps.released || w.stopped {
			continue
		}
		p := ps.last
		switch {
		case p.DeletionTimestamp != nil && !isTerminal(p):
			w.do(Action{Do: VerbFinishTermination, Pod: ps.ordinal})
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodPending:
			w.do(Action{Do: VerbRun, Pod: ps.ordinal})
		case p.Status.Phase == corev1.PodRunning:
			w.do(Action{Do: VerbSucceed, Pod: ps.ordinal})
		}
	}
	w.do(Action{Do: VerbAdvance, N: 1000})
}

// calmStepDeleted is a calm step after the owner's deletion: every event
// delivered, the garbage collector and the orphan cleanup, the kubelet finishing
// what is being deleted and running the rest to success.
func (w *world) calmStepDeleted() {
	if w.latency() != 0 {
		w.do(Action{Do: VerbLatency, N: 0})
	}
	if len(w.cluster.Cache().Pending()) > 0 {
		w.do(Action{Do: VerbDeliverAll})
	}
	w.do(Action{Do: VerbCollectGarbage})
	w.do(Action{Do: VerbDeliverAll})
	w.do(Action{Do: VerbCleanOrphans})
	w.calmKubelet()
}

// latency returns the current event latency of the trace so far.
func (w *world) latency() int {
	for i := len(w.tr.Actions) - 1; i >= 0; i-- {
		if w.tr.Actions[i].Do == VerbLatency {
			return w.tr.Actions[i].N
		}
	}
	return 0
}

// Describe renders the Job of a trace on one line.
func (tr *Trace) Describe() string {
	s := &tr.Job.Spec
	var parts []string
	mode := "NonIndexed"
	if s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion {
		mode = "Indexed"
	}
	parts = append(parts, mode, "completions="+ptrText(s.Completions), fmt.Sprintf("parallelism=%d", deref32(s.Parallelism, 1)))
	if s.BackoffLimit != nil {
		parts = append(parts, fmt.Sprintf("backoffLimit=%d", *s.BackoffLimit))
	}
	if s.BackoffLimitPerIndex != nil {
		parts = append(parts, fmt.Sprintf("backoffLimitPerIndex=%d", *s.BackoffLimitPerIndex))
	}
	if s.MaxFailedIndexes != nil {
		parts = append(parts, fmt.Sprintf("maxFailedIndexes=%d", *s.MaxFailedIndexes))
	}
	if s.PodFailurePolicy != nil {
		parts = append(parts, fmt.Sprintf("podFailurePolicy=%d rules", len(s.PodFailurePolicy.Rules)))
	}
	if s.SuccessPolicy != nil {
		parts = append(parts, fmt.Sprintf("successPolicy=%d rules", len(s.SuccessPolicy.Rules)))
	}
	if s.PodReplacementPolicy != nil {
		parts = append(parts, "podReplacementPolicy="+string(*s.PodReplacementPolicy))
	}
	if s.ActiveDeadlineSeconds != nil {
		parts = append(parts, fmt.Sprintf("activeDeadlineSeconds=%d", *s.ActiveDeadlineSeconds))
	}
	if s.Suspend != nil && *s.Suspend {
		parts = append(parts, "suspended")
	}
	if s.Template.Spec.RestartPolicy == corev1.RestartPolicyOnFailure {
		parts = append(parts, "restartPolicy=OnFailure")
	}
	return strings.Join(parts, " ")
}
