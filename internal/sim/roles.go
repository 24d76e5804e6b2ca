package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// RolesKind is the owner kind of the simulated owners of two roles.
var RolesKind = owner.Kind{Group: "test.jobkit.dev", Version: "v1", Kind: "TrainingJob", Finalizer: "test.jobkit.dev/training-tracking"}

// The invariants only an owner of several roles has.
const (
	// InvOldAttemptCounted: a pod entered a role's ledger while its attempt was not
	// the role's, or a role advanced with pods of the old attempt uncounted.
	InvOldAttemptCounted Invariant = "old-attempt-counted"
	// InvStatusWrites: a sync wrote the owner's status more than once.
	InvStatusWrites Invariant = "status-writes"
	// InvRunningAfterFinish: a finished owner still had a pod running at the end.
	InvRunningAfterFinish Invariant = "running-after-finish"
	// InvStaleStatus: a finished owner whose pods no longer run ended with a
	// role status that does not show it: active or ready above zero, or a
	// terminating count other than its pods being deleted.
	InvStaleStatus Invariant = "stale-status"
)

// rolesStream is the PCG stream of the roles simulation: a seed draws the same
// owner and run whatever the Job simulation of that seed draws.
const rolesStream = 0x726f6c6573

// exitFailGroup is the exit code a FailJobSet rule of a drawn owner matches.
const exitFailGroup = 42

// RolesConfig configures a run of an owner of two roles (RunRoles).
type RolesConfig struct {
	// Seed determines the whole run: the owner, the kubelet, the faults.
	Seed uint64
	// FaultRate is the probability that an API call of the controller fails; it
	// scales the crashes, restarts and the cache lag too. Zero means none.
	FaultRate float64
}

// RolesResult is the outcome of RunRoles.
type RolesResult struct {
	// Seed and FaultRate are the run's; Owner describes the drawn owner.
	Seed      uint64
	FaultRate float64
	Owner     string
	// Violations holds the first broken invariant, if any: the run stops there.
	Violations []Violation
	// Faults counts the faults injected, by kind.
	Faults Counts
	// Syncs counts the syncs, Pods the pods created.
	Syncs, Pods int
	// Status is the owner's final status.
	Status ownedpods.Status
}

// OK reports whether no invariant was broken.
func (r *RolesResult) OK() bool { return len(r.Violations) == 0 }

// Summary renders the result on one line.
func (r *RolesResult) Summary() string {
	st := &r.Status
	s := fmt.Sprintf("%s: %d syncs, %d pods, faults %s; state %q, restarts %d", r.Owner, r.Syncs, r.Pods, r.Faults, st.TerminalState, st.Restarts)
	for _, rs := range st.Roles {
		s += fmt.Sprintf(", %s attempt %d succeeded %d failed %d", rs.Name, rs.Attempt, rs.Succeeded, rs.Failed)
	}
	if st.InPlace != (plaingroup.InPlaceAttempts{}) {
		s += ", in place: " + attempts(st.InPlace)
	}
	if !r.OK() {
		s += "; VIOLATION " + r.Violations[0].String()
	}
	return s
}

// RolesReplayCommand is the command that replays the roles run of seed with
// faultRate from the root of the repository.
func RolesReplayCommand(seed uint64, faultRate float64) string {
	return fmt.Sprintf("go test ./internal/sim -run 'TestSimulation$' -sim.roleseed=%d -sim.faults=%g -v", seed, faultRate)
}

// RunRoles draws an owner of a launcher and workers from cfg.Seed and runs it
// through Reconciler.SyncRoles under faults, crashes, restarts and a lagging
// cache, then calmly to its end, checking the invariants at every step. The same
// seed gives the same run. It returns an error only when the run cannot be set
// up; broken invariants are in RolesResult.Violations.
func RunRoles(cfg RolesConfig) (*RolesResult, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, rolesStream))
	rw := &rolesWorld{rng: rng, rate: cfg.FaultRate, faults: Counts{}, ns: "sim", name: "train", crashAfter: -1}
	w := rw.drawWorkload()
	if r := inPlaceSeed(cfg.Seed); r != nil {
		rw.makeInPlace(w, r)
	}
	if err := rw.setUp(w); err != nil {
		return nil, err
	}
	if rw.agents != nil {
		rw.agents.cluster = rw.cluster
	}
	rw.scale = drawRolesScale(cfg.Seed)
	rw.model = newRolesModel(rw)
	steps := 30 + rng.IntN(50)
	for range steps {
		if rw.stopped {
			break
		}
		rw.chaosStep()
	}
	rw.complete()
	return &RolesResult{
		Seed: cfg.Seed, FaultRate: cfg.FaultRate, Owner: rw.describe + rw.scale.describe(), Violations: rw.violations,
		Faults: rw.faults, Syncs: rw.syncs, Pods: rw.model.created, Status: rw.model.last,
	}, nil
}

// drawWorkload draws the owner: a launcher that waits for the workers to be
// ready, Indexed workers with a per-index backoff, success when the launcher
// succeeds, a restart of the group on a failed role up to maxRestarts, and
// sometimes a FailJobSet rule on a worker's exit code.
func (rw *rolesWorld) drawWorkload() *ownedpods.Workload {
	r := rw.rng
	workers := int32(1 + r.IntN(5))
	perIndex := int32(r.IntN(3))
	launcherBackoff := int32(r.IntN(3))
	fp := &plaingroup.FailurePolicy{MaxRestarts: int32(r.IntN(4)), RestartStrategy: plaingroup.Recreate}
	if r.IntN(2) == 0 {
		fp.RestartStrategy = plaingroup.BlockingRecreate
	}
	workerSpec := plan.Spec{
		Completions: ptr.To(workers), Parallelism: ptr.To(workers),
		CompletionMode:       ptr.To(batchv1.IndexedCompletion),
		BackoffLimitPerIndex: ptr.To(perIndex),
		Template:             rolesTemplate(),
	}
	rw.failGroup = r.IntN(2) == 0
	if rw.failGroup {
		workerSpec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{exitFailGroup}},
		}}}
		fp.Rules = []plaingroup.Rule{{Action: plaingroup.FailJobSet, OnJobFailureReasons: []string{batchv1.JobReasonPodFailurePolicy}, TargetReplicatedJobs: []string{"worker"}}}
	}
	rw.describe = fmt.Sprintf("roles launcher(backoffLimit=%d)+worker(Indexed %d, backoffLimitPerIndex=%d) maxRestarts=%d %s failJobSet=%v",
		launcherBackoff, workers, perIndex, fp.MaxRestarts, fp.RestartStrategy, rw.failGroup)
	return &ownedpods.Workload{
		Namespace: rw.ns, Name: rw.name, ManagedBy: ptr.To(ControllerName),
		Roles: []ownedpods.Role{
			{Name: "worker", Spec: workerSpec},
			{Name: "launcher", Spec: plan.Spec{Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), BackoffLimit: ptr.To(launcherBackoff), Template: rolesTemplate()},
				DependsOn: []plaingroup.Dependency{{Name: "worker", Status: plaingroup.DependsOnReady}}},
		},
		FailurePolicy: fp,
		SuccessPolicy: &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{"launcher"}},
	}
}

func rolesTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "main", Image: "sim"}},
	}}
}

// setUp makes the cluster, the store, the owner and the controller.
func (rw *rolesWorld) setUp(w *ownedpods.Workload) error {
	rw.cluster, rw.owners = reconciletest.NewStore(reconciletest.Options{Owner: RolesKind, Seed: rw.rng.Uint64()}, reconciletest.RunType)
	rw.cluster.SetInterceptor(rw.intercept)
	stored, err := rw.owners.Create(&reconciletest.Run{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}, Spec: *w, Status: w.Status})
	if err != nil {
		return fmt.Errorf("sim: create owner of roles: %w", err)
	}
	rw.uid = stored.UID
	r, err := rw.newReconciler()
	if err != nil {
		return err
	}
	rw.driver = reconciletest.NewDriver(rw.cluster, r)
	rw.use(r)
	return nil
}

func (rw *rolesWorld) newReconciler() (*reconcile.Reconciler, error) {
	r, err := reconcile.New(reconcile.Config{
		Name: ControllerName, Owner: RolesKind, Clock: rw.cluster.Clock(),
		FinalizerRemovalParallelism: 1,
		Backoff:                     plainbackoff.Policy{Base: 1e9, Max: 8e9},
		ExpectationsTTL:             30e9,
	}, rw.cluster, rw.cluster)
	if err != nil {
		return nil, fmt.Errorf("sim: new reconciler: %w", err)
	}
	return r, nil
}

func (rw *rolesWorld) use(r *reconcile.Reconciler) {
	rw.driver.Reconciler = r
	rw.driver.SyncFunc, rw.driver.DoneFunc = rw.owners.SyncFunc(r), rw.owners.DoneFunc()
}

// ownerPods returns the pods in the cluster whose controller is the owner.
func (rw *rolesWorld) ownerPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range rw.cluster.ListPods(rw.ns) {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == rw.uid {
			out = append(out, p)
		}
	}
	return out
}

// sync runs one sync with the faults drawn for its calls, then checks it.
func (rw *rolesWorld) sync(faults bool) {
	rw.inSync, rw.drawFaults, rw.calls = true, faults, 0
	rw.crashAfter = -1
	if faults && rw.rng.Float64() < rw.rate/12 {
		rw.crashAfter = rw.rng.IntN(6)
		rw.faults[FaultCrash]++
	}
	rw.model.beforeSync()
	caughtUp := len(rw.cluster.Cache().Pending()) == 0
	rw.faulted = rw.crashAfter >= 0
	before := len(rw.cluster.Calls())
	_, res, _ := rw.driver.Sync(context.Background(), rw.ns, rw.name)
	if strings.Contains(res.Skipped, plan.ErrInvalidJob.Error()) {
		rw.violate(InvNotFinished, "the owner cannot be planned: %s", res.Skipped)
	}
	rw.inSync = false
	rw.syncs++
	rw.model.afterSync(rw.cluster.Calls()[before:], caughtUp && !rw.faulted)
	if w, err := rw.owners.Get(rw.ns, rw.name); err == nil && rw.agents != nil {
		rw.agents.checkStatus(w.Status.InPlace)
	}
	if rw.crashAfter >= 0 {
		rw.restart()
	}
}

// restart replaces the controller by a new one that knows nothing.
func (rw *rolesWorld) restart() {
	r, err := rw.newReconciler()
	if err != nil {
		rw.violate(InvNotFinished, "%v", err)
		return
	}
	rw.driver.Restart(r)
	rw.use(r)
	if rw.model != nil {
		rw.model.clean = 0
	}
	rw.cluster.Cache().DeliverAll()
}

// intercept decides the outcome of each call of a sync.
func (rw *rolesWorld) intercept(call reconciletest.Call) reconciletest.Outcome {
	if !rw.inSync {
		return reconciletest.Outcome{}
	}
	rw.calls++
	if rw.crashAfter >= 0 && rw.calls > rw.crashAfter {
		return FaultCrash.Outcome()
	}
	if !rw.drawFaults || rw.rng.Float64() >= rw.rate {
		return reconciletest.Outcome{}
	}
	kinds := []FaultKind{FaultServerError, FaultTooManyRequests, FaultConflict, FaultTimeout}
	k := kinds[rw.rng.IntN(len(kinds))]
	rw.faults[k]++
	rw.faulted = true
	return k.Outcome()
}

func (rw *rolesWorld) violate(inv Invariant, format string, args ...any) {
	if rw.stopped {
		return
	}
	rw.violations = append(rw.violations, Violation{Invariant: inv, Action: rw.step, Sync: rw.syncs, Message: fmt.Sprintf(format, args...)})
	rw.stopped = true
}
