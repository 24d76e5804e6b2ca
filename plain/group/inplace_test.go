package group_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"

	"github.com/jobkit/jobkit/plain/group"
)

func TestPodAttempt(t *testing.T) {
	cases := []struct {
		name         string
		pod          group.PodAttempt
		want         int32
		wantReported bool
		wantErr      bool
	}{
		{name: "no annotation", pod: group.PodAttempt{}},
		{name: "an attempt", pod: group.PodAttempt{Annotation: "3", Annotated: true}, want: 3, wantReported: true},
		{name: "zero", pod: group.PodAttempt{Annotation: "0", Annotated: true}, want: 0, wantReported: true},
		{name: "a failed pod reports nothing", pod: group.PodAttempt{Annotation: "3", Annotated: true, Failed: true}},
		{name: "a succeeded pod reports nothing", pod: group.PodAttempt{Annotation: "3", Annotated: true, Succeeded: true}},
		{name: "a leaving pod reports nothing", pod: group.PodAttempt{Annotation: "3", Annotated: true, Leaving: true}},
		{name: "negative", pod: group.PodAttempt{Annotation: "-1", Annotated: true}, wantErr: true},
		{name: "not a number", pod: group.PodAttempt{Annotation: "two", Annotated: true}, wantErr: true},
		{name: "empty", pod: group.PodAttempt{Annotation: "", Annotated: true}, wantErr: true},
		{name: "beyond 32 bits", pod: group.PodAttempt{Annotation: "2147483648", Annotated: true}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, reported, err := tc.pod.Attempt()
			if got != tc.want || reported != tc.wantReported || (err != nil) != tc.wantErr {
				t.Errorf("Attempt() = %d, %t, %v, want %d, %t, error %t", got, reported, err, tc.want, tc.wantReported, tc.wantErr)
			}
			if err != nil {
				assert.True(t, errors.Is(err, group.ErrInvalid))
				assert.Contains(t, err.Error(), group.AnnotationInPlaceRestartAttempt+"=")
			}
		})
	}
}

// at returns pods reporting the given attempts.
func at(attempts ...int32) []group.PodAttempt {
	out := make([]group.PodAttempt, len(attempts))
	for i, a := range attempts {
		out[i] = group.PodAttempt{Annotation: strconv.Itoa(int(a)), Annotated: true}
	}
	return out
}

// The barrier of an in-place restart, as jobset-behaviour.md states it: a
// leader of one pod and a worker role of two children of two pods (5 pods).
func TestInPlaceAttemptsNext(t *testing.T) {
	roles := []group.Role{{Name: "leader", Replicas: 1, Parallelism: 1}, {Name: "workers", Replicas: 2, Parallelism: 2}}
	failed := &group.Condition{Type: group.ConditionFailed, Status: group.True, Reason: "ReachedMaxRestarts", Message: "jobset failed due to reaching max number of restarts"}
	cases := []struct {
		name        string
		attempts    group.InPlaceAttempts
		pods        []group.PodAttempt
		maxRestarts int32
		counters    group.Counters
		want        group.InPlaceAttempts
		wantFail    bool
		wantErr     bool
	}{
		{name: "no pod has reported yet", pods: []group.PodAttempt{{}, {}}, maxRestarts: 3},
		{name: "every pod on attempt 0: current 0", pods: at(0, 0, 0, 0, 0), maxRestarts: 3,
			want: group.InPlaceAttempts{Current: ptr[int32](0)}},
		{name: "four of five on attempt 0: nothing yet", pods: at(0, 0, 0, 0), maxRestarts: 3},
		{name: "one pod restarted to attempt 1: previous 0, the others restart", attempts: group.InPlaceAttempts{Current: ptr[int32](0)},
			pods: at(1, 0, 0, 0, 0), maxRestarts: 3,
			want: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](0)}},
		{name: "all on attempt 1: the barrier lifts", attempts: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](0)},
			pods: at(1, 1, 1, 1, 1), maxRestarts: 3,
			want: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](1)}},
		{name: "all equal but a pod missing: the barrier holds", attempts: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](0)},
			pods: at(1, 1, 1, 1), maxRestarts: 3,
			want: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](0)}},
		{name: "previous never goes back", attempts: group.InPlaceAttempts{Previous: ptr[int32](2), Current: ptr[int32](1)},
			pods: at(2, 1, 1, 1, 1), maxRestarts: 5,
			want: group.InPlaceAttempts{Previous: ptr[int32](2), Current: ptr[int32](1)}},
		{name: "previous follows the highest attempt", attempts: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](1)},
			pods: at(3, 1, 2, 1, 1), maxRestarts: 5,
			want: group.InPlaceAttempts{Previous: ptr[int32](2), Current: ptr[int32](1)}},
		{name: "failed pods and pods without the annotation are ignored",
			pods: append(at(1, 1, 1, 1, 1), group.PodAttempt{Annotation: "0", Annotated: true, Failed: true}, group.PodAttempt{}), maxRestarts: 3,
			want: group.InPlaceAttempts{Current: ptr[int32](1)}},
		{name: "more pods report than expected: no barrier lift", pods: at(1, 1, 1, 1, 1, 1), maxRestarts: 3,
			want: group.InPlaceAttempts{Previous: ptr[int32](0)}},
		{name: "a container restarted more than maxRestarts times", pods: []group.PodAttempt{{Annotation: "0", Annotated: true, RestartCount: 4}},
			maxRestarts: 3, wantFail: true},
		{name: "a container restarted maxRestarts times", pods: []group.PodAttempt{{Annotation: "0", Annotated: true, RestartCount: 3}},
			maxRestarts: 3},
		{name: "an attempt beyond maxRestarts", pods: at(4, 3, 3, 3, 3), maxRestarts: 3, wantFail: true},
		{name: "restarts that do not count are taken off", pods: at(4, 3, 3, 3, 3), maxRestarts: 3,
			counters: group.Counters{Restarts: 2, RestartsCountTowardsMax: 1},
			want:     group.InPlaceAttempts{Previous: ptr[int32](3)}},
		{name: "a pod succeeded on the old attempt while the others restarted: the barrier lifts over the four left",
			attempts: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](0)},
			pods:     append(at(1, 1, 1, 1), group.PodAttempt{Annotation: "0", Annotated: true, Succeeded: true}), maxRestarts: 3,
			want: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](1)}},
		{name: "a succeeded pod without the annotation is not expected either",
			pods: append(at(0, 0, 0, 0), group.PodAttempt{Succeeded: true}), maxRestarts: 3,
			want: group.InPlaceAttempts{Current: ptr[int32](0)}},
		{name: "a succeeded pod and one missing: the barrier holds",
			attempts: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](0)},
			pods:     append(at(1, 1, 1), group.PodAttempt{Annotation: "0", Annotated: true, Succeeded: true}), maxRestarts: 3,
			want: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](0)}},
		{name: "every pod succeeded: nothing moves", attempts: group.InPlaceAttempts{Current: ptr[int32](2)},
			pods: []group.PodAttempt{{Succeeded: true}, {Succeeded: true}, {Succeeded: true}, {Succeeded: true}, {Succeeded: true}}, maxRestarts: 3,
			want: group.InPlaceAttempts{Current: ptr[int32](2)}},
		{name: "a succeeded pod whose container restarted more than maxRestarts times still fails the group",
			pods: []group.PodAttempt{{Annotation: "0", Annotated: true, Succeeded: true, RestartCount: 4}}, maxRestarts: 3, wantFail: true},
		{name: "pods of a child scaled away do not hold the barrier",
			attempts: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](0)},
			pods: append(at(1, 1, 1, 1, 1), group.PodAttempt{Annotation: "0", Annotated: true, Leaving: true},
				group.PodAttempt{Annotation: "1", Annotated: true, Leaving: true}), maxRestarts: 3,
			want: group.InPlaceAttempts{Previous: ptr[int32](0), Current: ptr[int32](1)}},
		{name: "a leaving pod's attempt and restarts count for nothing",
			pods: append(at(0, 0, 0, 0, 0), group.PodAttempt{Annotation: "9", Annotated: true, Leaving: true, RestartCount: 9}), maxRestarts: 3,
			want: group.InPlaceAttempts{Current: ptr[int32](0)}},
		{name: "a leaving pod that succeeded does not lower the expected count",
			pods: append(at(0, 0, 0, 0), group.PodAttempt{Annotation: "0", Annotated: true, Leaving: true, Succeeded: true}), maxRestarts: 3},
		{name: "a leaving pod with a bad annotation is no error",
			pods: append(at(0, 0, 0, 0, 0), group.PodAttempt{Annotation: "x", Annotated: true, Leaving: true}), maxRestarts: 3,
			want: group.InPlaceAttempts{Current: ptr[int32](0)}},
		{name: "a bad annotation: that pod reports nothing, the rest is decided",
			pods: append(at(0, 0, 0, 0), group.PodAttempt{Annotation: "x", Annotated: true}), maxRestarts: 3, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, d, err := tc.attempts.Next(roles, tc.pods, tc.maxRestarts, tc.counters)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Next attempts (-want +got):\n%s", diff)
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("Next error = %v, want error %t", err, tc.wantErr)
			}
			assert.Equal(t, tc.counters, d.Counters, "counters unchanged")
			if !tc.wantFail {
				assert.Equal(t, group.NoFailure, d.Effect)
				assert.Nil(t, d.Condition)
				return
			}
			assert.Equal(t, group.Fail, d.Effect)
			assert.Equal(t, failed, d.Condition)
			assert.Equal(t, "Failed", d.TerminalState)
			assert.Equal(t, "ReachedMaxRestarts", d.EventReason)
			assert.Equal(t, tc.attempts, got, "a failure leaves the attempts")
		})
	}
}

// Next returns a new pointer when it changes an attempt, never writing
// through the input's.
func TestInPlaceAttemptsNextDoesNotModify(t *testing.T) {
	prev := int32(0)
	a := group.InPlaceAttempts{Previous: &prev}
	got, _, _ := a.Next([]group.Role{{Replicas: 2, Parallelism: 1}}, at(3, 1), 5, group.Counters{})
	assert.Equal(t, int32(0), prev)
	assert.Equal(t, int32(2), *got.Previous)
}
