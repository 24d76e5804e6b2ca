package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

func TestChaosPlan(t *testing.T) {
	a, b := chaosPlan(7, 56, time.Minute), chaosPlan(7, 56, time.Minute)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("chaosPlan(7) twice differs (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(a, chaosPlan(8, 56, time.Minute)); diff == "" {
		t.Error("chaosPlan(7) and chaosPlan(8) are the same")
	}
	seen := map[shape]int{}
	for _, j := range a {
		seen[j.Shape]++
		if j.Completions < 1 || j.Parallelism < 1 || j.Parallelism > j.Completions {
			t.Errorf("%s: completions %d parallelism %d", j.Name, j.Completions, j.Parallelism)
		}
		if j.At < 0 || j.At > time.Minute {
			t.Errorf("%s: created at %v, want within the minute", j.Name, j.At)
		}
		if (j.Shape == shapeRetry || j.Shape == shapeFailIndex) && !j.Indexed {
			t.Errorf("%s: not Indexed", j.Name)
		}
		if (j.Shape == shapeSuspend || j.Shape == shapeDelete) && j.ActAfter <= 0 {
			t.Errorf("%s: acts after %v", j.Name, j.ActAfter)
		}
	}
	for _, s := range shapes {
		if seen[s] != 8 {
			t.Errorf("shape %s: %d Jobs, want 8 of 56", s, seen[s])
		}
	}
}

func TestChaosJobObject(t *testing.T) {
	tests := []struct {
		job           chaosJob
		wantCode      string
		wantAction    batchv1.PodFailurePolicyAction
		wantPerIndex  *int32
		wantMaxFailed *int32
		wantAttempts  string
	}{
		{job: chaosJob{Shape: shapeComplete, Completions: 3, Parallelism: 3}},
		{job: chaosJob{Shape: shapeRetry, Indexed: true, Completions: 5, Parallelism: 2, FailEvery: 2}, wantCode: "1", wantPerIndex: ptr.To[int32](1), wantAttempts: "1"},
		{job: chaosJob{Shape: shapeFailIndex, Indexed: true, Completions: 7, Parallelism: 7, FailEvery: 3}, wantCode: "42",
			wantAction: batchv1.PodFailurePolicyActionFailIndex, wantPerIndex: ptr.To[int32](1), wantMaxFailed: ptr.To[int32](3)},
		{job: chaosJob{Shape: shapeFailJob, Completions: 2, Parallelism: 1, FailEvery: 1}, wantCode: "42", wantAction: batchv1.PodFailurePolicyActionFailJob},
		{job: chaosJob{Shape: shapeBackoff, Completions: 2, Parallelism: 2, FailEvery: 1}, wantCode: "1"},
	}
	for _, tt := range tests {
		t.Run(string(tt.job.Shape), func(t *testing.T) {
			tt.job.Name, tt.job.RunFor = "c", 1500*time.Millisecond
			j := tt.job.object("chaos", managedByJobkit, "kwok-2")
			a := j.Spec.Template.Annotations
			if a[annotationExitCode] != tt.wantCode || a[annotationAttempts] != tt.wantAttempts || a[annotationRunFor] != "1.5s" {
				t.Errorf("annotations %v, want exit code %q, fail-attempts %q, run-for 1.5s", a, tt.wantCode, tt.wantAttempts)
			}
			var action batchv1.PodFailurePolicyAction
			if p := j.Spec.PodFailurePolicy; p != nil {
				action = p.Rules[0].Action
			}
			if action != tt.wantAction {
				t.Errorf("podFailurePolicy action %q, want %q", action, tt.wantAction)
			}
			if !cmp.Equal(j.Spec.BackoffLimitPerIndex, tt.wantPerIndex) || !cmp.Equal(j.Spec.MaxFailedIndexes, tt.wantMaxFailed) {
				t.Errorf("backoffLimitPerIndex %v maxFailedIndexes %v, want %v and %v", j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes, tt.wantPerIndex, tt.wantMaxFailed)
			}
			if *j.Spec.ManagedBy != managedByJobkit || j.Spec.Template.Spec.NodeName != "kwok-2" || j.Labels[labelChaos] != "c" || j.Spec.Template.Labels[labelChaos] != "c" {
				t.Errorf("managedBy %q node %q labels %v %v", *j.Spec.ManagedBy, j.Spec.Template.Spec.NodeName, j.Labels, j.Spec.Template.Labels)
			}
		})
	}
}

func TestExactCounts(t *testing.T) {
	tests := []struct {
		job    chaosJob
		want   counts
		wantOK bool
	}{
		{job: chaosJob{Shape: shapeComplete, Indexed: true, Completions: 4}, want: counts{Succeeded: 4, CompletedIndexes: "0-3"}, wantOK: true},
		{job: chaosJob{Shape: shapeSuspend, Completions: 4}, want: counts{Succeeded: 4}, wantOK: true},
		{job: chaosJob{Shape: shapeRetry, Indexed: true, Completions: 7, FailEvery: 3}, want: counts{Succeeded: 7, Failed: 3, CompletedIndexes: "0-6"}, wantOK: true},
		{job: chaosJob{Shape: shapeFailIndex, Indexed: true, Completions: 7, FailEvery: 3}, want: counts{Succeeded: 4, Failed: 3, CompletedIndexes: "1,2,4,5"}, wantOK: true},
		{job: chaosJob{Shape: shapeFailJob, Completions: 7, FailEvery: 1}},
		{job: chaosJob{Shape: shapeBackoff, Completions: 7, FailEvery: 1}},
		{job: chaosJob{Shape: shapeDelete, Completions: 7}},
	}
	for _, tt := range tests {
		t.Run(string(tt.job.Shape), func(t *testing.T) {
			got, ok := tt.job.exactCounts()
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("exactCounts() = %+v, %v, want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// pod is a pod of the Job with UID "job" at resourceVersion rv.
func pod(name string, index int, rv string, phase corev1.PodPhase, finalizer, deleted bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), ResourceVersion: rv,
			OwnerReferences: []metav1.OwnerReference{{UID: "job", Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: phase},
	}
	if index >= 0 {
		p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: string(rune('0' + index))}
	}
	if finalizer {
		p.Finalizers = []string{batchv1.JobTrackingFinalizer}
	}
	if deleted {
		p.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	}
	return p
}

func TestHistoryCounts(t *testing.T) {
	h := newHistory()
	// a: runs, succeeds with the finalizer, the finalizer goes: counted succeeded.
	h.observePod(watch.Added, pod("a", 0, "10", corev1.PodPending, true, false))
	h.observePod(watch.Modified, pod("a", 0, "11", corev1.PodRunning, true, false))
	h.observePod(watch.Modified, pod("a", 0, "12", corev1.PodSucceeded, true, false))
	h.observePod(watch.Modified, pod("a", 0, "13", corev1.PodSucceeded, false, false))
	// b: fails: counted failed.
	h.observePod(watch.Added, pod("b", 1, "14", corev1.PodPending, true, false))
	h.observePod(watch.Modified, pod("b", 1, "15", corev1.PodFailed, true, false))
	// c: deleted while running with the finalizer (a finished Job's cleanup): failed.
	h.observePod(watch.Added, pod("c", 1, "16", corev1.PodRunning, true, false))
	h.observePod(watch.Modified, pod("c", 1, "17", corev1.PodRunning, true, true))
	h.observePod(watch.Modified, pod("c", 1, "18", corev1.PodFailed, false, true))
	h.observePod(watch.Deleted, pod("c", 1, "19", corev1.PodFailed, false, true))
	// d: the finalizer removed before the deletion (suspension): not counted.
	h.observePod(watch.Added, pod("d", 2, "20", corev1.PodRunning, true, false))
	h.observePod(watch.Modified, pod("d", 2, "21", corev1.PodRunning, false, false))
	h.observePod(watch.Modified, pod("d", 2, "22", corev1.PodRunning, false, true))
	// e: a second success of index 0: counted once for an Indexed Job.
	h.observePod(watch.Added, pod("e", 0, "23", corev1.PodSucceeded, true, false))
	pods := h.podsOf("job")
	if len(pods) != 5 || h.createdCount() != 5 {
		t.Fatalf("podsOf(job) = %d records, createdCount %d, want 5", len(pods), h.createdCount())
	}
	if got, want := expectedCounts(pods, true, 3), (counts{Succeeded: 1, Failed: 2, CompletedIndexes: "0"}); got != want {
		t.Errorf("expectedCounts(Indexed) = %+v, want %+v", got, want)
	}
	if got, want := expectedCounts(pods, false, 3), (counts{Succeeded: 2, Failed: 2}); got != want {
		t.Errorf("expectedCounts(NonIndexed) = %+v, want %+v", got, want)
	}
	got := checkJobPods("j", pods, true, 22)
	want := []string{
		"j: pod e created (resourceVersion 23) after the Job finished (22)",
		"j: index 0 has 2 succeeded pods: [a e]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checkJobPods (-want +got):\n%s", diff)
	}
	if got := checkJobPods("j", pods[:4], true, 0); len(got) != 0 {
		t.Errorf("checkJobPods of a, b, c, d = %v, want no problem", got)
	}
}

func TestFormatIndexes(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 5, 7, 8}, "0-2,5,7,8"},
	}
	for _, tt := range tests {
		set := map[int]bool{}
		for _, i := range tt.in {
			set[i] = true
		}
		if got := formatIndexes(set); got != tt.want {
			t.Errorf("formatIndexes(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCheckFinishedJob(t *testing.T) {
	pods := []podRecord{{Name: "a", Index: 0, Counted: true, Succeeded: true}, {Name: "b", Index: 1, Counted: true}}
	job := func(cond batchv1.JobConditionType, succeeded, failed, active int32) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "j"},
			Spec:       batchv1.JobSpec{Completions: ptr.To[int32](2), CompletionMode: ptr.To(batchv1.IndexedCompletion)},
			Status: batchv1.JobStatus{Succeeded: succeeded, Failed: failed, Active: active, CompletedIndexes: "0",
				Conditions: []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, Reason: "R"}}},
		}
	}
	if got := checkFinishedJob(job(batchv1.JobFailed, 1, 1, 0), batchv1.JobFailed, pods); len(got) != 0 {
		t.Errorf("checkFinishedJob of a matching Job = %v, want none", got)
	}
	got := strings.Join(checkFinishedJob(job(batchv1.JobComplete, 1, 0, 1), batchv1.JobFailed, pods), "\n")
	for _, want := range []string{"finished Complete (R: ), want Failed", "active=1", "status succeeded=1 failed=0", "history says 1, 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("checkFinishedJob problems %q: no %q", got, want)
		}
	}
}

func TestParseChaosFlags(t *testing.T) {
	o, err := parseChaosFlags([]string{"--jobkit", "j", "--jobset", "s", "--seed", "9", "--cluster-dir", "/d"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.seed != 9 || o.jobs != 56 || o.kills != 24 || o.groups != 18 || o.groupKills != 24 || !o.restartAPI || o.kubeconfig != "/d/kubeconfig" || o.limits != (qps{QPS: 50, Burst: 100}) {
		t.Errorf("parseChaosFlags = %+v", o)
	}
	o, err = parseChaosFlags([]string{"--jobkit", "j", "--jobset", "s", "--smoke"}, io.Discard)
	if err != nil || o.jobs != 1 || o.kills != 1 || o.groups != 1 || o.groupKills != 2 || o.restartAPI || o.seed == 0 || o.timeout != 3*time.Minute {
		t.Errorf("parseChaosFlags(--smoke) = %+v, %v", o, err)
	}
	if o, err := parseChaosFlags([]string{"--jobkit", "j", "--groups", "0", "--smoke", "--timeout", "1m"}, io.Discard); err != nil || o.timeout != time.Minute {
		t.Errorf("parseChaosFlags(--smoke --timeout 1m) timeout = %v, %v, want 1m", o.timeout, err)
	}
	for _, tt := range []struct{ args, wantErr string }{
		{"", "--jobkit is required"},
		{"--jobkit j --jobs 0 --groups 0", "--jobs=0"},
		{"--jobkit j --jobs -1 --jobset s", "--jobs=-1"},
		{"--jobkit j", "--jobset is required"},
		{"--jobkit j --jobset s --groups -1", "--groups=-1"},
		{"--jobkit j --jobset s --group-kills -2", "--group-kills=-2"},
		{"--jobkit j --groups 0 --kills -1", "--kills=-1"},
		{"--jobkit j --groups 0 --min-gap 2s --max-gap 1s", "--min-gap=2s --max-gap=1s"},
		{"--jobkit j --groups 0 --qps 0/1", `qps "0/1"`},
		{"--jobkit j --groups 0 --timeout 0s", "--timeout=0s"},
	} {
		if _, err := parseChaosFlags(strings.Fields(tt.args), io.Discard); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("parseChaosFlags(%s) error = %v, want one containing %q", tt.args, err, tt.wantErr)
		}
	}
}

func TestHistoryResyncPods(t *testing.T) {
	h := newHistory()
	h.observePod(watch.Added, pod("seen", 0, "10", corev1.PodRunning, true, false))
	h.observePod(watch.Added, pod("kept", 1, "11", corev1.PodRunning, true, false))
	h.observePod(watch.Added, pod("lost", 2, "12", corev1.PodRunning, true, false))
	h.observePod(watch.Added, pod("gone", 3, "13", corev1.PodRunning, true, false))
	h.observePod(watch.Added, pod("done", 4, "14", corev1.PodSucceeded, true, false))
	// The watch was away: "kept" succeeded with its finalizer on, "lost" failed and
	// lost its finalizer, "gone" and "done" were deleted, "new" was created and ran.
	h.resyncPods([]corev1.Pod{
		*pod("seen", 0, "10", corev1.PodRunning, true, false),
		*pod("kept", 1, "20", corev1.PodSucceeded, true, false),
		*pod("lost", 2, "21", corev1.PodFailed, false, false),
		*pod("new", 5, "22", corev1.PodRunning, true, false),
	})
	want := []string{
		"pod lost: finished or deleted without the tracking finalizer while the watch was away: counted or not is unknown",
		"pod gone: deleted while the watch was away: counted or not is unknown",
	}
	if diff := cmp.Diff(want, h.gaps); diff != "" {
		t.Errorf("gaps (-want +got):\n%s", diff)
	}
	if got, want := expectedCounts(h.podsOf("job"), true, 6), (counts{Succeeded: 2, CompletedIndexes: "1,4"}); got != want {
		t.Errorf("expectedCounts after the resync = %+v, want %+v", got, want)
	}
	for _, r := range h.podsOf("job") {
		if wantGone := r.Name == "gone" || r.Name == "done"; r.Gone != wantGone {
			t.Errorf("pod %s: Gone %v, want %v", r.Name, r.Gone, wantGone)
		}
		if r.Name == "new" && r.CreatedRV != 0 {
			t.Errorf("pod new: CreatedRV %d, want 0 (its creation was not seen)", r.CreatedRV)
		}
	}
}
