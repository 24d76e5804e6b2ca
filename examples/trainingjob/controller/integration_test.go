package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
)

var (
	completed      = []string{"SuccessCriteriaMet=True/CompletionsReached", "Complete=True/CompletionsReached"}
	failedByPolicy = []string{"FailureTarget=True/PodFailurePolicy", "Failed=True/PodFailurePolicy"}
)

// (a) Three workers, two at a time, all succeed: one pod per index, the run
// completes with exact counts, and the pods are owned by the TrainingJob.
func TestRunToCompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tj := e.newTJ("run", 3)
	tj.Spec.Parallelism = ptr.To[int32](2)
	e.create(tj)
	pods := e.waitRunning(2)
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.Kind != "TrainingJob" || ref.APIVersion != v1alpha1.SchemeGroupVersion.String() || ref.Name != "run" {
			t.Errorf("pod %s: controller reference %+v, want the TrainingJob run", p.Name, ref)
		}
		if !controller.Kind.HasFinalizer(p) {
			t.Errorf("pod %s has no finalizer %s while running", p.Name, controller.Finalizer)
		}
	}
	e.finishAll(scenarios.Succeed())
	got := e.waitFinished("run")
	want := finalStatus{Succeeded: 3, CompletedIndexes: "0-2", Conditions: completed}
	if diff := cmp.Diff(want, statusOf(got)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	if got.Status.CompletionTime == nil {
		t.Error("completionTime not set")
	}
	e.checkCreated(map[string]int{"0": 1, "1": 1, "2": 1})
	e.checkDone(got)
	poll.Eventually(e.t, "events Completed and SuccessfulCreate recorded on the TrainingJob", func() (bool, string) {
		list, err := clientset.EventsV1().Events(e.ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		reasons := map[string]int{}
		for _, ev := range list.Items {
			if ev.Regarding.Kind == "TrainingJob" && ev.Regarding.UID == got.UID {
				reasons[ev.Reason]++
			}
		}
		return reasons["Completed"] == 1 && reasons["SuccessfulCreate"] > 0, fmt.Sprint(reasons)
	})
	// The controller's metrics, under the kind's own prefix, in controller-runtime's
	// registry (which the manager serves): the tests' controllers share it, so
	// only their presence is checked.
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case f.GetName() == "trainingjob_controller_jobs_finished_total" && labels["result"] == "succeeded" && m.GetCounter().GetValue() > 0,
				f.GetName() == "trainingjob_controller_job_pods_creation_total" && labels["reason"] == "new" && m.GetCounter().GetValue() >= 3,
				f.GetName() == "trainingjob_controller_stale_sync_skips_total" && labels["group"] == v1alpha1.GroupName && labels["resource"] == "trainingjobs":
				seen[f.GetName()] = true
			}
		}
	}
	if len(seen) != 3 {
		t.Errorf("trainingjob_controller_* metrics seen: %v, want jobs_finished_total{result=succeeded}, job_pods_creation_total{reason=new} >= 3 and stale_sync_skips_total{group=%s,resource=trainingjobs}", seen, v1alpha1.GroupName)
	}
}

// (b) A failed worker is retried after spec.backoff.initial (3s), not the
// controller's default (10s): the retry appears no sooner than the delay allows
// (the pod's finish time is stored to the second, hence 2s) and before the default
// could have let it.
func TestRetryWaitsItsBackoff(t *testing.T) {
	t.Parallel()
	const delay = 3 * time.Second
	e := newEnv(t)
	tj := e.newTJ("retry", 1)
	tj.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	tj.Spec.Backoff = &v1alpha1.RetryBackoff{Initial: &metav1.Duration{Duration: delay}, Max: &metav1.Duration{Duration: time.Minute}}
	e.create(tj)
	first := e.waitRunning(1)[0]
	e.finish(first, scenarios.FailWith(1))
	var retry *corev1.Pod
	poll.Eventually(e.t, "a retry of index 0", func() (bool, string) {
		pods := e.pods()
		for _, p := range pods {
			if p.UID != first.UID {
				retry = p
				return true, ""
			}
		}
		return false, describePods(pods)
	})
	seen := time.Now()
	e.mu.Lock()
	failedAt := e.failedAt[first.Name]
	e.mu.Unlock()
	// The default delay (10s) would bring the retry no sooner than 9s.
	if waited := seen.Sub(failedAt); waited < delay-time.Second || waited > 8500*time.Millisecond {
		t.Errorf("the retry came %v after the failure, want about %v (from %v to 8.5s)", waited, delay, delay-time.Second)
	}
	if got := retry.Annotations[batchv1.JobIndexFailureCountAnnotation]; got != "1" {
		t.Errorf("retry annotation %s = %q, want \"1\"", batchv1.JobIndexFailureCountAnnotation, got)
	}
	e.finish(retry, scenarios.Succeed())
	got := e.waitFinished("retry")
	want := finalStatus{Succeeded: 1, Failed: 1, CompletedIndexes: "0", Conditions: completed}
	if diff := cmp.Diff(want, statusOf(got)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	e.checkCreated(map[string]int{"0": 2})
	e.checkDone(got)
}

// (c) A worker exiting with 42, listed in a FailJob rule, fails the run at once
// although its index may be retried twice: no replacement starts, and the other
// workers are stopped and counted as failed.
func TestListedExitCodeFailsTheRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tj := e.newTJ("fail", 3)
	tj.Spec.BackoffLimitPerIndex = ptr.To[int32](2)
	tj.Spec.PodFailurePolicy = &v1alpha1.PodFailurePolicy{Rules: []v1alpha1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &v1alpha1.PodFailurePolicyOnExitCodes{ContainerName: ptr.To("trainer"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
	}}}
	e.create(tj)
	pods := e.waitRunning(3)
	failing := podOf(pods, "1")
	e.finish(failing, scenarios.FailWith(42))
	got := e.waitFinished("fail")
	want := finalStatus{Failed: 3, Conditions: failedByPolicy}
	if diff := cmp.Diff(want, statusOf(got)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	msg := fmt.Sprintf("Container trainer for pod %s/%s failed with exit code 42 matching FailJob rule at index 0", e.ns, failing.Name)
	for _, c := range got.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Message != msg {
			t.Errorf("Failed condition message = %q, want %q", c.Message, msg)
		}
	}
	e.checkDone(got)
	poll.Consistently(e.t, "no replacement starts", func() (bool, string) {
		n := e.createdPerIndex()
		return n["0"] == 1 && n["1"] == 1 && n["2"] == 1 && len(n) == 3, fmt.Sprint(n)
	})
}

// (d) The controller stops while one worker has succeeded and counted, one has
// succeeded and one has failed uncounted; a new controller (no state) finishes the
// run counting each exactly once, and retries the failed index once.
func TestControllerRestartMidRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tj := e.newTJ("restart", 4)
	tj.Spec.Parallelism = ptr.To[int32](2)
	tj.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	tj.Spec.Backoff = &v1alpha1.RetryBackoff{Initial: &metav1.Duration{Duration: 100 * time.Millisecond}}
	e.create(tj)
	pods := e.waitRunning(2)
	e.finish(pods[0], scenarios.Succeed())
	poll.Eventually(e.t, "succeeded=1", func() (bool, string) {
		s := e.get("restart").Status
		return s.Succeeded == 1, fmt.Sprintf("%+v", s)
	})
	running := e.waitRunning(2)

	e.stopController()
	e.finish(running[0], scenarios.Succeed())
	e.finish(running[1], scenarios.FailWith(1))
	poll.Eventually(e.t, "both pods finished", func() (bool, string) {
		pods := e.pods()
		return count(pods, func(p *corev1.Pod) bool {
			return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		}) == 3, describePods(pods)
	})
	poll.Consistently(e.t, "nothing counted while stopped", func() (bool, string) {
		s := e.get("restart").Status
		return s.Succeeded == 1 && s.Failed == 0 && len(e.pods()) == 3, fmt.Sprintf("%+v", s)
	})

	e.finishAll(scenarios.Succeed())
	e.startController()
	got := e.waitFinished("restart")
	want := finalStatus{Succeeded: 4, Failed: 1, CompletedIndexes: "0-3", Conditions: completed}
	if diff := cmp.Diff(want, statusOf(got)); diff != "" {
		t.Errorf("final status (-want +got):\n%s", diff)
	}
	wantCreated := map[string]int{"0": 1, "1": 1, "2": 1, "3": 1}
	wantCreated[index(running[1])]++
	e.checkCreated(wantCreated)
	e.checkDone(got)
}

// (e) The TrainingJob is deleted while its workers run: the orphan cleanup removes
// the tracking finalizer of every pod (envtest runs no garbage collector, so the pods
// stay, running and untracked), and nothing more is created.
func TestDeletedWhileRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(e.newTJ("gone", 3))
	pods := e.waitRunning(3)
	if n := count(pods, tracked); n != 3 {
		t.Fatalf("%d of 3 running pods carry the tracking finalizer, want 3:%s", n, describePods(pods))
	}
	if err := k8s.Delete(t.Context(), e.get("gone"), client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatalf("deleting the TrainingJob: %v", err)
	}
	poll.Eventually(e.t, "no pod keeps the tracking finalizer", func() (bool, string) {
		pods := e.pods()
		return count(pods, tracked) == 0 && count(pods, running) == 3, describePods(pods)
	})
	poll.Consistently(e.t, "nothing created after the deletion", func() (bool, string) {
		n := e.createdPerIndex()
		return len(e.pods()) == 3 && n["0"] == 1 && n["1"] == 1 && n["2"] == 1 && len(n) == 3, fmt.Sprint(n)
	})
	e.checkWrites()
}

// (f) The API server checks the status it stores: a run completes with every status
// write of the controller accepted (checkDone), the stored status passes the same
// checks when written back, and writes that break the schema's rules are refused,
// each naming its field.
func TestStoredStatusIsValidated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.finishAll(scenarios.Succeed())
	e.create(e.newTJ("valid", 2))
	stored := e.waitFinished("valid")
	e.checkDone(stored)
	e.stopController()
	if err := k8s.Status().Update(t.Context(), stored.DeepCopy()); err != nil {
		t.Fatalf("writing the stored status back: %v", err)
	}
	tests := []struct {
		name      string
		mutate    func(*v1alpha1.TrainingJobStatus)
		wantField string
	}{
		{name: "succeeded decreases", mutate: func(s *v1alpha1.TrainingJobStatus) { s.Succeeded = 1 }, wantField: "status.succeeded"},
		{name: "succeeded above workers", mutate: func(s *v1alpha1.TrainingJobStatus) { s.Succeeded = 3 }, wantField: "status.succeeded"},
		{name: "active pods on a finished run", mutate: func(s *v1alpha1.TrainingJobStatus) { s.Active = 1 }, wantField: "status.active"},
		{name: "a finished run no longer finished", mutate: func(s *v1alpha1.TrainingJobStatus) {
			s.Conditions = s.Conditions[:1]
			s.CompletionTime = nil
		}, wantField: "status.conditions"},
		{name: "Complete and Failed", mutate: func(s *v1alpha1.TrainingJobStatus) {
			s.Conditions = append(s.Conditions, batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
		}, wantField: "status.conditions"},
		{name: "completedIndexes not intervals", mutate: func(s *v1alpha1.TrainingJobStatus) { s.CompletedIndexes = "0-1," }, wantField: "status.completedIndexes"},
		{name: "negative failed", mutate: func(s *v1alpha1.TrainingJobStatus) { s.Failed = -1 }, wantField: "status.failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := stored.DeepCopy()
			tt.mutate(&bad.Status)
			err := k8s.Status().Update(t.Context(), bad)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("status write = %v, want Invalid", err)
			}
			if !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("status write error %q does not name %s", err, tt.wantField)
			}
		})
	}
	if diff := cmp.Diff(statusOf(stored), statusOf(e.get("valid"))); diff != "" {
		t.Errorf("stored status changed by refused writes (-before +after):\n%s", diff)
	}
}

// checkCreated compares the number of pods ever created per index with want.
func (e *env) checkCreated(want map[string]int) {
	e.t.Helper()
	if diff := cmp.Diff(want, e.createdPerIndex()); diff != "" {
		e.t.Errorf("pods created per index (-want +got):\n%s", diff)
	}
}
