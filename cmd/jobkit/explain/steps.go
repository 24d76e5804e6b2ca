package explain

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// Kubelet behaviours of a what-if run (StepOptions.Kubelet).
const (
	// KubeletSucceed starts each pending pod as ready and makes it succeed at the
	// next step.
	KubeletSucceed = "succeed"
	// KubeletFail is like KubeletSucceed, but the pods fail with StepOptions.ExitCode.
	KubeletFail = "fail"
	// KubeletIdle leaves the pods as they are (they stay pending).
	KubeletIdle = "idle"
)

// StepOptions configure Steps.
type StepOptions struct {
	// Steps is the number of syncs to run.
	Steps int
	// StepDuration is how far the clock moves after each sync; zero means 10s.
	StepDuration time.Duration
	// Kubelet is one of the Kubelet constants; empty means KubeletSucceed.
	Kubelet string
	// ExitCode is the exit code of the pods under KubeletFail; zero means 1.
	ExitCode int32
}

// Step is one sync of a what-if run.
type Step struct {
	Step int `json:"step"`
	// Time is the time of the sync.
	Time time.Time `json:"time"`
	// Calls are the API calls the sync made, in order.
	Calls []string `json:"calls,omitempty"`
	// Error is the sync's error, if any.
	Error string `json:"error,omitempty"`
	// Requeue is the delay the sync asked for, if any.
	Requeue *Duration `json:"requeue,omitempty"`
	// Status summarizes the owner's status after the step, Pods its pods by phase.
	Status string `json:"status"`
	Pods   string `json:"pods"`
	// Finished is the owner's terminal condition after the step, if any.
	Finished string `json:"finished,omitempty"`
}

// Steps runs syncs of a reconcile.Reconciler named as Options.Controller (or the
// owner's own controller) on reconcile/reconciletest's in-memory cluster, loaded
// with the owner w (read as Explain reads it) and its pods after Options.Assume,
// and reports each step. The cluster starts at Options.Now; the kubelet acts after
// each sync as StepOptions.Kubelet says. It stops early once the owner has finished
// and no pod keeps the tracking finalizer.
//
// The state is rebuilt through the cluster's API, so objects get new UIDs and
// resourceVersions, and each pod is brought to its phase by the simulated kubelet
// at the time it finished (its FinishTime); container details beyond the exit code
// are not kept. See reconciletest for what the cluster does not simulate.
//
// For a batch/v1 Job (the zero Options.Owner) the cluster holds the Job: w.Object
// with its metadata when w is plan.JobWorkload's, else one built from w. With an
// Options.Owner of another kind, the cluster holds the owner as a
// reconciletest.Task of that kind (Options.Owner of reconciletest.Cluster): the
// workload's spec in Job terms, with the API's defaults of a Job's spec fields and
// no generated selector, and its status; the Reconciler is reconcile.New that
// kind, so the pods it creates carry the kind's controller reference and
// finalizer. Pods are the owner's by their controller reference, rewritten to the
// owner's new UID; their labels, the selector and the template are kept as given
// (nothing generates them for a custom resource). The calls name the kind
// ("UpdateStatus TrainingJob NAME"), the rest of each Step reads as for a Job. A nil
// w is an error wrapping ErrNoJob. It does not modify w (or what it points to) or
// pods.
func Steps(ctx context.Context, w *plan.Workload, pods []*corev1.Pod, opts Options, so StepOptions) ([]Step, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: workload is nil", ErrNoJob)
	}
	return steps(ctx, newWorkload(*w, opts.Owner), pods, opts, so)
}

func steps(ctx context.Context, w *workload, pods []*corev1.Pod, opts Options, so StepOptions) ([]Step, error) {
	run, err := startRun(w, pods, opts, so)
	if err != nil {
		return nil, err
	}
	var out []Step
	for range so.Steps {
		st, done, err := run.step(ctx)
		if st != nil {
			out = append(out, *st)
		}
		if err != nil || done {
			return out, err
		}
	}
	return out, nil
}

// stepRun is a what-if run in progress: the in-memory cluster loaded with the
// owner and its pods, and the Driver that syncs it.
type stepRun struct {
	w       *workload
	clk     *clocktesting.FakeClock
	cluster *reconciletest.Cluster
	// tasks holds the owner when it is of another kind than batch/v1 Job.
	tasks  *reconciletest.Store[*reconciletest.Task]
	driver *reconciletest.Driver
	// namespace and name name the owner in the cluster.
	namespace, name string
}

// startRun loads the owner and its pods (after opts.Assume) into a new in-memory
// cluster whose owner kind is the workload's, and makes the Reconciler and the
// Driver that sync it. The clock is at opts.Now and the call log empty.
func startRun(w *workload, pods []*corev1.Pod, opts Options, so StepOptions) (*stepRun, error) {
	if so.Steps <= 0 {
		return nil, fmt.Errorf("steps: must be positive, got %d", so.Steps)
	}
	if err := w.kind.Validate(); err != nil {
		return nil, fmt.Errorf("Options.Owner: %w", err)
	}
	controller := opts.Controller
	if controller == "" {
		controller = w.controller()
	}
	if len(opts.Assume) > 0 {
		var err error
		if pods, err = applyAssumptions(w, pods, opts.Assume, opts.Now); err != nil {
			return nil, err
		}
	}
	clk := clocktesting.NewFakeClock(opts.Now)
	cluster := reconciletest.NewCluster(reconciletest.Options{Clock: clk})
	var tasks *reconciletest.Store[*reconciletest.Task]
	if w.kind != owner.BatchJob {
		cluster, tasks = reconciletest.NewStore(reconciletest.Options{Clock: clk, Owner: w.kind}, reconciletest.TaskType)
	}
	namespace, name, err := load(cluster, tasks, clk, w, pods, opts.Now)
	if err != nil {
		return nil, fmt.Errorf("loading the state into the in-memory cluster: %w", err)
	}
	policy := opts.Backoff
	if w.Backoff != (plainbackoff.Policy{}) {
		// The owner's own retry delays (a mapped backoff.base or backoff.max),
		// as in Explain.
		policy = w.Backoff
	}
	cfg := reconcile.Config{Name: controller, Owner: w.kind, Clock: clk, Backoff: policy, FinalizerRemovalParallelism: 1}
	var r *reconcile.Reconciler
	if w.kind == owner.BatchJob {
		r, err = reconcile.New(cfg, cluster, reconcile.JobStatusWriter(cluster))
	} else {
		r, err = reconcile.New(cfg, cluster, cluster)
	}
	if err != nil {
		return nil, err
	}
	switch so.Kubelet {
	case "", KubeletSucceed:
		cluster.Kubelet().SetScript(reconciletest.SucceedPods())
	case KubeletFail:
		cluster.Kubelet().SetScript(reconciletest.FailFirst(-1, cmpOr(so.ExitCode, 1)))
	case KubeletIdle:
	default:
		return nil, fmt.Errorf("kubelet: unknown behaviour %q (want %s, %s or %s)", so.Kubelet, KubeletSucceed, KubeletFail, KubeletIdle)
	}
	d := reconciletest.NewDriver(cluster, r)
	d.StepDuration = cmpOr(so.StepDuration, 10*time.Second)
	cluster.ResetCalls()
	return &stepRun{w: w, clk: clk, cluster: cluster, tasks: tasks, driver: d, namespace: namespace, name: name}, nil
}

// step runs one sync and kubelet step and reports it, with done true once the
// owner has finished and no pod keeps its tracking finalizer. The Step is nil when
// the kubelet failed; it is reported with the error when the owner is gone.
func (s *stepRun) step(ctx context.Context) (*Step, bool, error) {
	at := s.clk.Now()
	sr, err := s.driver.Step(ctx, s.namespace, s.name)
	if err != nil {
		return nil, false, err
	}
	st := &Step{Step: sr.Step, Time: at.UTC()}
	for _, c := range s.cluster.Calls() {
		st.Calls = append(st.Calls, callText(c, s.w.noun))
	}
	s.cluster.ResetCalls()
	if sr.Err != nil {
		st.Error = sr.Err.Error()
	}
	if sr.Result.RequeueAfter > 0 {
		st.Requeue = ptr.To(Duration(sr.Result.RequeueAfter))
	}
	if sr.Workload == nil {
		return st, false, fmt.Errorf("the %s is gone from the in-memory cluster", s.w.noun)
	}
	status, done := &sr.Workload.Status, s.driver.Done(s.namespace, s.name)
	// of carries the owner's namespace and UID for CountPods, which reads
	// nothing else.
	of := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: sr.Workload.Namespace, UID: sr.Workload.UID}}
	st.Status = statusText(status)
	st.Pods = phasesText(s.cluster.CountPods(of))
	if t, ok := finishedType(status); ok {
		st.Finished = t
	}
	return st, done, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func finishedType(st *batchv1.JobStatus) (string, bool) {
	t, ok := jobstatus.Finished(st)
	if !ok {
		return "", false
	}
	return string(t) + " (" + jobstatus.FindCondition(st.Conditions, t).Reason + ")", true
}
