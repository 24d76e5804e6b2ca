package deadlines_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/deadlines"
)

var (
	created = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	started = created.Add(2 * time.Minute)
)

type podOpt func(*corev1.Pod)

func newPod(phase corev1.PodPhase, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job-1", CreationTimestamp: metav1.NewTime(created)},
		Status:     corev1.PodStatus{Phase: phase},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func startedAt(t time.Time) podOpt {
	return func(p *corev1.Pod) { p.Status.StartTime = ptrTime(t) }
}

func ptrTime(t time.Time) *metav1.Time { mt := metav1.NewTime(t); return &mt }

var timeouts = plaindl.Timeouts{Unscheduled: 5 * time.Minute, Pending: 10 * time.Minute, Running: time.Hour}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		pod      *corev1.Pod
		timeouts plaindl.Timeouts
		now      time.Time
		want     plaindl.Result
	}{
		// Unscheduled.
		{
			name: "unscheduled: time left",
			pod:  newPod(corev1.PodPending), timeouts: timeouts, now: created.Add(time.Minute),
			want: plaindl.Result{Kind: plaindl.KindUnscheduled, Timeout: 5 * time.Minute,
				Elapsed: time.Minute, Remaining: 4 * time.Minute},
		},
		{
			name: "unscheduled: expires exactly at the timeout",
			pod:  newPod(corev1.PodPending), timeouts: timeouts, now: created.Add(5 * time.Minute),
			want: plaindl.Result{Kind: plaindl.KindUnscheduled, Expired: true, Reason: "Pod scheduling timeout.",
				Timeout: 5 * time.Minute, Elapsed: 5 * time.Minute},
		},
		{
			name: "unscheduled: one nanosecond before",
			pod:  newPod(corev1.PodPending), timeouts: timeouts, now: created.Add(5*time.Minute - 1),
			want: plaindl.Result{Kind: plaindl.KindUnscheduled, Timeout: 5 * time.Minute,
				Elapsed: 5*time.Minute - 1, Remaining: 1},
		},
		{
			name: "unscheduled: an empty phase is Pending",
			pod:  newPod(""), timeouts: timeouts, now: created.Add(6 * time.Minute),
			want: plaindl.Result{Kind: plaindl.KindUnscheduled, Expired: true, Reason: "Pod scheduling timeout.",
				Timeout: 5 * time.Minute, Elapsed: 6 * time.Minute},
		},
		{
			name:     "unscheduled: a zero start time counts as unset",
			pod:      newPod(corev1.PodPending, func(p *corev1.Pod) { p.Status.StartTime = &metav1.Time{} }),
			timeouts: timeouts, now: created.Add(time.Minute),
			want: plaindl.Result{Kind: plaindl.KindUnscheduled, Timeout: 5 * time.Minute,
				Elapsed: time.Minute, Remaining: 4 * time.Minute},
		},
		{
			name: "unscheduled: disabled",
			pod:  newPod(corev1.PodPending), timeouts: plaindl.Timeouts{Pending: time.Second, Running: time.Second},
			now:  created.Add(time.Hour),
			want: plaindl.Result{},
		},
		{
			name: "unscheduled: disabled, no creation time needed",
			pod:  newPod(corev1.PodPending, func(p *corev1.Pod) { p.CreationTimestamp = metav1.Time{} }),
			now:  created,
			want: plaindl.Result{},
		},
		{
			name: "unscheduled: creation in the future counts as no time elapsed",
			pod:  newPod(corev1.PodPending), timeouts: timeouts, now: created.Add(-time.Hour),
			want: plaindl.Result{Kind: plaindl.KindUnscheduled, Timeout: 5 * time.Minute,
				Remaining: 5 * time.Minute},
		},

		// Pending.
		{
			name: "pending: measured from start time, not creation",
			pod:  newPod(corev1.PodPending, startedAt(started)), timeouts: timeouts, now: started.Add(9 * time.Minute),
			want: plaindl.Result{Kind: plaindl.KindPending, Timeout: 10 * time.Minute,
				Elapsed: 9 * time.Minute, Remaining: time.Minute},
		},
		{
			name: "pending: expired",
			pod:  newPod(corev1.PodPending, startedAt(started)), timeouts: timeouts, now: started.Add(10 * time.Minute),
			want: plaindl.Result{Kind: plaindl.KindPending, Expired: true, Reason: "Pod pending timeout.",
				Timeout: 10 * time.Minute, Elapsed: 10 * time.Minute},
		},
		{
			name: "pending: disabled",
			pod:  newPod(corev1.PodPending, startedAt(started)), timeouts: plaindl.Timeouts{Unscheduled: time.Second},
			now:  started.Add(time.Hour),
			want: plaindl.Result{},
		},
		{
			name: "pending: start time in the future",
			pod:  newPod(corev1.PodPending, startedAt(started)), timeouts: timeouts, now: started.Add(-time.Minute),
			want: plaindl.Result{Kind: plaindl.KindPending, Timeout: 10 * time.Minute, Remaining: 10 * time.Minute},
		},

		// Running.
		{
			name: "running: measured from start time",
			pod:  newPod(corev1.PodRunning, startedAt(started)), timeouts: timeouts, now: started.Add(59 * time.Minute),
			want: plaindl.Result{Kind: plaindl.KindRunning, Timeout: time.Hour,
				Elapsed: 59 * time.Minute, Remaining: time.Minute},
		},
		{
			name: "running: expired",
			pod:  newPod(corev1.PodRunning, startedAt(started)), timeouts: timeouts, now: started.Add(2 * time.Hour),
			want: plaindl.Result{Kind: plaindl.KindRunning, Expired: true, Reason: "Pod running timeout.",
				Timeout: time.Hour, Elapsed: 2 * time.Hour},
		},
		{
			name: "running: without a start time there is no timeout",
			pod:  newPod(corev1.PodRunning), timeouts: timeouts, now: created.Add(100 * time.Hour),
			want: plaindl.Result{},
		},
		{
			name: "running: disabled",
			pod:  newPod(corev1.PodRunning, startedAt(started)), timeouts: plaindl.Timeouts{Unscheduled: 1, Pending: 1},
			now:  started.Add(100 * time.Hour),
			want: plaindl.Result{},
		},
		{
			name: "running: a terminating pod still reports its timeout",
			pod: newPod(corev1.PodRunning, startedAt(started), func(p *corev1.Pod) {
				p.DeletionTimestamp = ptrTime(started)
			}),
			timeouts: timeouts, now: started.Add(30 * time.Minute),
			want: plaindl.Result{Kind: plaindl.KindRunning, Timeout: time.Hour,
				Elapsed: 30 * time.Minute, Remaining: 30 * time.Minute},
		},

		// No timeout.
		{
			name: "succeeded", pod: newPod(corev1.PodSucceeded, startedAt(started)), timeouts: timeouts,
			now: started.Add(100 * time.Hour), want: plaindl.Result{},
		},
		{
			name: "failed", pod: newPod(corev1.PodFailed, startedAt(started)), timeouts: timeouts,
			now: started.Add(100 * time.Hour), want: plaindl.Result{},
		},
		{
			name: "unknown phase", pod: newPod(corev1.PodUnknown, startedAt(started)), timeouts: timeouts,
			now: started.Add(100 * time.Hour), want: plaindl.Result{},
		},
		{
			name: "unrecognised phase", pod: newPod("Paused"), timeouts: timeouts,
			now: started.Add(100 * time.Hour), want: plaindl.Result{},
		},
		{
			name: "zero timeouts", pod: newPod(corev1.PodPending), now: created.Add(100 * time.Hour),
			want: plaindl.Result{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.pod.DeepCopy()
			got, err := deadlines.Check(tt.pod, tt.timeouts, tt.now)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check() mismatch (-want +got):\n%s", diff)
			}
			assert.Equal(t, before, tt.pod, "Check modified the pod")
		})
	}
}

func TestCheckErrors(t *testing.T) {
	tests := []struct {
		name     string
		pod      *corev1.Pod
		timeouts plaindl.Timeouts
		wantErr  string
	}{
		{
			name: "nil pod", pod: nil, timeouts: timeouts,
			wantErr: "deadlines.Check: invalid input: pod is nil",
		},
		{
			name: "negative unscheduled", pod: newPod(corev1.PodRunning), timeouts: plaindl.Timeouts{Unscheduled: -time.Second},
			wantErr: `deadlines.Check: invalid input: timeouts.unscheduled: Invalid value: "-1s": must not be negative (0 means no timeout)`,
		},
		{
			name: "negative pending", pod: newPod(corev1.PodRunning), timeouts: plaindl.Timeouts{Pending: -time.Minute},
			wantErr: `deadlines.Check: invalid input: timeouts.pending: Invalid value: "-1m0s": must not be negative (0 means no timeout)`,
		},
		{
			name: "negative running", pod: newPod(corev1.PodSucceeded), timeouts: plaindl.Timeouts{Running: -1},
			wantErr: `deadlines.Check: invalid input: timeouts.running: Invalid value: "-1ns": must not be negative (0 means no timeout)`,
		},
		{
			name: "all negative", pod: newPod(corev1.PodPending), timeouts: plaindl.Timeouts{Unscheduled: -1, Pending: -2, Running: -3},
			wantErr: `deadlines.Check: invalid input: [timeouts.unscheduled: Invalid value: "-1ns": must not be negative (0 means no timeout), ` +
				`timeouts.pending: Invalid value: "-2ns": must not be negative (0 means no timeout), ` +
				`timeouts.running: Invalid value: "-3ns": must not be negative (0 means no timeout)]`,
		},
		{
			name:     "unscheduled timeout without a creation time",
			pod:      newPod(corev1.PodPending, func(p *corev1.Pod) { p.CreationTimestamp = metav1.Time{} }),
			timeouts: timeouts,
			wantErr:  "deadlines.Check: invalid input: metadata.creationTimestamp: Required value: needed to measure the unscheduled timeout",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := deadlines.Check(tt.pod, tt.timeouts, created)
			require.Error(t, err)
			assert.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, plaindl.ErrInvalidInput)
			assert.Equal(t, plaindl.Result{}, got)
		})
	}
}

func TestValidateTimeouts(t *testing.T) {
	tests := []struct {
		name     string
		timeouts plaindl.Timeouts
		path     *field.Path
		want     field.ErrorList
	}{
		{name: "zero", want: nil},
		{name: "defaults", timeouts: plaindl.DefaultTimeouts(), want: nil},
		{
			name: "negative pending, no path", timeouts: plaindl.Timeouts{Pending: -time.Second},
			want: field.ErrorList{field.Invalid(field.NewPath("pending"), "-1s", "must not be negative (0 means no timeout)")},
		},
		{
			name: "negative unscheduled and running under spec.timeouts",
			path: field.NewPath("spec", "timeouts"), timeouts: plaindl.Timeouts{Unscheduled: -1, Pending: 1, Running: -time.Hour},
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "timeouts", "unscheduled"), "-1ns", "must not be negative (0 means no timeout)"),
				field.Invalid(field.NewPath("spec", "timeouts", "running"), "-1h0m0s", "must not be negative (0 means no timeout)"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := deadlines.ValidateTimeouts(tt.timeouts, tt.path)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateTimeouts() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckDoesNotAllocate(t *testing.T) {
	pod := newPod(corev1.PodRunning, startedAt(started))
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = deadlines.Check(pod, timeouts, started.Add(time.Minute))
	})
	assert.Zero(t, allocs)
}

func BenchmarkCheck(b *testing.B) {
	pod := newPod(corev1.PodPending, startedAt(started))
	now := started.Add(time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = deadlines.Check(pod, timeouts, now)
	}
}
