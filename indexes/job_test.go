package indexes

import (
	"errors"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func indexedJob(completions *int32, completedIndexes string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"},
		Spec: batchv1.JobSpec{
			Completions:    completions,
			Parallelism:    completions,
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
		},
		Status: batchv1.JobStatus{CompletedIndexes: completedIndexes},
	}
}

// jobPod returns a pod of index ix ("" for none) in the given phase; tracked adds the
// tracking finalizer.
func jobPod(name, ix string, phase corev1.PodPhase, tracked bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Status:     corev1.PodStatus{Phase: phase},
	}
	if ix != "" {
		p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: ix}
	}
	if tracked {
		p.Finalizers = []string{"other", batchv1.JobTrackingFinalizer}
	}
	return p
}

func deepCopyPods(pods []*corev1.Pod) []*corev1.Pod {
	if pods == nil {
		return nil
	}
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

func TestCompletions(t *testing.T) {
	cases := []struct {
		name        string
		completions *int32
		parallelism *int32
		want        int
		wantErr     string
	}{
		{name: "set", completions: ptr.To[int32](5), parallelism: ptr.To[int32](2), want: 5},
		{name: "zero", completions: ptr.To[int32](0), want: 0},
		{name: "both nil defaults to one", want: 1},
		{name: "nil with parallelism", parallelism: ptr.To[int32](3), want: 0, wantErr: "job ns/job: spec.completions: required for an Indexed Job"},
		{name: "negative", completions: ptr.To[int32](-2), want: 0, wantErr: "job ns/job: spec.completions: -2: must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := indexedJob(tc.completions, "")
			job.Spec.Parallelism = tc.parallelism
			got, err := Completions(job)
			assert.Equal(t, tc.want, got, "Completions() = %d, want %d", got, tc.want)
			if tc.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.wantErr)
			}
		})
	}
}

func TestSucceededIndexes(t *testing.T) {
	cases := []struct {
		name        string
		job         *batchv1.Job
		pods        []*corev1.Pod
		want        plainindexes.Intervals
		wantErr     string
		wantParseEr bool
	}{
		{name: "nothing", job: indexedJob(ptr.To[int32](4), ""), want: nil},
		{name: "status only", job: indexedJob(ptr.To[int32](10), "1,3-5"), want: iv(1, 1, 3, 5)},
		{
			name: "tracked succeeded pods added",
			job:  indexedJob(ptr.To[int32](10), "1,3-5"),
			pods: []*corev1.Pod{
				jobPod("a", "7", corev1.PodSucceeded, true),
				jobPod("b", "2", corev1.PodSucceeded, true),
				jobPod("c", "2", corev1.PodSucceeded, true),
			},
			want: iv(1, 5, 7, 7),
		},
		{
			name: "pods that do not count",
			job:  indexedJob(ptr.To[int32](10), "0"),
			pods: []*corev1.Pod{
				jobPod("untracked", "1", corev1.PodSucceeded, false),
				jobPod("failed", "2", corev1.PodFailed, true),
				jobPod("running", "3", corev1.PodRunning, true),
				jobPod("no-index", "", corev1.PodSucceeded, true),
				jobPod("bad-index", "x", corev1.PodSucceeded, true),
				jobPod("out-of-range", "10", corev1.PodSucceeded, true),
			},
			want: iv(0, 0),
		},
		{
			name: "status trimmed after scale-down without error",
			job:  indexedJob(ptr.To[int32](4), "0-2,5-9"),
			want: iv(0, 2),
		},
		{
			name: "defaults to one completion",
			job:  indexedJob(nil, ""),
			pods: []*corev1.Pod{jobPod("a", "0", corev1.PodSucceeded, true), jobPod("b", "1", corev1.PodSucceeded, true)},
			want: iv(0, 0),
		},
		{
			name:        "bad status keeps the valid part",
			job:         indexedJob(ptr.To[int32](10), "1,x,3"),
			pods:        []*corev1.Pod{jobPod("a", "5", corev1.PodSucceeded, true)},
			want:        iv(1, 1, 3, 3, 5, 5),
			wantErr:     `job ns/job: status.completedIndexes: invalid index intervals "1,x,3": part 1 "x": not a non-negative decimal number`,
			wantParseEr: true,
		},
		{
			name: "invalid completions",
			job: func() *batchv1.Job {
				j := indexedJob(nil, "1")
				j.Spec.Parallelism = ptr.To[int32](2)
				return j
			}(),
			pods:    []*corev1.Pod{jobPod("a", "0", corev1.PodSucceeded, true)},
			want:    nil,
			wantErr: "job ns/job: spec.completions: required for an Indexed Job",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			jobBefore := tc.job.DeepCopy()
			podsBefore := deepCopyPods(tc.pods)
			got, err := SucceededIndexes(tc.job, tc.pods)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SucceededIndexes() mismatch (-want +got):\n%s", diff)
			}
			if tc.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.wantErr)
			}
			var perr *plainindexes.ParseError
			assert.Equal(t, tc.wantParseEr, errors.As(err, &perr), "errors.As(err, *plainindexes.ParseError)")
			assert.Empty(t, cmp.Diff(jobBefore, tc.job), "job modified")
			assert.Empty(t, cmp.Diff(podsBefore, tc.pods), "pods modified")
		})
	}
}

func TestFailedIndexes(t *testing.T) {
	withPerIndex := func(completions int32, failedIndexes *string) *batchv1.Job {
		j := indexedJob(ptr.To(completions), "")
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		j.Status.FailedIndexes = failedIndexes
		return j
	}
	// failsIndex stands for the caller's decision: failed pods annotated "fail".
	failsIndex := func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed && p.Labels["decision"] == "fail"
	}
	decided := func(p *corev1.Pod) *corev1.Pod {
		p.Labels = map[string]string{"decision": "fail"}
		return p
	}
	cases := []struct {
		name        string
		job         *batchv1.Job
		pods        []*corev1.Pod
		indexFailed func(*corev1.Pod) bool
		want        plainindexes.Intervals
		wantErr     string
	}{
		{
			name: "no backoffLimitPerIndex",
			job: func() *batchv1.Job {
				j := withPerIndex(10, ptr.To("1"))
				j.Spec.BackoffLimitPerIndex = nil
				return j
			}(),
			pods:        []*corev1.Pod{decided(jobPod("a", "2", corev1.PodFailed, true))},
			indexFailed: failsIndex,
			want:        nil,
		},
		{name: "unset status", job: withPerIndex(10, nil), indexFailed: failsIndex, want: nil},
		{name: "empty status", job: withPerIndex(10, ptr.To("")), indexFailed: failsIndex, want: nil},
		{name: "status only", job: withPerIndex(10, ptr.To("1,3")), indexFailed: failsIndex, want: iv(1, 1, 3, 3)},
		{
			name: "pods decided failed are added",
			job:  withPerIndex(10, ptr.To("1,3")),
			pods: []*corev1.Pod{
				decided(jobPod("a", "5", corev1.PodFailed, true)),
				decided(jobPod("b", "2", corev1.PodFailed, true)),
			},
			indexFailed: failsIndex,
			want:        iv(1, 3, 5, 5),
		},
		{
			name: "pods not counted",
			job:  withPerIndex(10, ptr.To("1")),
			pods: []*corev1.Pod{
				jobPod("not-decided", "2", corev1.PodFailed, true),
				decided(jobPod("untracked", "3", corev1.PodFailed, false)),
				decided(jobPod("out-of-range", "10", corev1.PodFailed, true)),
				decided(jobPod("no-index", "", corev1.PodFailed, true)),
				decided(jobPod("running", "4", corev1.PodRunning, true)),
			},
			indexFailed: failsIndex,
			want:        iv(1, 1),
		},
		{
			name:        "nil predicate keeps the status",
			job:         withPerIndex(10, ptr.To("4")),
			pods:        []*corev1.Pod{decided(jobPod("a", "5", corev1.PodFailed, true))},
			indexFailed: nil,
			want:        iv(4, 4),
		},
		{
			name:        "status trimmed",
			job:         withPerIndex(3, ptr.To("1-7")),
			indexFailed: failsIndex,
			want:        iv(1, 2),
		},
		{
			name:        "bad status keeps the valid part",
			job:         withPerIndex(10, ptr.To("2,1-2-3")),
			pods:        []*corev1.Pod{decided(jobPod("a", "5", corev1.PodFailed, true))},
			indexFailed: failsIndex,
			want:        iv(2, 2, 5, 5),
			wantErr:     `job ns/job: status.failedIndexes: invalid index intervals "2,1-2-3": part 1 "1-2-3": more than two parts separated by '-'`,
		},
		{
			name:        "negative completions",
			job:         withPerIndex(-1, ptr.To("1")),
			indexFailed: failsIndex,
			want:        nil,
			wantErr:     "job ns/job: spec.completions: -1: must not be negative",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			podsBefore := deepCopyPods(tc.pods)
			got, err := FailedIndexes(tc.job, tc.pods, tc.indexFailed)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FailedIndexes() mismatch (-want +got):\n%s", diff)
			}
			if tc.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.wantErr)
			}
			assert.Empty(t, cmp.Diff(podsBefore, tc.pods), "pods modified")
		})
	}
}

func TestFailedIndexesAsksOnlyAboutCandidates(t *testing.T) {
	job := indexedJob(ptr.To[int32](3), "")
	job.Spec.BackoffLimitPerIndex = ptr.To[int32](0)
	var asked []string
	pods := []*corev1.Pod{
		jobPod("in-range", "2", corev1.PodFailed, true),
		jobPod("untracked", "1", corev1.PodFailed, false),
		jobPod("out-of-range", "3", corev1.PodFailed, true),
		jobPod("no-index", "", corev1.PodFailed, true),
	}
	got, err := FailedIndexes(job, pods, func(p *corev1.Pod) bool {
		asked = append(asked, p.Name)
		return true
	})
	require.NoError(t, err)
	assert.Equal(t, iv(2, 2), got)
	assert.Equal(t, []string{"in-range"}, asked)
}

func TestSucceededIndexesManyPods(t *testing.T) {
	job := indexedJob(ptr.To[int32](1000), "")
	var pods []*corev1.Pod
	for i := 999; i >= 0; i -= 2 {
		pods = append(pods, jobPod("p"+strconv.Itoa(i), strconv.Itoa(i), corev1.PodSucceeded, true))
	}
	got, err := SucceededIndexes(job, pods)
	require.NoError(t, err)
	assert.Equal(t, 500, got.Count())
	assert.Len(t, got, 500)
	assert.True(t, got.Has(1) && !got.Has(0) && got.Has(999))
}

// TestOutcomesNeverListAnIndexTwice checks the first-outcome-wins rule through the
// exported sets: an index failed in the status does not become succeeded, a succeeded
// index (in the status or by a pod seen now) does not become failed.
func TestOutcomesNeverListAnIndexTwice(t *testing.T) {
	job := indexedJob(ptr.To[int32](6), "0")
	job.Spec.BackoffLimitPerIndex = ptr.To[int32](0)
	job.Status.FailedIndexes = ptr.To("1")
	pods := []*corev1.Pod{
		jobPod("failed-index-succeeds", "1", corev1.PodSucceeded, true),
		jobPod("succeeded-index-fails", "0", corev1.PodFailed, true),
		jobPod("index-2-succeeds", "2", corev1.PodSucceeded, true),
		jobPod("index-2-fails", "2", corev1.PodFailed, true),
		jobPod("index-3-fails", "3", corev1.PodFailed, true),
	}
	var asked []string
	failed := func(p *corev1.Pod) bool {
		asked = append(asked, p.Name)
		return p.Status.Phase == corev1.PodFailed
	}
	succeededIx, err := SucceededIndexes(job, pods)
	require.NoError(t, err)
	failedIx, err := FailedIndexes(job, pods, failed)
	require.NoError(t, err)
	assert.Equal(t, iv(0, 0, 2, 2), succeededIx, "SucceededIndexes")
	assert.Equal(t, iv(1, 1, 3, 3), failedIx, "FailedIndexes")
	assert.Equal(t, []string{"failed-index-succeeds", "index-3-fails"}, asked, "FailedIndexes asks only about pods of indexes not succeeded")

	out, err := JobOutcomes(job, pods, failed)
	require.NoError(t, err)
	assert.Equal(t, plainindexes.Outcomes{Succeeded: succeededIx, Failed: failedIx}, out, "JobOutcomes")
}

func TestJobOutcomesReportsBothFields(t *testing.T) {
	job := indexedJob(ptr.To[int32](6), "0,x")
	job.Spec.BackoffLimitPerIndex = ptr.To[int32](0)
	job.Status.FailedIndexes = ptr.To("y,2")
	out, err := JobOutcomes(job, nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "status.completedIndexes")
	assert.Contains(t, err.Error(), "status.failedIndexes")
	var perr *plainindexes.ParseError
	assert.ErrorAs(t, err, &perr)
	assert.Equal(t, plainindexes.Outcomes{Succeeded: iv(0, 0), Failed: iv(2, 2)}, out, "valid parts kept")
}
