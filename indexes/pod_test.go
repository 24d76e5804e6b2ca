package indexes

import (
	"errors"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/owner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func annotatedPod(annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Annotations: annotations}}
}

func TestPodIndex(t *testing.T) {
	const key = batchv1.JobCompletionIndexAnnotation
	cases := []struct {
		name       string
		ann        map[string]string
		want       int
		wantReason string // "" means no error
	}{
		{name: "zero", ann: map[string]string{key: "0"}, want: 0},
		{name: "seven", ann: map[string]string{key: "7"}, want: 7},
		{name: "max int32", ann: map[string]string{key: "2147483647"}, want: 2147483647},
		{name: "plus sign accepted like strconv.Atoi upstream", ann: map[string]string{key: "+3"}, want: 3},
		{name: "leading zeros", ann: map[string]string{key: "007"}, want: 7},
		{name: "nil annotations", ann: nil, want: plainindexes.Unknown, wantReason: "missing"},
		{name: "missing", ann: map[string]string{"other": "1"}, want: plainindexes.Unknown, wantReason: "missing"},
		{name: "label is not read", ann: map[string]string{}, want: plainindexes.Unknown, wantReason: "missing"},
		{name: "empty", ann: map[string]string{key: ""}, want: plainindexes.Unknown, wantReason: "not a non-negative 32-bit integer"},
		{name: "not a number", ann: map[string]string{key: "x"}, want: plainindexes.Unknown, wantReason: "not a non-negative 32-bit integer"},
		{name: "negative", ann: map[string]string{key: "-1"}, want: plainindexes.Unknown, wantReason: "not a non-negative 32-bit integer"},
		{name: "too big", ann: map[string]string{key: "99999999999"}, want: plainindexes.Unknown, wantReason: "not a non-negative 32-bit integer"},
		{name: "just above int32", ann: map[string]string{key: "2147483648"}, want: plainindexes.Unknown, wantReason: "not a non-negative 32-bit integer"},
		{name: "spaces", ann: map[string]string{key: " 1"}, want: plainindexes.Unknown, wantReason: "not a non-negative 32-bit integer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := annotatedPod(tc.ann)
			if tc.name == "label is not read" {
				pod.Labels = map[string]string{key: "3"}
			}
			got, err := PodIndex(owner.BatchJob, pod)
			assert.Equal(t, tc.want, got, "PodIndex() = %d, want %d", got, tc.want)
			if tc.wantReason == "" {
				require.NoError(t, err)
				return
			}
			var aerr *AnnotationError
			require.True(t, errors.As(err, &aerr), "PodIndex() error = %v, want *AnnotationError", err)
			assert.Equal(t, AnnotationError{Pod: "ns/p", Key: key, Value: tc.ann[key], Reason: tc.wantReason}, *aerr)
		})
	}
}

func TestPodIndexErrorMessage(t *testing.T) {
	_, err := PodIndex(owner.BatchJob, annotatedPod(map[string]string{batchv1.JobCompletionIndexAnnotation: "x"}))
	require.Error(t, err)
	assert.Equal(t, `pod ns/p: annotation batch.kubernetes.io/job-completion-index="x": not a non-negative 32-bit integer`, err.Error())
}

func TestPodIndexDoesNotAllocate(t *testing.T) {
	pod := annotatedPod(map[string]string{batchv1.JobCompletionIndexAnnotation: "12345"})
	allocs := testing.AllocsPerRun(100, func() { _, _ = PodIndex(owner.BatchJob, pod) })
	assert.Zero(t, allocs, "PodIndex allocates %v times, want 0", allocs)
}

func TestPodFailureCount(t *testing.T) {
	const (
		failedKey  = batchv1.JobIndexFailureCountAnnotation
		ignoredKey = batchv1.JobIndexIgnoredFailureCountAnnotation
	)
	cases := []struct {
		name        string
		ann         map[string]string
		want        plainindexes.FailureCount
		wantErrKeys []string
	}{
		{name: "none", ann: nil, want: plainindexes.FailureCount{}},
		{name: "both", ann: map[string]string{failedKey: "3", ignoredKey: "2"}, want: plainindexes.FailureCount{Failed: 3, Ignored: 2}},
		{name: "failed only", ann: map[string]string{failedKey: "1"}, want: plainindexes.FailureCount{Failed: 1}},
		{name: "max", ann: map[string]string{failedKey: "2147483647"}, want: plainindexes.FailureCount{Failed: 2147483647}},
		{name: "bad failed keeps ignored", ann: map[string]string{failedKey: "x", ignoredKey: "4"}, want: plainindexes.FailureCount{Ignored: 4}, wantErrKeys: []string{failedKey}},
		{name: "bad ignored keeps failed", ann: map[string]string{failedKey: "2", ignoredKey: "-1"}, want: plainindexes.FailureCount{Failed: 2}, wantErrKeys: []string{ignoredKey}},
		{name: "both bad", ann: map[string]string{failedKey: "2147483648", ignoredKey: ""}, want: plainindexes.FailureCount{}, wantErrKeys: []string{failedKey, ignoredKey}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PodFailureCount(owner.BatchJob, annotatedPod(tc.ann))
			assert.Equal(t, tc.want, got, "PodFailureCount() = %+v, want %+v", got, tc.want)
			if len(tc.wantErrKeys) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var aerr *AnnotationError
			require.True(t, errors.As(err, &aerr), "PodFailureCount() error = %v, want an *AnnotationError", err)
			assert.Equal(t, tc.wantErrKeys[0], aerr.Key)
			for _, k := range tc.wantErrKeys {
				assert.Contains(t, err.Error(), k)
				assert.Contains(t, err.Error(), "ns/p")
			}
			assert.Equal(t, len(tc.wantErrKeys), strings.Count(err.Error(), "pod ns/p"))
		})
	}
}
