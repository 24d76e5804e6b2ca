package deadlines_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/plain/deadlines"
)

var (
	created = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	started = created.Add(2 * time.Minute)
)

var timeouts = deadlines.Timeouts{Unscheduled: 5 * time.Minute, Pending: 10 * time.Minute, Running: time.Hour}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		pod      deadlines.Pod
		timeouts deadlines.Timeouts
		now      time.Time
		want     deadlines.Result
	}{
		{
			name: "unscheduled: time left",
			pod:  deadlines.Pod{Phase: deadlines.PhasePending, Created: created}, timeouts: timeouts, now: created.Add(time.Minute),
			want: deadlines.Result{Kind: deadlines.KindUnscheduled, Timeout: 5 * time.Minute, Elapsed: time.Minute, Remaining: 4 * time.Minute},
		},
		{
			name: "unscheduled: an empty phase is Pending, expires exactly at the timeout",
			pod:  deadlines.Pod{Created: created}, timeouts: timeouts, now: created.Add(5 * time.Minute),
			want: deadlines.Result{Kind: deadlines.KindUnscheduled, Expired: true, Reason: deadlines.KindUnscheduled.Reason(),
				Timeout: 5 * time.Minute, Elapsed: 5 * time.Minute},
		},
		{
			name: "unscheduled: disabled, no creation time needed",
			pod:  deadlines.Pod{Phase: deadlines.PhasePending}, timeouts: deadlines.Timeouts{Pending: time.Minute}, now: created,
		},
		{
			name: "pending: measured from the start, not the creation",
			pod:  deadlines.Pod{Phase: deadlines.PhasePending, Created: created, Started: started}, timeouts: timeouts, now: started.Add(time.Minute),
			want: deadlines.Result{Kind: deadlines.KindPending, Timeout: 10 * time.Minute, Elapsed: time.Minute, Remaining: 9 * time.Minute},
		},
		{
			name: "running: expired",
			pod:  deadlines.Pod{Phase: deadlines.PhaseRunning, Created: created, Started: started}, timeouts: timeouts, now: started.Add(2 * time.Hour),
			want: deadlines.Result{Kind: deadlines.KindRunning, Expired: true, Reason: deadlines.KindRunning.Reason(), Timeout: time.Hour, Elapsed: 2 * time.Hour},
		},
		{
			name: "running without a start: no timeout",
			pod:  deadlines.Pod{Phase: deadlines.PhaseRunning, Created: created}, timeouts: timeouts, now: created.Add(100 * time.Hour),
		},
		{
			name: "finished: no timeout",
			pod:  deadlines.Pod{Phase: "Succeeded", Created: created, Started: started}, timeouts: timeouts, now: created.Add(100 * time.Hour),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := deadlines.Check(tt.pod, tt.timeouts, tt.now)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckErrors(t *testing.T) {
	tests := []struct {
		name       string
		pod        deadlines.Pod
		timeouts   deadlines.Timeouts
		wantErr    string
		wantFields []string
	}{
		{
			name: "every negative timeout", pod: deadlines.Pod{Phase: deadlines.PhaseRunning},
			timeouts:   deadlines.Timeouts{Unscheduled: -1, Running: -time.Minute},
			wantErr:    "deadlines.Check: unscheduled=-1ns: must not be negative (0 means no timeout); running=-1m0s: must not be negative (0 means no timeout)",
			wantFields: []string{"unscheduled", "running"},
		},
		{
			name: "unscheduled timeout without a creation time", pod: deadlines.Pod{Phase: deadlines.PhasePending}, timeouts: timeouts,
			wantErr:    "deadlines.Check: Created=0001-01-01T00:00:00Z: needed to measure the unscheduled timeout",
			wantFields: []string{"Created"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := deadlines.Check(tt.pod, tt.timeouts, created)
			require.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, deadlines.ErrInvalidInput)
			assert.Equal(t, deadlines.Result{}, got)
			joined, ok := err.(interface{ Unwrap() []error })
			require.True(t, ok, "Check() error %T does not unwrap to its fields", err)
			var gotFields []string
			for _, e := range joined.Unwrap() {
				var fe *deadlines.FieldError
				require.True(t, errors.As(e, &fe), "Check() error holds %T, not a *FieldError", e)
				gotFields = append(gotFields, fe.Field)
			}
			var first *deadlines.FieldError
			require.True(t, errors.As(err, &first), "errors.As(Check() error, *FieldError) = false")
			assert.Equal(t, tt.wantFields[0], first.Field)
			assert.Equal(t, tt.wantFields, gotFields)
		})
	}
}

func TestCheckDoesNotAllocate(t *testing.T) {
	pod := deadlines.Pod{Phase: deadlines.PhaseRunning, Created: created, Started: started}
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = deadlines.Check(pod, timeouts, started.Add(time.Minute))
	})
	assert.Zero(t, allocs)
}

func BenchmarkCheck(b *testing.B) {
	pod := deadlines.Pod{Phase: deadlines.PhasePending, Created: created, Started: started}
	now := started.Add(time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = deadlines.Check(pod, timeouts, now)
	}
}

func TestMeasure(t *testing.T) {
	tests := []struct {
		name    string
		kind    deadlines.Kind
		timeout time.Duration
		now     time.Time
		want    deadlines.Result
	}{
		{name: "kind none", kind: deadlines.KindNone, timeout: time.Minute, now: created, want: deadlines.Result{}},
		{name: "zero timeout", kind: deadlines.KindRunning, now: created, want: deadlines.Result{}},
		{name: "negative timeout", kind: deadlines.KindRunning, timeout: -time.Minute, now: created, want: deadlines.Result{}},
		{
			name: "huge timeout does not overflow", kind: deadlines.KindRunning, timeout: time.Duration(1<<63 - 1),
			now: created.Add(time.Hour),
			want: deadlines.Result{Kind: deadlines.KindRunning, Timeout: time.Duration(1<<63 - 1), Elapsed: time.Hour,
				Remaining: time.Duration(1<<63-1) - time.Hour},
		},
		{
			name: "now far past since saturates elapsed", kind: deadlines.KindPending, timeout: time.Hour,
			now: created.AddDate(400, 0, 0),
			want: deadlines.Result{Kind: deadlines.KindPending, Expired: true, Reason: deadlines.KindPending.Reason(),
				Timeout: time.Hour, Elapsed: time.Duration(1<<63 - 1)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := deadlines.Measure(tt.kind, created, tt.timeout, tt.now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Measure() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKindReason(t *testing.T) {
	for kind, want := range map[deadlines.Kind]string{
		deadlines.KindNone:        "",
		deadlines.KindUnscheduled: "Pod scheduling timeout.",
		deadlines.KindPending:     "Pod pending timeout.",
		deadlines.KindRunning:     "Pod running timeout.",
		"Other":                   "",
	} {
		assert.Equal(t, want, kind.Reason(), "Kind(%q).Reason()", kind)
	}
}

// TestMeasureInvariants sweeps now across a timeout and checks the documented
// invariants at every step.
func TestMeasureInvariants(t *testing.T) {
	const timeout = 10 * time.Second
	for off := -3 * time.Second; off <= 13*time.Second; off += 250 * time.Millisecond {
		r := deadlines.Measure(deadlines.KindPending, created, timeout, created.Add(off))
		require.GreaterOrEqual(t, r.Remaining, time.Duration(0), "offset %v", off)
		require.LessOrEqual(t, r.Remaining, timeout, "offset %v", off)
		require.Equal(t, r.Elapsed >= timeout, r.Expired, "offset %v", off)
		if r.Expired {
			require.Zero(t, r.Remaining, "offset %v", off)
			require.Equal(t, deadlines.KindPending.Reason(), r.Reason)
		} else {
			require.Equal(t, timeout, r.Elapsed+r.Remaining, "offset %v", off)
			require.Empty(t, r.Reason)
		}
	}
}

func TestDefaultTimeouts(t *testing.T) {
	want := deadlines.Timeouts{Unscheduled: 5 * time.Minute, Pending: 10 * time.Minute, Running: 48 * time.Hour}
	assert.Equal(t, want, deadlines.DefaultTimeouts(), "plank's pod_unscheduled_timeout, pod_pending_timeout, pod_running_timeout")
}

func TestFieldErrorText(t *testing.T) {
	tests := []struct {
		name string
		err  deadlines.FieldError
		want string
	}{
		{name: "this package", err: deadlines.FieldError{Field: "pending", Value: "-1s", Reason: "must not be negative"},
			want: "deadlines: pending=-1s: must not be negative"},
		{name: "another single-pod package", err: deadlines.FieldError{Package: "runplan", Field: "Run.UID", Value: `""`, Reason: "required"},
			want: `runplan: Run.UID="": required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.EqualError(t, &tt.err, tt.want)
			assert.ErrorIs(t, &tt.err, deadlines.ErrInvalidInput)
		})
	}
}
