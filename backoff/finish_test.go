package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
)

func TestFinishTime(t *testing.T) {
	created := at(-time.Hour)
	readyFalse := at(-10 * time.Minute)
	deletion := at(-5 * time.Minute)
	tests := []struct {
		name string
		pod  *corev1.Pod
		want time.Time
	}{
		{
			name: "containers: latest finishedAt of all regular containers",
			pod: newPod("p").created(created).ready(corev1.ConditionFalse, readyFalse).
				terminated(at(-time.Second)).terminated(t0).terminated(at(-2 * time.Second)).obj(),
			want: t0,
		},
		{
			name: "containers: a sidecar that stopped last gives the time",
			pod: newPod("p").created(created).initSpec("sidecar", true).
				terminated(at(-time.Second)).initTerminated("sidecar", t0).obj(),
			want: t0,
		},
		{
			name: "containers: a regular init container is ignored",
			pod: newPod("p").created(created).initSpec("setup", false).
				terminated(at(-time.Second)).initTerminated("setup", t0).obj(),
			want: at(-time.Second),
		},
		{
			name: "containers: sidecar statuses in a different order than the spec",
			pod: newPod("p").created(created).initSpec("setup", false).initSpec("proxy", true).initSpec("logs", true).
				terminated(at(-3*time.Second)).
				initTerminated("logs", at(-time.Second)).initTerminated("setup", t0).initTerminated("proxy", at(-2*time.Second)).obj(),
			want: at(-time.Second),
		},
		{
			name: "containers: a status with no spec entry is not a sidecar",
			pod:  newPod("p").created(created).terminated(at(-time.Second)).initTerminated("ghost", t0).obj(),
			want: at(-time.Second),
		},
		{
			name: "containers: only sidecar statuses are enough",
			pod:  newPod("p").created(created).initSpec("sidecar", true).initTerminated("sidecar", t0).obj(),
			want: t0,
		},
		{
			name: "PodReady False when a regular container still runs",
			pod: newPod("p").created(created).ready(corev1.ConditionFalse, readyFalse).deleted(deletion, nil).
				terminated(at(-time.Second)).running().obj(),
			want: readyFalse,
		},
		{
			name: "PodReady False when a sidecar still runs",
			pod: newPod("p").created(created).ready(corev1.ConditionFalse, readyFalse).initSpec("sidecar", true).
				terminated(at(-time.Second)).initRunning("sidecar").obj(),
			want: readyFalse,
		},
		{
			name: "PodReady False when a regular container runs and the sidecar stopped",
			pod: newPod("p").created(created).ready(corev1.ConditionFalse, readyFalse).initSpec("sidecar", true).
				running().initTerminated("sidecar", t0).obj(),
			want: readyFalse,
		},
		{
			name: "PodReady False when finishedAt is missing",
			pod: newPod("p").created(created).ready(corev1.ConditionFalse, readyFalse).
				terminated(t0).terminated(time.Time{}).obj(),
			want: readyFalse,
		},
		{
			name: "PodReady False when there are no container statuses",
			pod:  newPod("p").created(created).ready(corev1.ConditionFalse, readyFalse).obj(),
			want: readyFalse,
		},
		{
			name: "PodReady True does not count: deletion",
			pod: newPod("p").created(created).ready(corev1.ConditionTrue, readyFalse).deleted(deletion, nil).
				running().obj(),
			want: deletion,
		},
		{
			name: "PodReady False without a transition time does not count: deletion",
			pod: newPod("p").created(created).ready(corev1.ConditionFalse, time.Time{}).deleted(deletion, nil).
				running().obj(),
			want: deletion,
		},
		{
			name: "only the first PodReady condition counts",
			pod: newPod("p").created(created).ready(corev1.ConditionTrue, readyFalse).ready(corev1.ConditionFalse, at(-time.Minute)).
				deleted(deletion, nil).obj(),
			want: deletion,
		},
		{
			name: "deletion minus the grace period",
			pod:  newPod("p").created(created).deleted(deletion, ptr.To[int64](30)).running().obj(),
			want: deletion.Add(-30 * time.Second),
		},
		{
			name: "deletion with a zero grace period",
			pod:  newPod("p").created(created).deleted(deletion, ptr.To[int64](0)).obj(),
			want: deletion,
		},
		{
			name: "deletion with a huge grace period does not overflow",
			pod:  newPod("p").created(created).deleted(deletion, ptr.To[int64](math.MaxInt64)).obj(),
			want: deletion.Add(-time.Duration(math.MaxInt64 / int64(time.Second) * int64(time.Second))),
		},
		{
			name: "creation when nothing else is known",
			pod:  newPod("p").created(created).running().obj(),
			want: created,
		},
		{
			name: "creation when a terminated container has no finishedAt",
			pod:  newPod("p").created(created).terminated(time.Time{}).obj(),
			want: created,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.pod.DeepCopy()
			got := backoff.FinishTime(tc.pod)
			assert.True(t, got.Equal(tc.want), "FinishTime(pod) = %v, want %v", got, tc.want)
			if diff := cmp.Diff(before, tc.pod); diff != "" {
				t.Errorf("FinishTime modified the pod (-before +after):\n%s", diff)
			}
		})
	}
}

func TestFinishTimeDoesNotAllocate(t *testing.T) {
	pod := newPod("p").initSpec("setup", false).initSpec("sidecar", true).
		terminated(t0).initTerminated("sidecar", at(time.Second)).initTerminated("setup", at(-time.Second)).obj()
	allocs := testing.AllocsPerRun(100, func() { _ = backoff.FinishTime(pod) })
	assert.Zero(t, allocs)
}
