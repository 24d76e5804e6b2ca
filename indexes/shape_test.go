package indexes

import (
	"errors"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jobkit/jobkit/owner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func indexEnv() corev1.EnvVar {
	return corev1.EnvVar{
		Name: "JOB_COMPLETION_INDEX",
		ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']"},
		},
	}
}

func TestShapePod(t *testing.T) {
	userEnv := corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", Value: "mine"}
	cases := []struct {
		name        string
		pod         *corev1.Pod
		jobName     string
		index       int
		want        *corev1.Pod
		wantChanged bool
	}{
		{
			name:    "bare template",
			pod:     &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}},
			jobName: "job",
			index:   3,
			want: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					GenerateName: "job-3-",
					Annotations:  map[string]string{batchv1.JobCompletionIndexAnnotation: "3"},
					Labels:       map[string]string{batchv1.JobCompletionIndexAnnotation: "3"},
				},
				Spec: corev1.PodSpec{
					Hostname:   "job-3",
					Containers: []corev1.Container{{Name: "main", Env: []corev1.EnvVar{indexEnv()}}},
				},
			},
			wantChanged: true,
		},
		{
			name: "template with metadata, hostname, env and init containers",
			pod: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Annotations: map[string]string{"a": "1", batchv1.JobCompletionIndexAnnotation: "9"},
					Labels:      map[string]string{"app": "x"},
				},
				Spec: corev1.PodSpec{
					Hostname:       "custom",
					InitContainers: []corev1.Container{{Name: "init"}, {Name: "sidecar", Env: []corev1.EnvVar{userEnv}}},
					Containers:     []corev1.Container{{Name: "main", Env: []corev1.EnvVar{{Name: "A", Value: "b"}}}},
				},
			},
			jobName: "job",
			index:   0,
			want: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					GenerateName: "job-0-",
					Annotations:  map[string]string{"a": "1", batchv1.JobCompletionIndexAnnotation: "0"},
					Labels:       map[string]string{"app": "x", batchv1.JobCompletionIndexAnnotation: "0"},
				},
				Spec: corev1.PodSpec{
					Hostname:       "job-0",
					InitContainers: []corev1.Container{{Name: "init", Env: []corev1.EnvVar{indexEnv()}}, {Name: "sidecar", Env: []corev1.EnvVar{userEnv}}},
					Containers:     []corev1.Container{{Name: "main", Env: []corev1.EnvVar{{Name: "A", Value: "b"}, indexEnv()}}},
				},
			},
			wantChanged: true,
		},
		{
			name: "already shaped",
			pod: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					GenerateName: "job-1-",
					Annotations:  map[string]string{batchv1.JobCompletionIndexAnnotation: "1"},
					Labels:       map[string]string{batchv1.JobCompletionIndexAnnotation: "1"},
				},
				Spec: corev1.PodSpec{Hostname: "job-1", Containers: []corev1.Container{{Name: "main", Env: []corev1.EnvVar{indexEnv()}}}},
			},
			jobName: "job",
			index:   1,
			want: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					GenerateName: "job-1-",
					Annotations:  map[string]string{batchv1.JobCompletionIndexAnnotation: "1"},
					Labels:       map[string]string{batchv1.JobCompletionIndexAnnotation: "1"},
				},
				Spec: corev1.PodSpec{Hostname: "job-1", Containers: []corev1.Container{{Name: "main", Env: []corev1.EnvVar{indexEnv()}}}},
			},
			wantChanged: false,
		},
		{
			name:        "negative index",
			pod:         &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}},
			jobName:     "job",
			index:       -1,
			want:        &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}},
			wantChanged: false,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.pod
			changed := ShapePod(owner.BatchJob, got, tc.jobName, tc.index)
			assert.Equal(t, tc.wantChanged, changed, "ShapePod() changed = %v, want %v", changed, tc.wantChanged)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ShapePod() pod mismatch (-want +got):\n%s", diff)
			}
			again := ShapePod(owner.BatchJob, got, tc.jobName, tc.index)
			assert.False(t, again, "ShapePod() on a shaped pod reports a change")
			ix, err := PodIndex(owner.BatchJob, got)
			if tc.index >= 0 {
				require.NoError(t, err)
				assert.Equal(t, tc.index, ix, "PodIndex(owner.BatchJob, ShapePod(owner.BatchJob, pod, %d)) = %d", tc.index, ix)
			}
		})
	}
}

func TestGenerateName(t *testing.T) {
	long := strings.Repeat("a", 63)
	cases := []struct {
		name    string
		jobName string
		index   int
		want    string
	}{
		{name: "short", jobName: "job", index: 4, want: "job-4-"},
		{name: "fits exactly", jobName: strings.Repeat("b", 55), index: 1, want: strings.Repeat("b", 55) + "-1-"},
		{name: "one too long", jobName: strings.Repeat("b", 56), index: 1, want: strings.Repeat("b", 55) + "-1-"},
		{name: "long name keeps the index", jobName: long, index: 12345, want: strings.Repeat("a", 51) + "-12345-"},
		{name: "largest index", jobName: long, index: math.MaxInt32, want: strings.Repeat("a", 46) + "-2147483647-"},
		{name: "dot at the cut dropped", jobName: strings.Repeat("c", 54) + ".d" + "eeee", index: 7, want: strings.Repeat("c", 54) + "-7-"},
		{name: "dash at the cut kept", jobName: strings.Repeat("c", 54) + "-deeee", index: 7, want: strings.Repeat("c", 54) + "--7-"},
		{name: "dots not at the cut kept", jobName: "a.b", index: 0, want: "a.b-0-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := generateName(tc.jobName, tc.index)
			assert.Equal(t, tc.want, got, "generateName(%q, %d) = %q, want %q", tc.jobName, tc.index, got, tc.want)
			assert.LessOrEqual(t, len(got), maxGeneratedNameLength)
		})
	}
	assert.Equal(t, 58, maxGeneratedNameLength)
}

func TestPodName(t *testing.T) {
	long := strings.Repeat("a", 63)
	cases := []struct {
		name            string
		jobName, jobUID string
		index           int
		attempt         string
		wantPrefix      string
	}{
		{name: "short", jobName: "job", jobUID: "u1", index: 4, attempt: "0", wantPrefix: "job-4-"},
		{name: "long job name", jobName: long, jobUID: "u1", index: 12345, attempt: "x", wantPrefix: strings.Repeat("a", 51) + "-12345-"},
		{name: "largest index", jobName: long, jobUID: "u2", index: math.MaxInt32, attempt: "", wantPrefix: strings.Repeat("a", 46) + "-2147483647-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := PodName(tc.jobName, tc.jobUID, tc.index, tc.attempt)
			require.True(t, strings.HasPrefix(got, tc.wantPrefix), "PodName(...) = %q, want prefix %q", got, tc.wantPrefix)
			suffix := strings.TrimPrefix(got, tc.wantPrefix)
			assert.Len(t, suffix, 5, "suffix of %q", got)
			assert.Empty(t, strings.Trim(suffix, nameAlphabet), "suffix %q uses only %q", suffix, nameAlphabet)
			assert.LessOrEqual(t, len(got), 63, "a pod name is a DNS label")
			assert.Equal(t, got, PodName(tc.jobName, tc.jobUID, tc.index, tc.attempt), "the same decision gives the same name")
		})
	}
	base := PodName("job", "uid", 3, "a")
	for _, other := range []string{
		PodName("job", "uid", 3, "b"),
		PodName("job", "uid2", 3, "a"),
		PodName("job", "uid", 4, "a"),
	} {
		assert.NotEqual(t, base, other, "another attempt, Job or index gives another name")
	}
	// The suffixes spread: 2,000 attempts of one index collide rarely.
	seen := map[string]bool{}
	for i := range 2000 {
		seen[PodName("job", "uid", 0, strings.Repeat("x", i))] = true
	}
	assert.Greater(t, len(seen), 1990, "distinct names among 2,000 attempts")
}

func TestNextPodName(t *testing.T) {
	first := PodName("job", "uid", 3, "a")
	seen := map[string]bool{first: true}
	name := first
	for i := range 64 {
		next := NextPodName("job", "uid", 3, name)
		require.True(t, strings.HasPrefix(next, "job-3-"), "name %d of the sequence = %q, want prefix job-3-", i+1, next)
		assert.Equal(t, next, NextPodName("job", "uid", 3, name), "the same name is followed by the same name")
		require.False(t, seen[next], "name %d of the sequence, %q, came before", i+1, next)
		seen[next] = true
		name = next
	}
	assert.NotEqual(t, NextPodName("job", "uid", 3, first), NextPodName("job", "uid", 4, first), "another index, another sequence")
	assert.NotEqual(t, NextPodName("job", "uid", 3, first), NextPodName("job", "uid2", 3, first), "another Job, another sequence")
}

func TestHostname(t *testing.T) {
	assert.Equal(t, "job-12", hostname("job", 12))
}

func TestReplacementFailureCount(t *testing.T) {
	cases := []struct {
		name    string
		failed  *corev1.Pod
		ignored bool
		want    plainindexes.FailureCount
		wantErr bool
	}{
		{name: "no earlier pod", failed: nil, want: plainindexes.FailureCount{}},
		{name: "pod without annotations", failed: annotatedPod(nil), want: plainindexes.FailureCount{Failed: 1}},
		{
			name:   "annotated pod",
			failed: annotatedPod(map[string]string{batchv1.JobIndexFailureCountAnnotation: "2", batchv1.JobIndexIgnoredFailureCountAnnotation: "1"}),
			want:   plainindexes.FailureCount{Failed: 3, Ignored: 1},
		},
		{
			name:    "ignored failure",
			failed:  annotatedPod(map[string]string{batchv1.JobIndexFailureCountAnnotation: "2"}),
			ignored: true,
			want:    plainindexes.FailureCount{Failed: 2, Ignored: 1},
		},
		{
			name:    "bad annotation counts zero",
			failed:  annotatedPod(map[string]string{batchv1.JobIndexFailureCountAnnotation: "many"}),
			want:    plainindexes.FailureCount{Failed: 1},
			wantErr: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReplacementFailureCount(owner.BatchJob, tc.failed, tc.ignored)
			assert.Equal(t, tc.want, got)
			if tc.wantErr {
				var aerr *AnnotationError
				require.True(t, errors.As(err, &aerr), "error = %v, want *AnnotationError", err)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

func TestSetFailureCountAnnotations(t *testing.T) {
	const (
		failedKey  = batchv1.JobIndexFailureCountAnnotation
		ignoredKey = batchv1.JobIndexIgnoredFailureCountAnnotation
	)
	cases := []struct {
		name        string
		ann         map[string]string
		fc          plainindexes.FailureCount
		want        map[string]string
		wantChanged bool
	}{
		{name: "zero still writes the failed count", ann: nil, fc: plainindexes.FailureCount{}, want: map[string]string{failedKey: "0"}, wantChanged: true},
		{name: "both", ann: map[string]string{"x": "y"}, fc: plainindexes.FailureCount{Failed: 2, Ignored: 3}, want: map[string]string{"x": "y", failedKey: "2", ignoredKey: "3"}, wantChanged: true},
		{name: "unchanged", ann: map[string]string{failedKey: "2", ignoredKey: "3"}, fc: plainindexes.FailureCount{Failed: 2, Ignored: 3}, want: map[string]string{failedKey: "2", ignoredKey: "3"}, wantChanged: false},
		{name: "stale ignored count removed", ann: map[string]string{failedKey: "1", ignoredKey: "4"}, fc: plainindexes.FailureCount{Failed: 1}, want: map[string]string{failedKey: "1"}, wantChanged: true},
		{name: "negative written as zero", ann: nil, fc: plainindexes.FailureCount{Failed: -3, Ignored: -1}, want: map[string]string{failedKey: "0"}, wantChanged: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := annotatedPod(tc.ann)
			changed := SetFailureCountAnnotations(owner.BatchJob, pod, tc.fc)
			assert.Equal(t, tc.wantChanged, changed, "SetFailureCountAnnotations() changed = %v, want %v", changed, tc.wantChanged)
			if diff := cmp.Diff(tc.want, pod.Annotations); diff != "" {
				t.Errorf("SetFailureCountAnnotations(owner.BatchJob, %+v) annotations mismatch (-want +got):\n%s", tc.fc, diff)
			}
			back, err := PodFailureCount(owner.BatchJob, pod)
			require.NoError(t, err)
			assert.Equal(t, plainindexes.FailureCount{Failed: max(tc.fc.Failed, 0), Ignored: max(tc.fc.Ignored, 0)}, back, "PodFailureCount() after Set")
		})
	}
}
