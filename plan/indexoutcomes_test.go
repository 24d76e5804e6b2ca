package plan

import (
	"errors"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
)

// TestIndexOutcomes: the finished indexes of an Indexed Job and its pods, by the
// rule Compute writes status.completedIndexes and status.failedIndexes with.
func TestIndexOutcomes(t *testing.T) {
	pod := func(ix int, mods ...func(*corev1.Pod)) *corev1.Pod {
		return tbIndexedPods("p", []int{ix}, mods...)[0]
	}
	tests := []struct {
		name              string
		job               *batchv1.Job
		pods              []*corev1.Pod
		succeeded, failed string
		warnings          int
		wantErr           bool
	}{
		{
			name:      "status and newly succeeded pods",
			job:       tbJob(tbIndexed, tbSize(6, 3), tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0,1" })),
			pods:      []*corev1.Pod{pod(2, tbSucceeded), pod(3), pod(4, tbFailed)},
			succeeded: "0-2",
		},
		{
			name:      "a pod without the tracking finalizer was counted already",
			job:       tbJob(tbIndexed, tbSize(6, 3)),
			pods:      []*corev1.Pod{pod(2, tbSucceeded, tbNoFinalizer)},
			succeeded: "",
		},
		{
			name:      "another owner's pod does not count",
			job:       tbJob(tbIndexed, tbSize(6, 3)),
			pods:      []*corev1.Pod{pod(2, tbSucceeded, tbOwnedBy("other"))},
			succeeded: "",
		},
		{
			name:      "an index at or above completions does not count",
			job:       tbJob(tbIndexed, tbSize(3, 3)),
			pods:      []*corev1.Pod{pod(1, tbSucceeded), pod(5, tbSucceeded)},
			succeeded: "1",
		},
		{
			name:      "per-index backoff used up fails the index; a success wins over a failure",
			job:       tbJob(tbIndexed, tbSize(4, 4), tbPerIndex(0, 3)),
			pods:      []*corev1.Pod{pod(0, tbFailed), pod(1, tbFailed), pod(1, tbSucceeded)},
			succeeded: "1",
			failed:    "0",
		},
		{
			name:      "without backoffLimitPerIndex no index fails",
			job:       tbJob(tbIndexed, tbSize(4, 4)),
			pods:      []*corev1.Pod{pod(0, tbFailed)},
			succeeded: "",
		},
		{
			name:      "a FailIndex rule fails the index",
			job:       tbJob(tbIndexed, tbSize(4, 4), tbPerIndex(3, 3), tbFailurePolicy(tbExitRule(batchv1.PodFailurePolicyActionFailIndex, 7))),
			pods:      []*corev1.Pod{pod(2, tbFailedWith(7)), pod(3, tbFailedWith(1))},
			succeeded: "",
			failed:    "2",
		},
		{
			name:      "bad status string: the valid part is kept and reported",
			job:       tbJob(tbIndexed, tbSize(6, 3), tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0,x" })),
			pods:      []*corev1.Pod{pod(4, tbSucceeded)},
			succeeded: "0,4",
			warnings:  1,
		},
		{
			name: "a finished Job counts nothing more",
			job: tbJob(tbIndexed, tbSize(3, 3), tbWithCond(tbCond(batchv1.JobComplete, "", "")), tbStatus(func(s *batchv1.JobStatus) {
				s.CompletedIndexes = "0-2"
			})),
			pods:      []*corev1.Pod{pod(1, tbSucceeded)},
			succeeded: "0-2",
		},
		{
			name:    "a NonIndexed Job is refused",
			job:     tbJob(tbSize(3, 3)),
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warn, err := JobWorkload(tc.job).IndexOutcomes(owner.Kind{}, tc.pods)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidJob) {
					t.Fatalf("err = %v, want ErrInvalidJob", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Succeeded.String() != tc.succeeded || got.Failed.String() != tc.failed {
				t.Errorf("succeeded %q failed %q, want %q %q", got.Succeeded, got.Failed, tc.succeeded, tc.failed)
			}
			if len(warn) != tc.warnings {
				t.Errorf("warnings %q, want %d", warn, tc.warnings)
			}
		})
	}
}

// TestIndexOutcomesAgreeWithCompute: the status Compute writes holds the indexes
// IndexOutcomes returns (one rule, two doors to it).
func TestIndexOutcomesAgreeWithCompute(t *testing.T) {
	job := tbJob(tbIndexed, tbSize(8, 8), tbPerIndex(0, 8), tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0" }))
	var pods []*corev1.Pod
	pods = append(pods, tbIndexedPods("s", []int{1, 2, 5}, tbSucceeded)...)
	pods = append(pods, tbIndexedPods("f", []int{3, 6}, tbFailed)...)
	pods = append(pods, tbIndexedPods("r", []int{4, 7})...)
	w := JobWorkload(job)
	got, _, err := w.IndexOutcomes(owner.Kind{}, pods)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compute(Input{Workload: w, Pods: pods, ControllerName: batchv1.JobControllerName, ExpectationsSatisfied: true, Now: tbNow})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Status
	if p.RecordStatus != nil {
		st = *p.RecordStatus
	}
	if st.CompletedIndexes != got.Succeeded.String() || ptr.Deref(st.FailedIndexes, "") != got.Failed.String() {
		t.Errorf("Compute wrote completed %q failed %q; IndexOutcomes says %q %q",
			st.CompletedIndexes, ptr.Deref(st.FailedIndexes, ""), got.Succeeded, got.Failed)
	}
	if !slices.Equal(slices.Collect(got.Succeeded.All()), []int{0, 1, 2, 5}) {
		t.Errorf("succeeded %v", got.Succeeded)
	}
}
