package controller

// Unit tests of the pieces of the controller that need no API server.

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "zero value"},
		{name: "everything set", cfg: Config{MaxPending: 5, Queues: map[string]int{"gpu": 1, "any": -1, "off": 0}, RetryAfter: time.Second, LockRetry: time.Second, Workers: 2,
			DefaultTimeouts: &plaindl.Timeouts{Unscheduled: time.Minute}}},
		{name: "negative max pending", cfg: Config{MaxPending: -1}, wantErr: "MaxPending: Invalid value: -1"},
		{name: "negative retry", cfg: Config{RetryAfter: -time.Second}, wantErr: `RetryAfter: Invalid value: "-1s"`},
		{name: "negative lock retry", cfg: Config{LockRetry: -time.Second}, wantErr: `LockRetry: Invalid value: "-1s"`},
		{name: "negative workers", cfg: Config{Workers: -1}, wantErr: "Workers: Invalid value: -1"},
		{name: "empty queue name", cfg: Config{Queues: map[string]int{"": 1}}, wantErr: "queue name must not be empty"},
		{name: "negative timeout", cfg: Config{DefaultTimeouts: &plaindl.Timeouts{Pending: -time.Second}}, wantErr: "DefaultTimeouts.pending"},
		{name: "plank's create errors", cfg: Config{CreateErrors: runplan.CreateErrorsPlank, ReporterFinalizers: []string{"example.com/reporter"}}},
		{name: "unknown create error policy", cfg: Config{CreateErrors: "Lenient"}, wantErr: `CreateErrors: Unsupported value: "Lenient"`},
		{name: "empty reporter finalizer", cfg: Config{ReporterFinalizers: []string{""}}, wantErr: "ReporterFinalizers[0]"},
		{name: "API backoff set", cfg: Config{APIBackoff: plainbackoff.Policy{Base: 5 * time.Millisecond, Max: time.Second}}},
		{name: "negative API backoff", cfg: Config{APIBackoff: plainbackoff.Policy{Base: -time.Second}}, wantErr: `APIBackoff.Base: Invalid value: "-1s"`},
		{name: "API backoff max below base", cfg: Config{APIBackoff: plainbackoff.Policy{Base: time.Second, Max: time.Millisecond}}, wantErr: `APIBackoff.Max: Invalid value: "1ms"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("validate() = %v, want ErrInvalidConfig containing %q", err, tt.wantErr)
			}
		})
	}
}

// The controller's requeue delays after API errors: Config.APIBackoff's, or the Job
// controller's 1s doubling to 1m.
func TestAPIBackoff(t *testing.T) {
	for _, tt := range []struct {
		name    string
		backoff plainbackoff.Policy
		want    []time.Duration
	}{
		{name: "default", want: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{name: "5ms to 10ms", backoff: plainbackoff.Policy{Base: 5 * time.Millisecond, Max: 10 * time.Millisecond},
			want: []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}},
		{name: "base above the default max", backoff: plainbackoff.Policy{Base: 2 * time.Minute}, want: []time.Duration{2 * time.Minute, 2 * time.Minute}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{cfg: Config{APIBackoff: tt.backoff}.withDefaults()}
			lim := r.apiLimiter()
			req := ctrl.Request{}
			for i, want := range tt.want {
				if got := lim.When(req); got != want {
					t.Errorf("delay after failure %d = %v, want %v", i+1, got, want)
				}
			}
		})
	}
}

func TestOutcomeOptions(t *testing.T) {
	defaults := plaindl.Timeouts{Unscheduled: time.Minute, Pending: 2 * time.Minute, Running: time.Hour}
	r := &Reconciler{cfg: Config{DefaultTimeouts: &defaults}.withDefaults()}
	tests := []struct {
		name string
		spec v1alpha1.RunJobSpec
		want podoutcome.Options
	}{
		{
			name: "defaults",
			want: podoutcome.Options{MaxRevivals: podoutcome.DefaultMaxRevivals, Timeouts: defaults},
		},
		{
			name: "overrides, zero disables",
			spec: v1alpha1.RunJobSpec{ErrorOnEviction: true, MaxRevivals: ptr.To[int32](0), Timeouts: &v1alpha1.PodTimeouts{
				Unscheduled: &metav1.Duration{Duration: 5 * time.Second}, Running: &metav1.Duration{}}},
			want: podoutcome.Options{ErrorOnEviction: true, MaxRevivals: 0,
				Timeouts: plaindl.Timeouts{Unscheduled: 5 * time.Second, Pending: 2 * time.Minute}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.outcomeOptions(&v1alpha1.RunJob{Spec: tt.spec})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcomeOptions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunOf(t *testing.T) {
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	started, pending, done := metav1.NewTime(created.Add(time.Second)), metav1.NewTime(created.Add(time.Minute)), metav1.NewTime(created.Add(time.Hour))
	tests := []struct {
		name   string
		spec   v1alpha1.RunJobSpec
		status v1alpha1.RunJobStatus
		want   runplan.Run
	}{
		{
			name: "new",
			spec: v1alpha1.RunJobSpec{JobName: "unit"},
			want: runplan.Run{UID: "u1", Name: "r1", JobName: "unit", State: runplan.StateNew, Created: created},
		},
		{
			name: "everything set",
			spec: v1alpha1.RunJobSpec{JobName: "unit", QueueName: "q", MaxConcurrency: 2, DedupeKey: "pr-1"},
			status: v1alpha1.RunJobStatus{State: v1alpha1.StatePending, Description: "Job triggered.", PodName: "r1",
				StartTime: &started, PendingTime: &pending, CompletionTime: &done, Revivals: 2, RevivedPodUID: "p2"},
			want: runplan.Run{UID: "u1", Name: "r1", JobName: "unit", Queue: "q", MaxConcurrency: 2, DedupeKey: "pr-1",
				State: runplan.StatePending, Description: "Job triggered.", Created: created, StartTime: started.Time,
				PendingTime: pending.Time, Completed: true, HadPod: true, Revivals: podoutcome.Revivals{Count: 2, Pod: "p2"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rj := &v1alpha1.RunJob{
				ObjectMeta: metav1.ObjectMeta{Name: "r1", UID: "u1", CreationTimestamp: metav1.NewTime(created)},
				Spec:       tt.spec,
				Status:     tt.status,
			}
			if diff := cmp.Diff(tt.want, runOf(rj)); diff != "" {
				t.Errorf("runOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLockKeys(t *testing.T) {
	tests := []struct {
		name       string
		maxPending int
		spec       v1alpha1.RunJobSpec
		want       []string
	}{
		{name: "no limit: no lock", spec: v1alpha1.RunJobSpec{JobName: "unit"}, want: []string{}},
		{name: "all limits", maxPending: 3, spec: v1alpha1.RunJobSpec{JobName: "unit", MaxConcurrency: 1, QueueName: "gpu"},
			want: []string{"pending/ci", "job/ci/unit", "queue/ci/gpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{cfg: Config{MaxPending: tt.maxPending}}
			got := r.lockKeys(&v1alpha1.RunJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ci"}, Spec: tt.spec})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lockKeys (-want +got):\n%s", diff)
			}
		})
	}
}
