package explain

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
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
// Job's own controller) on reconcile/reconciletest's in-memory cluster, loaded with
// the Job and its pods after Options.Assume, and reports each step. The cluster
// starts at Options.Now; the kubelet acts after each sync as StepOptions.Kubelet
// says. It stops early once the Job has finished and no pod keeps the tracking
// finalizer.
//
// The state is rebuilt through the cluster's API, so objects get new UIDs and
// resourceVersions, and each pod is brought to its phase by the simulated kubelet
// at the time it finished (its FinishTime); container details beyond the exit code
// are not kept. See reconciletest for what the cluster does not simulate.
//
// With an Options.Owner of another kind, job is read as an owner of that kind, as
// Explain reads it: Steps is then StepsWorkload of plan.JobWorkload(job), with the
// Job's metadata.
func Steps(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod, opts Options, so StepOptions) ([]Step, error) {
	if job == nil {
		return nil, fmt.Errorf("%w: job is nil", ErrNoJob)
	}
	return steps(ctx, newWorkload(plan.JobWorkload(job), job, opts.Owner), pods, opts, so)
}

// StepsWorkload is Steps for an owner of any kind, given as the plan.Workload its
// controller builds (see ExplainWorkload), with Options.Owner naming its kind and
// tracking finalizer. The in-memory cluster holds it as a reconciletest.Task of
// that kind (Options.Owner of reconciletest.Cluster): the workload's spec in Job
// terms, with the API's defaults of a Job's spec fields and no generated selector,
// and its status; the Reconciler is reconcile.NewFor that kind, so the pods it
// creates carry the kind's controller reference and finalizer. Pods are the
// owner's by their controller reference, rewritten to the owner's new UID; their
// labels, the selector and the template are kept as given (nothing generates
// them for a custom resource). The calls name the kind ("UpdateStatus TrainingJob
// NAME"), the rest of each Step reads as for a Job. For a batch/v1 Job (the zero
// Options.Owner) it is Steps of the Job the Workload describes, without the Job's
// metadata. It does not modify w (or what it points to) or pods.
func StepsWorkload(ctx context.Context, w plan.Workload, pods []*corev1.Pod, opts Options, so StepOptions) ([]Step, error) {
	return steps(ctx, newWorkload(w, nil, opts.Owner), pods, opts, so)
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
	driver  *reconciletest.Driver
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
	cluster := reconciletest.NewCluster(reconciletest.Options{Clock: clk, Owner: w.kind})
	namespace, name, err := load(cluster, clk, w, pods, opts.Now)
	if err != nil {
		return nil, fmt.Errorf("loading the state into the in-memory cluster: %w", err)
	}
	cfg := reconcile.Config{Name: controller, Owner: w.kind, Clock: clk, Backoff: opts.Backoff, FinalizerRemovalParallelism: 1}
	var r *reconcile.Reconciler
	if w.kind == owner.BatchJob {
		r, err = reconcile.New(cfg, cluster)
	} else {
		r, err = reconcile.NewFor(cfg, cluster, cluster)
	}
	if err != nil {
		return nil, err
	}
	switch so.Kubelet {
	case "", KubeletSucceed:
		cluster.Kubelet().SetScript(reconciletest.SucceedPods())
	case KubeletFail:
		cluster.Kubelet().SetScript(reconciletest.FailPods(cmpOr(so.ExitCode, 1)))
	case KubeletIdle:
	default:
		return nil, fmt.Errorf("kubelet: unknown behaviour %q (want %s, %s or %s)", so.Kubelet, KubeletSucceed, KubeletFail, KubeletIdle)
	}
	d := reconciletest.NewDriver(cluster, r)
	d.StepDuration = cmpOr(so.StepDuration, 10*time.Second)
	cluster.ResetCalls()
	return &stepRun{w: w, clk: clk, cluster: cluster, driver: d, namespace: namespace, name: name}, nil
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
	var (
		status *batchv1.JobStatus
		// of carries the owner's namespace and UID for CountPods, which reads
		// nothing else.
		of   *batchv1.Job
		done bool
	)
	switch {
	case sr.Task != nil:
		status, done = &sr.Task.Status, s.driver.DoneTask(sr.Task)
		of = &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: sr.Task.Namespace, UID: sr.Task.UID}}
	case sr.Job != nil:
		status, done, of = &sr.Job.Status, s.driver.Done(sr.Job), sr.Job
	default:
		return st, false, fmt.Errorf("the %s is gone from the in-memory cluster", s.w.noun)
	}
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

// load creates the owner and its pods in the cluster and brings each pod to its
// state, at the time it reached it, then sets the clock to now and writes the
// owner's status. It returns the owner's namespace and name in the cluster.
func load(cluster *reconciletest.Cluster, clk *clocktesting.FakeClock, w *workload, pods []*corev1.Pod, now time.Time) (namespace, name string, err error) {
	earliest := now
	if created := w.job.CreationTimestamp; !created.IsZero() && created.Before(&metav1.Time{Time: earliest}) {
		earliest = created.Time
	}
	var mine []*corev1.Pod
	for _, p := range pods {
		if p == nil || p.Namespace != w.Namespace {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID != w.UID {
			continue
		}
		mine = append(mine, p)
		if isTerminal(p) {
			if t := backoff.FinishTime(p); t.Before(earliest) {
				earliest = t
			}
		}
	}
	clk.SetTime(earliest)
	stored, err := createOwner(cluster, w)
	if err != nil {
		return "", "", err
	}
	uids := map[types.UID]types.UID{}
	for _, p := range mine {
		pod := p.DeepCopy()
		pod.ResourceVersion = ""
		for i := range pod.OwnerReferences {
			if pod.OwnerReferences[i].UID == w.UID {
				pod.OwnerReferences[i].UID = stored.UID
			}
		}
		// A Job's selector and template labels were generated anew for its new
		// UID; a Task's were kept, and so are its pods' labels.
		if w.kind == owner.BatchJob {
			for k, v := range pod.Labels {
				if v == string(w.UID) {
					pod.Labels[k] = string(stored.UID)
				}
			}
		}
		created, err := cluster.AddPod(pod)
		if err != nil {
			return "", "", fmt.Errorf("pod %s: %w", p.Name, err)
		}
		uids[p.UID] = created.UID
	}
	// Bring the pods to their phases in the order they finished.
	byFinish := slices.Clone(mine)
	slices.SortStableFunc(byFinish, func(a, b *corev1.Pod) int { return backoff.FinishTime(a).Compare(backoff.FinishTime(b)) })
	k := cluster.Kubelet()
	for _, p := range byFinish {
		if p.Status.Phase == corev1.PodPending || p.Status.Phase == "" {
			continue
		}
		if isTerminal(p) {
			if t := backoff.FinishTime(p); t.After(clk.Now()) && t.Before(now) {
				clk.SetTime(t)
			}
		}
		if err := k.Run(p.Namespace, p.Name); err != nil {
			return "", "", err
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			err = k.Succeed(p.Namespace, p.Name)
		case p.Status.Phase == corev1.PodFailed:
			err = k.Fail(p.Namespace, p.Name, exitCode(p))
		case isReady(p):
			err = k.SetReady(p.Namespace, p.Name, true)
		}
		if err != nil {
			return "", "", err
		}
	}
	clk.SetTime(now)
	for _, p := range mine {
		if p.DeletionTimestamp != nil && !isTerminal(p) {
			if err := cluster.RemovePod(p.Namespace, p.Name, nil); err != nil {
				return "", "", err
			}
		}
	}
	// The status, with the uncounted UIDs mapped to the new pods.
	status := *w.Status.DeepCopy()
	if u := status.UncountedTerminatedPods; u != nil {
		for _, l := range []*[]types.UID{&u.Succeeded, &u.Failed} {
			for i, uid := range *l {
				if n, ok := uids[uid]; ok {
					(*l)[i] = n
				}
			}
		}
	}
	// The owner is unchanged since its creation: its resourceVersion still holds.
	if _, err := cluster.WriteStatus(context.Background(), stored, status); err != nil {
		return "", "", fmt.Errorf("the %s's status: %w", w.noun, err)
	}
	return stored.Namespace, stored.Name, nil
}

// createOwner creates the owner in the cluster with an empty status (its status
// names pods by UIDs that change when they are loaded): a batch/v1 Job as given,
// or a Task of the cluster's kind with the workload's metadata and its spec in
// Job terms. Both get a new UID and the API's defaults of their spec. The
// Workload returned is the stored owner, for the cluster's WriteStatus.
func createOwner(cluster *reconciletest.Cluster, w *workload) (*reconcile.Workload, error) {
	if w.kind == owner.BatchJob {
		in := w.job.DeepCopy()
		in.UID, in.ResourceVersion, in.Generation = "", "", 0
		in.Status = batchv1.JobStatus{}
		job, err := cluster.CreateJob(in)
		if err != nil {
			return nil, err
		}
		return reconcile.JobWorkload(job), nil
	}
	in := &reconciletest.Task{ObjectMeta: *w.job.ObjectMeta.DeepCopy(), Spec: *w.job.Spec.DeepCopy()}
	in.UID, in.ResourceVersion, in.Generation = "", "", 0
	if w.Deleting && in.DeletionTimestamp == nil {
		// A Workload says that its owner is being deleted, not since when.
		in.DeletionTimestamp = &metav1.Time{Time: cluster.Clock().Now()}
	}
	task, err := cluster.CreateTask(in)
	if err != nil {
		return nil, err
	}
	return reconciletest.TaskWorkload(task), nil
}

// exitCode is the first non-zero exit code of a failed pod's containers, or 1.
func exitCode(p *corev1.Pod) int32 {
	for _, s := range p.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			return t.ExitCode
		}
	}
	return 1
}

// callText writes a call of the log on one line; noun names the kind of a Task
// whose status the call writes.
func callText(c reconciletest.Call, noun string) string {
	s := string(c.Op) + " " + c.Name
	switch c.Op {
	case reconciletest.OpCreatePod:
		if c.Pod != nil {
			if ix, ok := c.Pod.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
				s += " (index " + ix + ")"
			}
		}
	case reconciletest.OpPatchPod:
		switch patch := string(c.Patch); {
		case strings.Contains(patch, "$deleteFromPrimitiveList/finalizers"):
			s += ": remove the tracking finalizer"
		case strings.Contains(patch, "ownerReferences"):
			s += ": owner reference (adopt or release)"
		default:
			s += " " + strings.TrimSpace(patch)
		}
	case reconciletest.OpUpdateJobStatus:
		if c.Job != nil {
			s += ": " + statusText(&c.Job.Status)
		}
	case reconciletest.OpUpdateStatus:
		s = string(c.Op) + " " + noun + " " + c.Name
		if c.Task != nil {
			s += ": " + statusText(&c.Task.Status)
		}
	}
	if c.Err != nil {
		s += " (error: " + c.Err.Error() + ")"
	}
	return s
}

func statusText(st *batchv1.JobStatus) string {
	s := fmt.Sprintf("active=%d ready=%d terminating=%d succeeded=%d failed=%d",
		st.Active, ptr.Deref(st.Ready, 0), ptr.Deref(st.Terminating, 0), st.Succeeded, st.Failed)
	if st.CompletedIndexes != "" {
		s += fmt.Sprintf(" completedIndexes=%q", st.CompletedIndexes)
	}
	if st.FailedIndexes != nil && *st.FailedIndexes != "" {
		s += fmt.Sprintf(" failedIndexes=%q", *st.FailedIndexes)
	}
	if u := st.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		s += fmt.Sprintf(" uncounted=%d", len(u.Succeeded)+len(u.Failed))
	}
	var conds []string
	for _, c := range st.Conditions {
		if c.Status == corev1.ConditionTrue {
			conds = append(conds, string(c.Type))
		}
	}
	if len(conds) > 0 {
		s += " conditions=" + strings.Join(conds, ",")
	}
	return s
}

func phasesText(n map[corev1.PodPhase]int) string {
	var parts []string
	for _, ph := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed} {
		if n[ph] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", ph, n[ph]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func finishedType(st *batchv1.JobStatus) (string, bool) {
	t, ok := jobstatus.Finished(st)
	if !ok {
		return "", false
	}
	return string(t) + " (" + jobstatus.FindCondition(st.Conditions, t).Reason + ")", true
}

// WriteSteps writes the steps of a what-if run for a human.
func WriteSteps(w io.Writer, steps []Step) error {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "step %d at %s:\n", s.Step, s.Time.Format(time.RFC3339))
		if len(s.Calls) == 0 {
			fmt.Fprintf(&b, "  no API call\n")
		}
		for _, c := range s.Calls {
			fmt.Fprintf(&b, "  %s\n", c)
		}
		if s.Error != "" {
			fmt.Fprintf(&b, "  sync error: %s\n", s.Error)
		}
		if s.Requeue != nil {
			fmt.Fprintf(&b, "  requeue after %s\n", *s.Requeue)
		}
		fmt.Fprintf(&b, "  after the sync and a kubelet step: status %s; pods %s\n", s.Status, s.Pods)
		if s.Finished != "" {
			fmt.Fprintf(&b, "  finished: %s\n", s.Finished)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
