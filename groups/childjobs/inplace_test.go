package childjobs_test

import (
	"cmp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// groupPod is a pod of group js reporting attempt ("" for no annotation).
func groupPod(attempt string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{plaingroup.LabelJobSetName: "js", plaingroup.LabelJobSetUID: "js-uid"}}}
	if attempt != "" {
		p.Annotations = map[string]string{plaingroup.AnnotationInPlaceRestartAttempt: attempt}
	}
	return p
}

// rolePod is a pod of group js reporting attempt, labelled as JobSet labels
// the pods of child index of role in the group's restart attempt restart,
// with completion index completion, in phase phase ("" for Running).
func rolePod(attempt, role string, index, restart, completion int, phase corev1.PodPhase) *corev1.Pod {
	p := groupPod(attempt)
	p.Labels[plaingroup.LabelRoleName] = role
	p.Labels[plaingroup.LabelJobIndex] = strconv.Itoa(index)
	p.Labels[plaingroup.LabelRestartAttempt] = strconv.Itoa(restart)
	p.Annotations[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(completion)
	p.Status.Phase = cmp.Or(phase, corev1.PodRunning)
	return p
}

func podsAt(attempts ...int) []*corev1.Pod {
	out := make([]*corev1.Pod, len(attempts))
	for i, a := range attempts {
		out[i] = groupPod(strconv.Itoa(a))
	}
	return out
}

// A group of a leader (one pod) and two workers (two pods each), restarted in
// place: Compute moves the status's attempts from the pods' annotations, or
// fails the group.
func TestComputeInPlaceRestart(t *testing.T) {
	cases := []struct {
		name                string
		strategy            plaingroup.RestartStrategy
		previous, current   *int32
		pods                []*corev1.Pod
		wantPrev, wantCur   *int32
		wantFailed, changed bool
		wantWarning         bool
		// resize changes the group's spec after its children exist.
		resize func(*childjobs.Input)
	}{
		{name: "every pod on attempt 0: current 0", strategy: plaingroup.InPlaceRestart, pods: podsAt(0, 0, 0, 0, 0),
			wantCur: ptr.To[int32](0), changed: true},
		{name: "one pod moved on: previous 0", strategy: plaingroup.InPlaceRestart, current: ptr.To[int32](0), pods: podsAt(1, 0, 0, 0, 0),
			wantPrev: ptr.To[int32](0), wantCur: ptr.To[int32](0), changed: true},
		{name: "the barrier lifts", strategy: plaingroup.InPlaceRestart, previous: ptr.To[int32](0), current: ptr.To[int32](0), pods: podsAt(1, 1, 1, 1, 1),
			wantPrev: ptr.To[int32](0), wantCur: ptr.To[int32](1), changed: true},
		{name: "nothing new: no status write", strategy: plaingroup.InPlaceRestart, previous: ptr.To[int32](0), current: ptr.To[int32](1), pods: podsAt(1, 1, 1, 1, 1),
			wantPrev: ptr.To[int32](0), wantCur: ptr.To[int32](1)},
		{name: "pods of another group of that name are left out", strategy: plaingroup.InPlaceRestart,
			pods:    append(podsAt(0, 0, 0, 0, 0), func() *corev1.Pod { p := groupPod("3"); p.Labels[plaingroup.LabelJobSetUID] = "old"; return p }()),
			wantCur: ptr.To[int32](0), changed: true},
		{name: "an attempt beyond maxRestarts fails the group", strategy: plaingroup.InPlaceRestart, pods: podsAt(3, 0, 0, 0, 0),
			wantFailed: true, changed: true},
		{name: "a container restarting too often fails the group", strategy: plaingroup.InPlaceRestart,
			pods: func() []*corev1.Pod {
				p := podsAt(0, 0, 0, 0, 0)
				p[2].Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: 1}, {RestartCount: 3}}
				return p
			}(), wantFailed: true, changed: true},
		{name: "a bad annotation is a warning", strategy: plaingroup.InPlaceRestart, pods: append(podsAt(0, 0, 0, 0), groupPod("x")), wantWarning: true},
		{name: "a pod that succeeded on the old attempt does not hold the barrier", strategy: plaingroup.InPlaceRestart,
			previous: ptr.To[int32](0), current: ptr.To[int32](0),
			pods: []*corev1.Pod{rolePod("1", "leader", 0, 0, 0, ""), rolePod("1", "workers", 0, 0, 0, ""), rolePod("0", "workers", 0, 0, 1, corev1.PodSucceeded),
				rolePod("1", "workers", 1, 0, 0, ""), rolePod("1", "workers", 1, 0, 1, "")},
			wantPrev: ptr.To[int32](0), wantCur: ptr.To[int32](1), changed: true},
		{name: "pods of a child scaled away do not hold the barrier", strategy: plaingroup.InPlaceRestart,
			previous: ptr.To[int32](0), current: ptr.To[int32](0),
			resize: func(in *childjobs.Input) { in.Spec.Roles[1].Replicas = 1 },
			pods: []*corev1.Pod{rolePod("1", "leader", 0, 0, 0, ""), rolePod("1", "workers", 0, 0, 0, ""), rolePod("1", "workers", 0, 0, 1, ""),
				rolePod("0", "workers", 1, 0, 0, ""), rolePod("0", "workers", 1, 0, 1, "")},
			wantPrev: ptr.To[int32](0), wantCur: ptr.To[int32](1), changed: true},
		{name: "pods of completion indexes resized away do not hold the barrier", strategy: plaingroup.InPlaceRestart,
			previous: ptr.To[int32](0), current: ptr.To[int32](0),
			resize: func(in *childjobs.Input) {
				in.Templates[1].Spec.Parallelism, in.Templates[1].Spec.Completions = ptr.To[int32](1), ptr.To[int32](1)
			},
			pods: []*corev1.Pod{rolePod("1", "leader", 0, 0, 0, ""), rolePod("1", "workers", 0, 0, 0, ""), rolePod("0", "workers", 0, 0, 1, ""),
				rolePod("1", "workers", 1, 0, 0, ""), rolePod("0", "workers", 1, 0, 1, "")},
			wantPrev: ptr.To[int32](0), wantCur: ptr.To[int32](1), changed: true},
		{name: "a pod that succeeded in a child of an earlier group restart is not expected: its index runs again", strategy: plaingroup.InPlaceRestart,
			previous: ptr.To[int32](0), current: ptr.To[int32](0),
			resize: func(in *childjobs.Input) { in.Status.Restarts = 1 },
			pods: []*corev1.Pod{rolePod("1", "leader", 0, 1, 0, ""), rolePod("1", "workers", 0, 1, 0, ""), rolePod("1", "workers", 0, 1, 1, ""),
				rolePod("1", "workers", 1, 1, 0, ""), rolePod("0", "workers", 1, 0, 1, corev1.PodSucceeded)},
			wantPrev: ptr.To[int32](0), wantCur: ptr.To[int32](0)},
		{name: "pods still running in the new size hold the barrier", strategy: plaingroup.InPlaceRestart,
			previous: ptr.To[int32](0), current: ptr.To[int32](0),
			resize: func(in *childjobs.Input) { in.Spec.Roles[1].Replicas = 1 },
			pods: []*corev1.Pod{rolePod("1", "leader", 0, 0, 0, ""), rolePod("1", "workers", 0, 0, 0, ""), rolePod("0", "workers", 0, 0, 1, ""),
				rolePod("1", "workers", 1, 0, 0, "")},
			wantPrev: ptr.To[int32](0), wantCur: ptr.To[int32](0)},
		{name: "Recreate reads no pod", strategy: plaingroup.Recreate, pods: podsAt(3, 0, 0, 0, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := leaderWorkers(2)
			in.Spec.FailurePolicy = &plaingroup.FailurePolicy{MaxRestarts: 2, RestartStrategy: tc.strategy}
			in.Status.PreviousInPlaceRestartAttempt, in.Status.CurrentInPlaceRestartAttempt = tc.previous, tc.current
			first, err := childjobs.Compute(in)
			require.NoError(t, err)
			// Settle the group's children and status, then look at the pods.
			for _, c := range first.Create {
				in.Children = append(in.Children, c.Job)
			}
			in.ServiceExists = true
			in.Status = first.Status
			in.Status.PreviousInPlaceRestartAttempt, in.Status.CurrentInPlaceRestartAttempt = tc.previous, tc.current
			in.Pods = tc.pods
			if tc.resize != nil {
				tc.resize(in)
			}
			p, err := childjobs.Compute(in)
			require.NoError(t, err)
			assert.Equal(t, tc.wantPrev, p.Status.PreviousInPlaceRestartAttempt, "previous")
			assert.Equal(t, tc.wantCur, p.Status.CurrentInPlaceRestartAttempt, "current")
			assert.Equal(t, tc.changed, p.StatusChanged, "StatusChanged")
			assert.Equal(t, tc.wantWarning, len(p.Warnings) > 0, "warnings %v", p.Warnings)
			c := condition(p.Status, plaingroup.ConditionFailed)
			if !tc.wantFailed {
				assert.Nil(t, c)
				return
			}
			require.NotNil(t, c)
			assert.Equal(t, "ReachedMaxRestarts", c.Reason)
			assert.Equal(t, "Failed", p.Status.TerminalState)
			assert.Len(t, p.Delete, 3, "the running children are stopped")
			assert.Equal(t, []string{"Warning/ReachedMaxRestarts"}, eventReasons(p))
		})
	}
}
