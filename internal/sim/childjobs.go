package sim

// The simulation of a group whose roles run as child Jobs (RunChildJobs): the
// group synced by Reconciler.SyncChildJobs on reconciletest's Store, its
// children run by the Store's Job controller, under faults on the pod calls and
// the status writes and a kubelet that fails pods, then calmly to its end.

import (
	"context"
	"fmt"
	"math/rand/v2"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// childJobsStream is the PCG stream of the child-Jobs simulation.
const childJobsStream = 0x6a6f6273

// GroupKind is the owner kind of the simulated groups of child Jobs.
var GroupKind = owner.Kind{Group: "sim.jobkit.dev", Version: "v1", Kind: "Group", Finalizer: "sim.jobkit.dev/owns-no-pods"}

// Invariants of the child-Jobs simulation.
const (
	// InvGroupNotFinished: the group had no terminal state at the end.
	InvGroupNotFinished Invariant = "group-not-finished"
	// InvGroupBackwards: the group's restart counters went back, or its terminal
	// state changed once set.
	InvGroupBackwards Invariant = "group-backwards"
	// InvGroupRestarts: the group restarted more often than its maxRestarts.
	InvGroupRestarts Invariant = "group-restarts"
	// InvGroupOutcome: a Completed group whose children of its last attempt did
	// not all complete, or a child of an old attempt left running.
	InvGroupOutcome Invariant = "group-outcome"
)

// ChildJobsConfig configures a run of a group of child Jobs (RunChildJobs).
type ChildJobsConfig struct {
	// Seed determines the whole run; FaultRate is the probability that a
	// controller call fails (zero: none).
	Seed      uint64
	FaultRate float64
}

// ChildJobsResult is the outcome of RunChildJobs.
type ChildJobsResult struct {
	Seed       uint64
	FaultRate  float64
	Group      string
	Violations []Violation
	Faults     Counts
	Syncs      int
	Status     childjobs.Status
}

// OK reports whether no invariant was broken.
func (r *ChildJobsResult) OK() bool { return len(r.Violations) == 0 }

// Summary renders the result on one line.
func (r *ChildJobsResult) Summary() string {
	s := fmt.Sprintf("%s: %d syncs, faults %s; state %q, restarts %d", r.Group, r.Syncs, r.Faults, r.Status.TerminalState, r.Status.Restarts)
	if a := (plaingroup.InPlaceAttempts{Previous: r.Status.PreviousInPlaceRestartAttempt, Current: r.Status.CurrentInPlaceRestartAttempt}); a != (plaingroup.InPlaceAttempts{}) {
		s += ", in place: " + attempts(a)
	}
	if !r.OK() {
		s += "; VIOLATION " + r.Violations[0].String()
	}
	return s
}

// ChildJobsReplayCommand is the command that replays the child-Jobs run of seed.
func ChildJobsReplayCommand(seed uint64, faultRate float64) string {
	return fmt.Sprintf("go test ./internal/sim -run 'TestSimulation$' -sim.groupseed=%d -sim.faults=%g -v", seed, faultRate)
}

// simGroup is the simulated group as an API object.
type simGroup struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Spec      plaingroup.Spec
	Templates []batchv1.JobTemplateSpec
	Status    childjobs.Status
}

func (g *simGroup) DeepCopyObject() runtime.Object {
	out := &simGroup{TypeMeta: g.TypeMeta, Spec: g.Spec, Status: g.Status}
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Templates = make([]batchv1.JobTemplateSpec, len(g.Templates))
	for i := range g.Templates {
		g.Templates[i].DeepCopyInto(&out.Templates[i])
	}
	out.Status.Conditions = append([]metav1.Condition(nil), g.Status.Conditions...)
	out.Status.ReplicatedJobs = append([]plaingroup.RoleStatus(nil), g.Status.ReplicatedJobs...)
	return out
}

var simGroupType = reconcile.Type[*simGroup]{
	New: func() *simGroup { return &simGroup{} },
	ChildJobs: func(g *simGroup) (*childjobs.Input, error) {
		return &childjobs.Input{
			Name: g.Name, Namespace: g.Namespace, UID: g.UID, Generation: g.Generation,
			ResourceVersion: g.ResourceVersion, Object: g, Owner: GroupKind.GroupVersionKind(),
			Deleting: g.DeletionTimestamp != nil, Annotations: g.Annotations, Spec: g.Spec, Templates: g.Templates, Status: g.Status,
		}, nil
	},
	SetChildJobsStatus: func(g *simGroup, st childjobs.Status) error { g.Status = st; return nil },
}

// childJobsWorld is the state of one RunChildJobs.
type childJobsWorld struct {
	rng        *rand.Rand
	rate       float64
	faults     Counts
	violations []Violation
	syncs      int
	inSync     bool
	maxRest    int32
	last       childjobs.Status
}

// RunChildJobs draws a group of a leader and workers as child Jobs from
// cfg.Seed, with a failure policy of up to three restarts, and runs it through
// Reconciler.SyncChildJobs (its children through the Store's Job controller)
// under faults on the controller calls and a kubelet that fails some pods, then
// calmly to its end, checking the group's invariants at every step. The same
// seed gives the same run.
func RunChildJobs(cfg ChildJobsConfig) (*ChildJobsResult, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, childJobsStream))
	w := &childJobsWorld{rng: rng, rate: cfg.FaultRate, faults: Counts{}}
	workers := int32(1 + rng.IntN(4))
	w.maxRest = int32(rng.IntN(4))
	strategy := plaingroup.Recreate
	if rng.IntN(2) == 0 {
		strategy = plaingroup.BlockingRecreate
	}
	tmpl := func(n int32) batchv1.JobTemplateSpec {
		return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To(n), Parallelism: ptr.To(n), BackoffLimit: ptr.To(int32(rng.IntN(2))),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "sim"}}}}}}
	}
	group := &simGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "sim", Name: "group"},
		Spec: plaingroup.Spec{Roles: []plaingroup.Role{{Name: "leader", Replicas: 1}, {Name: "workers", Replicas: 1 + int32(rng.IntN(2))}},
			FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: w.maxRest, RestartStrategy: strategy}},
		Templates: []batchv1.JobTemplateSpec{tmpl(1), tmpl(workers)}}
	desc := fmt.Sprintf("group leader+workers(%d replicas of Indexed %d) maxRestarts=%d %s", group.Spec.Roles[1].Replicas, workers, w.maxRest, strategy)

	c, store := reconciletest.NewStore(reconciletest.Options{Owner: GroupKind, Seed: rng.Uint64()}, simGroupType)
	r, err := reconcile.New(reconcile.Config{Name: plaingroup.ControllerName, Owner: GroupKind, Clock: c.Clock()}, nil, nil)
	if err != nil {
		return nil, err
	}
	shape := drawShape(cfg.Seed, group)
	shape.violate = w.violate
	var agents *inPlaceAgents
	if ir := inPlaceGroupSeed(cfg.Seed); ir != nil {
		agents = w.inPlaceGroup(group, ir, c, store)
		agents.leaving = leavingPod(store)
		desc = describeInPlace(group, workers)
	}
	if _, err := store.Create(group); err != nil {
		return nil, err
	}
	failing := true
	c.Kubelet().SetScript(func(k *reconciletest.Kubelet, p *corev1.Pod) error {
		if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil && !shape.schedule(c, p) {
			return nil // no domain fits it yet
		}
		if agents != nil {
			return agents.inPlaceKubelet(k, p, failing)
		}
		switch {
		case p.DeletionTimestamp != nil:
			return nil
		case p.Status.Phase == corev1.PodPending:
			return k.Run(p.Namespace, p.Name)
		case p.Status.Phase != corev1.PodRunning, failing && shape.hold():
			return nil
		case failing && rng.IntN(6) == 0:
			return k.Fail(p.Namespace, p.Name, 1)
		}
		return k.Succeed(p.Namespace, p.Name)
	})
	c.SetInterceptor(w.intercept)
	d := reconciletest.NewDriver(c, r)
	sync := store.SyncFunc(r)
	d.SyncFunc = func(ctx context.Context, ns, name string) (bool, reconcile.Result, error) {
		w.inSync = true
		defer func() { w.inSync = false }()
		w.syncs++
		return sync(ctx, ns, name)
	}
	d.DoneFunc = store.DoneFunc()
	d.OnStep = func(reconciletest.StepResult) {
		w.check(store)
		shape.checkPlacement(c)
		if agents != nil {
			st, _ := agents.attempts()
			agents.checkStatus(st)
			if failing {
				agents.step(0.6)
			} else {
				agents.step(1)
			}
		}
	}
	ctx := context.Background()
	for i := range 10 + rng.IntN(30) {
		shape.resize(i, store)
		if _, err := d.Step(ctx, "sim", "group"); err != nil {
			return nil, err
		}
		if len(w.violations) > 0 {
			break
		}
	}
	// Calm: no fault, pods succeed.
	w.rate, failing = 0, false
	if len(w.violations) == 0 {
		if _, err := d.Run(ctx, "sim", "group", 400); err != nil {
			w.violate(InvGroupNotFinished, "%v", err)
		}
	}
	if len(w.violations) == 0 {
		w.final(c, store)
	}
	if g, err := store.Get("sim", "group"); err == nil && len(w.violations) == 0 {
		shape.checkSize(g, c.Jobs().List())
	}
	desc += shape.describe()
	return &ChildJobsResult{Seed: cfg.Seed, FaultRate: cfg.FaultRate, Group: desc, Violations: w.violations,
		Faults: w.faults, Syncs: w.syncs, Status: w.last}, nil
}

// intercept injects a fault into a controller call with probability rate.
func (w *childJobsWorld) intercept(reconciletest.Call) reconciletest.Outcome {
	if !w.inSync || w.rate == 0 || w.rng.Float64() >= w.rate {
		return reconciletest.Outcome{}
	}
	kinds := []FaultKind{FaultServerError, FaultTooManyRequests, FaultConflict, FaultTimeout}
	k := kinds[w.rng.IntN(len(kinds))]
	w.faults[k]++
	return k.Outcome()
}

func (w *childJobsWorld) violate(inv Invariant, format string, args ...any) {
	if len(w.violations) == 0 {
		w.violations = append(w.violations, Violation{Invariant: inv, Sync: w.syncs, Message: fmt.Sprintf(format, args...)})
	}
}

// check runs after every step: the restart counters never go back, a terminal
// state never changes, and the group restarts at most maxRestarts times.
func (w *childJobsWorld) check(store *reconciletest.Store[*simGroup]) {
	g, err := store.Get("sim", "group")
	if err != nil {
		return
	}
	st := g.Status
	prev := w.last
	switch {
	case st.Restarts < prev.Restarts || st.RestartsCountTowardsMax < prev.RestartsCountTowardsMax:
		w.violate(InvGroupBackwards, "restarts %d/%d after %d/%d", st.Restarts, st.RestartsCountTowardsMax, prev.Restarts, prev.RestartsCountTowardsMax)
	case prev.TerminalState != "" && st.TerminalState != prev.TerminalState:
		w.violate(InvGroupBackwards, "terminal state %q after %q", st.TerminalState, prev.TerminalState)
	case st.RestartsCountTowardsMax > w.maxRest:
		w.violate(InvGroupRestarts, "restartsCountTowardsMax %d above maxRestarts %d", st.RestartsCountTowardsMax, w.maxRest)
	}
	w.last = st
}

// final checks the end: the group finished; a Completed group's children of
// its last attempt all completed; no child of an old attempt runs; no pod keeps
// the Job tracking finalizer.
func (w *childJobsWorld) final(c *reconciletest.Cluster, store *reconciletest.Store[*simGroup]) {
	g, err := store.Get("sim", "group")
	if err != nil {
		w.violate(InvGroupNotFinished, "the group is gone: %v", err)
		return
	}
	st := g.Status
	if st.TerminalState == "" {
		w.violate(InvGroupNotFinished, "no terminal state")
		return
	}
	for _, j := range c.Jobs().List() {
		ch, err := childjobs.ReadChild(j)
		if err != nil {
			w.violate(InvGroupOutcome, "child %s: %v", j.Name, err)
			return
		}
		old := ch.Attempt < st.Restarts
		_, done := jobstatus.Finished(&j.Status)
		switch {
		case old && j.DeletionTimestamp == nil && !done:
			w.violate(InvGroupOutcome, "child %s of attempt %d runs, the group is at %d", j.Name, ch.Attempt, st.Restarts)
		case !old && st.TerminalState == plaingroup.ConditionCompleted && j.DeletionTimestamp == nil && !done:
			w.violate(InvGroupOutcome, "the group Completed, its child %s has not finished", j.Name)
		}
	}
	for _, p := range c.ListPods("sim") {
		if owner.BatchJob.HasFinalizer(p) {
			w.violate(InvFinalizerLeft, "pod %s keeps the Job tracking finalizer", p.Name)
		}
	}
}
