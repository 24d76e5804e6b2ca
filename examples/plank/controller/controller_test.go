package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/plank/controller"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

func TestSuccess(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newRun(t, ns, "unit", nil)

	rj := waitState(t, ns, "unit", v1alpha1.StatePending)
	if rj.Status.PodName != "unit" || rj.Status.PendingTime == nil || rj.Status.StartTime == nil || rj.Status.Description != controller.MessageTriggered {
		t.Fatalf("pending status = %+v, want podName unit, startTime, pendingTime and %q", rj.Status, controller.MessageTriggered)
	}
	pod := waitPod(t, ns, "unit", "")
	if !metav1.IsControlledBy(pod, rj) || pod.Labels[controller.LabelRunUID] != string(rj.UID) {
		t.Fatalf("pod owner references %+v, labels %v: want controlled by the run and labelled with its UID", pod.OwnerReferences, pod.Labels)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("pod restartPolicy = %q, want Never", pod.Spec.RestartPolicy)
	}

	startPod(t, pod, corev1.PodRunning)
	endPod(t, pod, corev1.PodSucceeded, 0, "")
	rj = waitState(t, ns, "unit", v1alpha1.StateSuccess)
	if rj.Status.Description != "Job succeeded." {
		t.Errorf("description = %q, want %q", rj.Status.Description, "Job succeeded.")
	}
	if !podExists(t, ns, "unit") {
		t.Error("the pod of a successful run was deleted, want it kept")
	}
}

func TestFailure(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newRun(t, ns, "unit", nil)
	pod := waitPod(t, ns, "unit", "")
	startPod(t, pod, corev1.PodRunning)
	endPod(t, pod, corev1.PodFailed, 2, "")
	rj := waitState(t, ns, "unit", v1alpha1.StateFailure)
	if rj.Status.Description != "Job failed." {
		t.Errorf("description = %q, want %q", rj.Status.Description, "Job failed.")
	}
}

func TestFalseSuccess(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newRun(t, ns, "unit", nil)
	pod := waitPod(t, ns, "unit", "")
	startPod(t, pod, corev1.PodRunning)
	endPod(t, pod, corev1.PodSucceeded, 1, "") // the pod claims success, its container exited 1
	rj := waitState(t, ns, "unit", v1alpha1.StateError)
	if !strings.HasPrefix(rj.Status.Description, "Pod was in succeeded phase but some containers didn't finish") || !strings.Contains(rj.Status.Description, "main") {
		t.Errorf("description = %q, want %q naming container main", rj.Status.Description, "Pod was in succeeded phase but some containers didn't finish")
	}
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	two := &metav1.Duration{Duration: 2 * time.Second}
	tests := []struct {
		name      string
		timeouts  v1alpha1.PodTimeouts
		kubelet   func(*testing.T, *corev1.Pod) // nil: the pod is never scheduled
		wantState v1alpha1.State
		wantDesc  string
	}{
		{
			name:      "unscheduled",
			timeouts:  v1alpha1.PodTimeouts{Unscheduled: two},
			wantState: v1alpha1.StateError,
			wantDesc:  plaindl.KindUnscheduled.Reason(),
		},
		{
			name:      "pending",
			timeouts:  v1alpha1.PodTimeouts{Pending: two},
			kubelet:   func(t *testing.T, p *corev1.Pod) { startPod(t, p, corev1.PodPending) },
			wantState: v1alpha1.StateError,
			wantDesc:  plaindl.KindPending.Reason(),
		},
		{
			name:      "running",
			timeouts:  v1alpha1.PodTimeouts{Running: two},
			kubelet:   func(t *testing.T, p *corev1.Pod) { startPod(t, p, corev1.PodRunning) },
			wantState: v1alpha1.StateAborted,
			wantDesc:  plaindl.KindRunning.Reason(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			newRun(t, ns, "slow", func(s *v1alpha1.RunJobSpec) { s.Timeouts = &tt.timeouts })
			pod := waitPod(t, ns, "slow", "")
			began := time.Now()
			if tt.kubelet != nil {
				tt.kubelet(t, pod)
			}
			rj := waitState(t, ns, "slow", tt.wantState)
			// Timestamps have one-second resolution: the timeout expires 1-2s
			// after the kubelet's step.
			if took := time.Since(began); took < 900*time.Millisecond {
				t.Errorf("the %s timeout of 2s expired after %v", tt.name, took)
			}
			if rj.Status.Description != tt.wantDesc {
				t.Errorf("description = %q, want %q", rj.Status.Description, tt.wantDesc)
			}
			waitPodGone(t, ns, "slow", pod.UID)
		})
	}
}

func TestEvictionRetried(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newRun(t, ns, "e2e", nil)
	first := waitPod(t, ns, "e2e", "")
	startPod(t, first, corev1.PodRunning)
	evictPod(t, first)

	second := waitPod(t, ns, "e2e", first.UID)
	rj := getRun(t, ns, "e2e")
	if rj.Status.State != v1alpha1.StatePending || rj.Status.Revivals != 1 || rj.Status.RevivedPodUID != first.UID {
		t.Fatalf("after the replacement: state %q, revivals %d, revived pod %q; want pending, 1, %q",
			rj.Status.State, rj.Status.Revivals, rj.Status.RevivedPodUID, first.UID)
	}
	startPod(t, second, corev1.PodRunning)
	endPod(t, second, corev1.PodSucceeded, 0, "")
	waitState(t, ns, "e2e", v1alpha1.StateSuccess)
}

func TestErrorOnEviction(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newRun(t, ns, "e2e", func(s *v1alpha1.RunJobSpec) { s.ErrorOnEviction = true })
	pod := waitPod(t, ns, "e2e", "")
	evictPod(t, pod)
	rj := waitState(t, ns, "e2e", v1alpha1.StateError)
	if rj.Status.Description != "Job pod was evicted by the cluster." || rj.Status.Revivals != 0 {
		t.Errorf("description %q, revivals %d; want %q, 0", rj.Status.Description, rj.Status.Revivals, "Job pod was evicted by the cluster.")
	}
	if !podExists(t, ns, "e2e") {
		t.Error("the evicted pod was deleted, want it left for inspection")
	}
}

func TestMaxRevivals(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newRun(t, ns, "e2e", func(s *v1alpha1.RunJobSpec) { s.MaxRevivals = ptr.To[int32](1) })
	first := waitPod(t, ns, "e2e", "")
	evictPod(t, first)
	second := waitPod(t, ns, "e2e", first.UID)
	evictPod(t, second)

	rj := waitState(t, ns, "e2e", v1alpha1.StateError)
	want := "Job pod reached max revivals (1) after being stopped unexpectedly (evicted)"
	if rj.Status.Description != want || rj.Status.Revivals != 1 {
		t.Errorf("description %q, revivals %d; want %q, 1", rj.Status.Description, rj.Status.Revivals, want)
	}
}

func TestNodeLostRetried(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newRun(t, ns, "e2e", nil)
	first := waitPod(t, ns, "e2e", "")
	startPod(t, first, corev1.PodRunning)

	// The node stops responding: the pod is marked NodeLost and deleted, but a
	// finalizer (standing in for the kubelet that never confirms) keeps it.
	const hold = "test.jobkit.dev/hold"
	updatePod(t, first, func(p *corev1.Pod) { p.Finalizers = append(p.Finalizers, hold) })
	setPodStatus(t, first, func(p *corev1.Pod) {
		p.Status.Reason = "NodeLost"
		p.Status.Message = "Node worker-1 which was running pod e2e is unresponsive"
	})
	if err := k8s.Delete(context.Background(), first); err != nil {
		t.Fatalf("deleting the pod: %v", err)
	}

	// The revival is recorded while the old pod still exists.
	rj := waitRun(t, ns, "e2e", "revived once", func(rj *v1alpha1.RunJob) bool { return rj.Status.Revivals == 1 })
	if rj.Status.RevivedPodUID != first.UID || rj.Status.State != v1alpha1.StatePending {
		t.Fatalf("status = %+v, want pending with revivedPodUID %q", rj.Status, first.UID)
	}
	if !podExists(t, ns, "e2e") {
		t.Fatal("the terminating pod vanished before the test released it")
	}

	updatePod(t, first, func(p *corev1.Pod) { p.Finalizers = nil })
	second := waitPod(t, ns, "e2e", first.UID)
	startPod(t, second, corev1.PodRunning)
	endPod(t, second, corev1.PodSucceeded, 0, "")
	rj = waitState(t, ns, "e2e", v1alpha1.StateSuccess)
	if rj.Status.Revivals != 1 {
		t.Errorf("revivals = %d, want 1 (the terminating pod counted once)", rj.Status.Revivals)
	}
}

// TestReporterFinalizer checks the pod effects of runplan: the reporter's
// finalizer is released from a pod that is replaced, whether the controller
// deletes it (evicted) or it is already terminating (node lost), and kept on
// the pod of a finished run.
func TestReporterFinalizer(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	withReporter := func(p *corev1.Pod) { p.Finalizers = append(p.Finalizers, reporter) }
	newRun(t, ns, "e2e", nil)

	// Evicted: the controller releases the finalizer and deletes the pod; with
	// the finalizer kept, the pod would stay and block its replacement.
	first := waitPod(t, ns, "e2e", "")
	updatePod(t, first, withReporter)
	evictPod(t, first)
	second := waitPod(t, ns, "e2e", first.UID)

	// Node lost: the pod is already terminating, held by the reporter and by a
	// finalizer standing in for the kubelet; only the reporter's is released.
	const hold = "test.jobkit.dev/hold"
	updatePod(t, second, func(p *corev1.Pod) { p.Finalizers = append(p.Finalizers, reporter, hold) })
	startPod(t, second, corev1.PodRunning)
	setPodStatus(t, second, func(p *corev1.Pod) { p.Status.Reason = "NodeLost" })
	if err := k8s.Delete(context.Background(), second); err != nil {
		t.Fatalf("deleting the pod: %v", err)
	}
	deadline := time.Now().Add(waitTimeout)
	for {
		var cur corev1.Pod
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(second), &cur); err != nil {
			t.Fatalf("getting the terminating pod: %v", err)
		}
		if slices.Equal(cur.Finalizers, []string{hold}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("terminating pod finalizers = %v, want [%s]", cur.Finalizers, hold)
		}
		time.Sleep(20 * time.Millisecond)
	}
	updatePod(t, second, func(p *corev1.Pod) { p.Finalizers = nil })

	// Finished: the pod keeps the reporter's finalizer for the reporter.
	third := waitPod(t, ns, "e2e", second.UID)
	updatePod(t, third, withReporter)
	startPod(t, third, corev1.PodRunning)
	endPod(t, third, corev1.PodSucceeded, 0, "")
	if rj := waitState(t, ns, "e2e", v1alpha1.StateSuccess); rj.Status.Revivals != 2 {
		t.Errorf("revivals = %d, want 2", rj.Status.Revivals)
	}
	var cur corev1.Pod
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(third), &cur); err != nil || !slices.Contains(cur.Finalizers, reporter) {
		t.Errorf("finished pod: finalizers %v (err %v), want %s kept", cur.Finalizers, err, reporter)
	}
	updatePod(t, third, func(p *corev1.Pod) { p.Finalizers = nil })
}

func TestUncreatablePod(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newRun(t, ns, "bad", func(s *v1alpha1.RunJobSpec) { s.PodSpec.Containers[0].Name = "Not_A_DNS_Label" })
	rj := waitState(t, ns, "bad", v1alpha1.StateError)
	if !strings.HasPrefix(rj.Status.Description, runplan.MessageCreateRefused+": ") || !strings.Contains(rj.Status.Description, "Invalid value") {
		t.Errorf("description = %q, want %q with the API server's 422", rj.Status.Description, runplan.MessageCreateRefused)
	}
	if podExists(t, ns, "bad") {
		t.Error("a pod exists for a run whose pod cannot be created")
	}
}

func TestAbort(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newRun(t, ns, "running", nil)
	newRun(t, ns, "waiting", func(s *v1alpha1.RunJobSpec) { s.QueueName = queueShut })
	pod := waitPod(t, ns, "running", "")
	startPod(t, pod, corev1.PodRunning)
	waitDescription(t, ns, "waiting", controller.MessageWaiting+": ")

	for _, name := range []string{"running", "waiting"} {
		updateRunStatus(t, ns, name, func(st *v1alpha1.RunJobStatus) { st.State = v1alpha1.StateAborted })
	}
	for _, name := range []string{"running", "waiting"} {
		rj := waitState(t, ns, name, v1alpha1.StateAborted)
		if rj.Status.Description != controller.MessageAborted {
			t.Errorf("%s: description = %q, want %q", name, rj.Status.Description, controller.MessageAborted)
		}
	}
	waitPodGone(t, ns, "running", pod.UID)
	if podExists(t, ns, "waiting") {
		t.Error("an aborted run that was waiting got a pod")
	}
}

func TestDedupe(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newRun(t, ns, "old", func(s *v1alpha1.RunJobSpec) { s.JobName, s.DedupeKey = "unit", "pr-1" })
	oldPod := waitPod(t, ns, "old", "")
	startPod(t, oldPod, corev1.PodRunning)
	// Creation timestamps have one-second resolution: make "new" newer.
	time.Sleep(time.Until(getRun(t, ns, "old").CreationTimestamp.Add(1100 * time.Millisecond)))

	newRun(t, ns, "other-job", func(s *v1alpha1.RunJobSpec) { s.JobName, s.DedupeKey = "lint", "pr-1" })
	newRun(t, ns, "no-key", func(s *v1alpha1.RunJobSpec) { s.JobName = "unit" })
	newRun(t, ns, "new", func(s *v1alpha1.RunJobSpec) { s.JobName, s.DedupeKey = "unit", "pr-1" })

	rj := waitState(t, ns, "old", v1alpha1.StateAborted)
	if want := controller.MessageSuperseded + " new."; rj.Status.Description != want {
		t.Errorf("old: description = %q, want %q", rj.Status.Description, want)
	}
	waitPodGone(t, ns, "old", oldPod.UID)
	for _, name := range []string{"new", "other-job", "no-key"} {
		waitState(t, ns, name, v1alpha1.StatePending)
	}
}

func TestMaxConcurrencyInCreationOrder(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	build := func(rj *v1alpha1.RunJob) bool { return rj.Spec.JobName == "build" }
	counter := countPending(t, ns, build)
	spec := func(s *v1alpha1.RunJobSpec) { s.JobName, s.MaxConcurrency = "build", 1 }
	// The controller can only order the runs it has seen: a run created in the
	// same second as an earlier one but with a lower UID counts as older, yet
	// the earlier one may have started before it existed. So a first run takes
	// the slot, and the others queue up behind it.
	newRun(t, ns, "build-0", spec)
	waitState(t, ns, "build-0", v1alpha1.StatePending)
	names := []string{"build-a", "build-b", "build-c"}
	for _, n := range names {
		newRun(t, ns, n, spec)
	}
	newRun(t, ns, "unrelated", nil) // another job name is not held back
	waitState(t, ns, "unrelated", v1alpha1.StatePending)

	order := append([]string{"build-0"}, creationOrder(t, ns, names...)...)
	for i, name := range order {
		waitState(t, ns, name, v1alpha1.StatePending)
		for _, later := range order[i+1:] {
			rj := waitDescription(t, ns, later, `named "build"`)
			if rj.Status.State != v1alpha1.StateTriggered {
				t.Fatalf("%s started before %s", later, name)
			}
		}
		pod := waitPod(t, ns, name, "")
		endPod(t, pod, corev1.PodSucceeded, 0, "")
		waitState(t, ns, name, v1alpha1.StateSuccess)
	}
	if got := counter.Max(); got != 1 {
		t.Errorf("at most %d runs of job build were pending at once, want 1", got)
	}
}

func TestQueueCapacity(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	counter := countPending(t, ns, func(rj *v1alpha1.RunJob) bool { return rj.Spec.QueueName == queueOne })
	spec := func(s *v1alpha1.RunJobSpec) { s.QueueName = queueOne }
	newRun(t, ns, "q-first", spec) // takes the slot, see TestMaxConcurrencyInCreationOrder
	waitState(t, ns, "q-first", v1alpha1.StatePending)
	names := []string{"q-lint", "q-unit", "q-e2e"} // different job names, one queue
	for _, n := range names {
		newRun(t, ns, n, spec)
	}
	newRun(t, ns, "closed", func(s *v1alpha1.RunJobSpec) { s.QueueName = queueShut })
	newRun(t, ns, "unknown", func(s *v1alpha1.RunJobSpec) { s.QueueName = "nope" })

	order := append([]string{"q-first"}, creationOrder(t, ns, names...)...)
	for i, name := range order {
		waitState(t, ns, name, v1alpha1.StatePending)
		for _, later := range order[i+1:] {
			rj := waitDescription(t, ns, later, fmt.Sprintf("in queue %q", queueOne))
			if rj.Status.State != v1alpha1.StateTriggered {
				t.Fatalf("%s started before %s", later, name)
			}
		}
		pod := waitPod(t, ns, name, "")
		endPod(t, pod, corev1.PodFailed, 1, "")
		waitState(t, ns, name, v1alpha1.StateFailure)
	}
	if got := counter.Max(); got != 1 {
		t.Errorf("at most %d runs of queue %s were pending at once, want 1", got, queueOne)
	}

	waitDescription(t, ns, "closed", "capacity 0")
	waitDescription(t, ns, "unknown", `Invalid configuration: runplan: Run.Queue="nope": not a queue of Limits.Queues`)
	for _, name := range []string{"closed", "unknown"} {
		if rj := getRun(t, ns, name); rj.Status.State != v1alpha1.StateTriggered || podExists(t, ns, name) {
			t.Errorf("%s: state %q, pod exists %v; want triggered without a pod", name, rj.Status.State, podExists(t, ns, name))
		}
	}
}

func TestMaxPending(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	counter := countPending(t, ns, func(*v1alpha1.RunJob) bool { return true })
	names := []string{"p-1", "p-2", "p-3", "p-4", "p-5"}
	for _, n := range names {
		newRun(t, ns, n, nil)
	}
	order := creationOrder(t, ns, names...)
	// Triggered runs do not count against the global cap, so order is not
	// guaranteed there (as in plank): count instead.
	pendingNow := func() []string {
		var out []string
		for _, n := range names {
			if getRun(t, ns, n).Status.State == v1alpha1.StatePending {
				out = append(out, n)
			}
		}
		return out
	}
	deadline := time.Now().Add(waitTimeout)
	for len(pendingNow()) < maxPending {
		if time.Now().After(deadline) {
			t.Fatalf("pending runs %v, want %d", pendingNow(), maxPending)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var waiting []string
	for _, n := range order {
		if getRun(t, ns, n).Status.State != v1alpha1.StatePending {
			waiting = append(waiting, n)
		}
	}
	for _, n := range waiting {
		waitDescription(t, ns, n, fmt.Sprintf("at most %d may be", maxPending))
	}
	// Finish the pending runs one by one: the waiting runs follow.
	done := map[string]bool{}
	for len(done) < len(names) {
		running := pendingNow()
		if len(running) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no run pending, %d of %d done", len(done), len(names))
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		pod := waitPod(t, ns, running[0], "")
		endPod(t, pod, corev1.PodSucceeded, 0, "")
		waitState(t, ns, running[0], v1alpha1.StateSuccess)
		done[running[0]] = true
	}
	if got := counter.Max(); got != maxPending {
		t.Errorf("at most %d runs were pending at once, want %d", got, maxPending)
	}
}

// TestCRDValidation checks that the API server, through the CRD's schema,
// rejects what the controller would otherwise have to reject.
func TestCRDValidation(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	tests := []struct {
		name    string
		edit    func(*v1alpha1.RunJobSpec)
		wantErr string
	}{
		{name: "empty job name", edit: func(s *v1alpha1.RunJobSpec) { s.JobName = "" }, wantErr: "spec.jobName"},
		{name: "negative max concurrency", edit: func(s *v1alpha1.RunJobSpec) { s.MaxConcurrency = -1 }, wantErr: "spec.maxConcurrency"},
		{name: "negative max revivals", edit: func(s *v1alpha1.RunJobSpec) { s.MaxRevivals = ptr.To[int32](-1) }, wantErr: "spec.maxRevivals"},
		{name: "negative timeout", edit: func(s *v1alpha1.RunJobSpec) {
			s.Timeouts = &v1alpha1.PodTimeouts{Pending: &metav1.Duration{Duration: -time.Second}}
		}, wantErr: "spec.timeouts.pending"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rj := &v1alpha1.RunJob{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("invalid-%d", i)},
				Spec:       v1alpha1.RunJobSpec{JobName: "unit", PodSpec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}},
			}
			tt.edit(&rj.Spec)
			err := k8s.Create(context.Background(), rj)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Create(RunJob with %s) = %v, want Invalid on %s", tt.name, err, tt.wantErr)
			}
		})
	}

	t.Run("spec is immutable", func(t *testing.T) {
		newRun(t, ns, "immutable", func(s *v1alpha1.RunJobSpec) { s.QueueName = queueShut })
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // the controller writes its status meanwhile
			rj := getRun(t, ns, "immutable")
			rj.Spec.JobName = "other"
			return k8s.Update(context.Background(), rj)
		})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec is immutable") {
			t.Errorf("Update(spec.jobName) = %v, want Invalid: spec is immutable", err)
		}
	})
}

// TestSample creates the sample RunJob of the README and sees it start.
func TestSample(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "config", "samples", "runjob.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rj v1alpha1.RunJob
	if err := yaml.UnmarshalStrict(data, &rj); err != nil {
		t.Fatalf("decoding the sample: %v", err)
	}
	rj.Namespace = newNamespace(t)
	rj.Spec.QueueName = queueOne // the suite's controller knows no queue "default"
	if err := k8s.Create(context.Background(), &rj); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	waitState(t, rj.Namespace, rj.Name, v1alpha1.StatePending)
}
