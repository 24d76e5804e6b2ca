package explain

import (
	"context"
	"errors"
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

// ErrStepsOwner is wrapped by the error of Steps for an Options.Owner other than
// owner.BatchJob: the in-memory cluster of reconcile/reconciletest, which Steps
// runs on, holds and garbage-collects batch/v1 Jobs only.
var ErrStepsOwner = errors.New("steps: only batch/v1 Jobs can be stepped (reconcile/reconciletest's in-memory cluster runs batch/v1 Jobs only)")

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
	// Status summarizes the Job status after the step, Pods the pods by phase.
	Status string `json:"status"`
	Pods   string `json:"pods"`
	// Finished is the Job's terminal condition after the step, if any.
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
func Steps(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod, opts Options, so StepOptions) ([]Step, error) {
	if job == nil {
		return nil, fmt.Errorf("%w: job is nil", ErrNoJob)
	}
	if so.Steps <= 0 {
		return nil, fmt.Errorf("steps: must be positive, got %d", so.Steps)
	}
	if opts.Owner != (owner.Kind{}) && opts.Owner != owner.BatchJob {
		return nil, fmt.Errorf("%w: owner kind %s", ErrStepsOwner, opts.Owner)
	}
	controller := opts.Controller
	if controller == "" {
		controller = ControllerFor(job)
	}
	if len(opts.Assume) > 0 {
		var err error
		if pods, err = applyAssumptions(newWorkload(plan.JobWorkload(job), job, opts.Owner), pods, opts.Assume, opts.Now); err != nil {
			return nil, err
		}
	}
	clk := clocktesting.NewFakeClock(opts.Now)
	cluster := reconciletest.NewCluster(reconciletest.Options{Clock: clk})
	stored, err := load(cluster, clk, job, pods, opts.Now)
	if err != nil {
		return nil, fmt.Errorf("loading the state into the in-memory cluster: %w", err)
	}
	r, err := reconcile.New(reconcile.Config{Name: controller, Clock: clk, Backoff: opts.Backoff, FinalizerRemovalParallelism: 1}, cluster)
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
	var out []Step
	for range so.Steps {
		at := clk.Now()
		sr, err := d.Step(ctx, stored.Namespace, stored.Name)
		if err != nil {
			return out, err
		}
		st := Step{Step: sr.Step, Time: at.UTC()}
		for _, c := range cluster.Calls() {
			st.Calls = append(st.Calls, callText(c))
		}
		cluster.ResetCalls()
		if sr.Err != nil {
			st.Error = sr.Err.Error()
		}
		if sr.Result.RequeueAfter > 0 {
			st.Requeue = ptr.To(Duration(sr.Result.RequeueAfter))
		}
		if sr.Job == nil {
			return append(out, st), errors.New("the Job is gone from the in-memory cluster")
		}
		st.Status = statusText(&sr.Job.Status)
		st.Pods = phasesText(cluster.CountPods(sr.Job))
		if t, ok := finishedType(sr.Job); ok {
			st.Finished = t
		}
		out = append(out, st)
		if d.Done(sr.Job) {
			break
		}
	}
	return out, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// load creates the Job and its pods in the cluster and brings each pod to its
// state, at the time it reached it, then sets the clock to now.
func load(cluster *reconciletest.Cluster, clk *clocktesting.FakeClock, job *batchv1.Job, pods []*corev1.Pod, now time.Time) (*batchv1.Job, error) {
	earliest := now
	if !job.CreationTimestamp.IsZero() && job.CreationTimestamp.Before(&metav1.Time{Time: earliest}) {
		earliest = job.CreationTimestamp.Time
	}
	var mine []*corev1.Pod
	for _, p := range pods {
		if p == nil || p.Namespace != job.Namespace {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID != job.UID {
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
	in := job.DeepCopy()
	in.UID, in.ResourceVersion, in.Generation = "", "", 0
	status := in.Status
	in.Status = batchv1.JobStatus{}
	stored, err := cluster.CreateJob(in)
	if err != nil {
		return nil, err
	}
	uids := map[types.UID]types.UID{}
	for _, p := range mine {
		pod := p.DeepCopy()
		pod.ResourceVersion = ""
		for i := range pod.OwnerReferences {
			if pod.OwnerReferences[i].UID == job.UID {
				pod.OwnerReferences[i].UID = stored.UID
			}
		}
		for k, v := range pod.Labels {
			if v == string(job.UID) {
				pod.Labels[k] = string(stored.UID)
			}
		}
		created, err := cluster.AddPod(pod)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", p.Name, err)
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
			return nil, err
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
			return nil, err
		}
	}
	clk.SetTime(now)
	for _, p := range mine {
		if p.DeletionTimestamp != nil && !isTerminal(p) {
			if err := cluster.RemovePod(p.Namespace, p.Name, nil); err != nil {
				return nil, err
			}
		}
	}
	// The status, with the uncounted UIDs mapped to the new pods.
	if u := status.UncountedTerminatedPods; u != nil {
		u = u.DeepCopy()
		for _, l := range []*[]types.UID{&u.Succeeded, &u.Failed} {
			for i, uid := range *l {
				if n, ok := uids[uid]; ok {
					(*l)[i] = n
				}
			}
		}
		status.UncountedTerminatedPods = u
	}
	cur, err := cluster.GetJob(context.Background(), stored.Namespace, stored.Name)
	if err != nil {
		return nil, err
	}
	cur.Status = status
	if _, err := cluster.UpdateJobStatus(context.Background(), cur); err != nil {
		return nil, fmt.Errorf("the Job's status: %w", err)
	}
	return stored, nil
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

func callText(c reconciletest.Call) string {
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

func finishedType(job *batchv1.Job) (string, bool) {
	t, ok := jobstatus.Finished(&job.Status)
	if !ok {
		return "", false
	}
	return string(t) + " (" + jobstatus.FindCondition(job.Status.Conditions, t).Reason + ")", true
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
