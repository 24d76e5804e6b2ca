package backoff_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

func TestIndexRemaining(t *testing.T) {
	const (
		failedKey  = batchv1.JobIndexFailureCountAnnotation
		ignoredKey = batchv1.JobIndexIgnoredFailureCountAnnotation
	)
	failedPod := func() *podBuilder { return newPod("job-0-abc").phase(corev1.PodFailed).terminated(t0) }
	tests := []struct {
		name      string
		pod       *corev1.Pod
		policy    plainbackoff.Policy
		now       time.Time
		want      time.Duration
		wantErrIn []string // substrings of the error; nil means no error
	}{
		{name: "no failed pod", now: t0, want: 0},
		{name: "annotations missing: first failure", pod: failedPod().obj(), now: t0, want: 10 * time.Second},
		{
			name: "two earlier failures",
			pod:  failedPod().annotation(failedKey, "2").obj(),
			now:  t0, want: 40 * time.Second,
		},
		{
			name: "ignored failures count towards the delay",
			pod:  failedPod().annotation(failedKey, "2").annotation(ignoredKey, "1").obj(),
			now:  t0, want: 80 * time.Second,
		},
		{
			name: "time elapsed since the pod finished",
			pod:  failedPod().annotation(failedKey, "1").obj(),
			now:  at(5 * time.Second), want: 15 * time.Second,
		},
		{
			name: "delay over",
			pod:  failedPod().annotation(failedKey, "1").obj(),
			now:  at(time.Minute), want: 0,
		},
		{
			name: "finish time from the deletion timestamp",
			pod:  newPod("job-0-abc").phase(corev1.PodFailed).deleted(t0, nil).annotation(failedKey, "2").obj(),
			now:  t0, want: 40 * time.Second,
		},
		{
			name: "custom policy",
			pod:  failedPod().annotation(failedKey, "3").obj(),
			now:  t0, policy: plainbackoff.Policy{Base: time.Second, Max: 5 * time.Second}, want: 5 * time.Second,
		},
		{
			name: "huge counts are capped without overflow",
			pod:  failedPod().annotation(failedKey, "2147483647").annotation(ignoredKey, "2147483647").obj(),
			now:  t0, want: 10 * time.Minute,
		},
		{
			name:      "invalid failure count counts 0 and is reported",
			pod:       failedPod().annotation(failedKey, "abc").annotation(ignoredKey, "1").obj(),
			now:       t0,
			want:      20 * time.Second,
			wantErrIn: []string{"ns/job-0-abc", failedKey, `"abc"`},
		},
		{
			name:      "negative ignored count counts 0 and is reported",
			pod:       failedPod().annotation(failedKey, "2").annotation(ignoredKey, "-1").obj(),
			now:       t0,
			want:      40 * time.Second,
			wantErrIn: []string{ignoredKey, `"-1"`},
		},
		{
			name:      "both invalid",
			pod:       failedPod().annotation(failedKey, "1e3").annotation(ignoredKey, "4294967296").obj(),
			now:       t0,
			want:      10 * time.Second,
			wantErrIn: []string{failedKey, ignoredKey, `"1e3"`, `"4294967296"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before *corev1.Pod
			if tc.pod != nil {
				before = tc.pod.DeepCopy()
			}
			got, err := backoff.IndexRemaining(owner.BatchJob, tc.pod, tc.policy, tc.now)
			assert.Equal(t, tc.want, got, "IndexRemaining(pod, %+v, %v) = %v, want %v", tc.policy, tc.now, got, tc.want)
			if tc.wantErrIn == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				var annErr *indexes.AnnotationError
				assert.True(t, errors.As(err, &annErr), "error %v does not wrap *indexes.AnnotationError", err)
				for _, s := range tc.wantErrIn {
					assert.Contains(t, err.Error(), s)
				}
			}
			if diff := cmp.Diff(before, tc.pod); diff != "" {
				t.Errorf("IndexRemaining modified the pod (-before +after):\n%s", diff)
			}
		})
	}
}

func TestPolicyIndexRemaining(t *testing.T) {
	tests := []struct {
		name            string
		failed, ignored int32
		now             time.Time
		want            time.Duration
	}{
		{name: "no earlier failures", now: t0, want: 10 * time.Second},
		{name: "one earlier failure", failed: 1, now: t0, want: 20 * time.Second},
		{name: "failed and ignored add up", failed: 1, ignored: 2, now: t0, want: 80 * time.Second},
		{name: "partly elapsed", failed: 1, now: at(12 * time.Second), want: 8 * time.Second},
		{name: "MaxInt32 + MaxInt32 + 1 does not wrap", failed: math.MaxInt32, ignored: math.MaxInt32, now: t0, want: 10 * time.Minute},
		{name: "negative counts count 0", failed: -5, ignored: math.MinInt32, now: t0, want: 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := plainbackoff.Policy{}.IndexRemaining(tc.failed, tc.ignored, t0, tc.now)
			assert.Equal(t, tc.want, got, "Policy{}.IndexRemaining(%d, %d, t0, %v) = %v, want %v", tc.failed, tc.ignored, tc.now, got, tc.want)
		})
	}
}
