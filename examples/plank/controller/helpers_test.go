package controller

// Unit tests of the pieces of the controller that need no API server.

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/concurrency"
	"github.com/jobkit/jobkit/deadlines"
	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	"github.com/jobkit/jobkit/podoutcome"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "zero value"},
		{name: "everything set", cfg: Config{MaxPending: 5, Queues: map[string]int{"gpu": 1, "any": -1, "off": 0}, RetryAfter: time.Second, LockRetry: time.Second, Workers: 2,
			DefaultTimeouts: &deadlines.Timeouts{Unscheduled: time.Minute}}},
		{name: "negative max pending", cfg: Config{MaxPending: -1}, wantErr: "MaxPending: Invalid value: -1"},
		{name: "negative retry", cfg: Config{RetryAfter: -time.Second}, wantErr: `RetryAfter: Invalid value: "-1s"`},
		{name: "negative lock retry", cfg: Config{LockRetry: -time.Second}, wantErr: `LockRetry: Invalid value: "-1s"`},
		{name: "negative workers", cfg: Config{Workers: -1}, wantErr: "Workers: Invalid value: -1"},
		{name: "empty queue name", cfg: Config{Queues: map[string]int{"": 1}}, wantErr: "queue name must not be empty"},
		{name: "negative timeout", cfg: Config{DefaultTimeouts: &deadlines.Timeouts{Pending: -time.Second}}, wantErr: "DefaultTimeouts.pending"},
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

func TestOutcomeOptions(t *testing.T) {
	defaults := deadlines.Timeouts{Unscheduled: time.Minute, Pending: 2 * time.Minute, Running: time.Hour}
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
				Timeouts: deadlines.Timeouts{Unscheduled: 5 * time.Second, Pending: 2 * time.Minute}},
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

func TestPeerOf(t *testing.T) {
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := metav1.NewTime(created.Add(time.Hour))
	tests := []struct {
		name   string
		status v1alpha1.RunJobStatus
		want   concurrency.State
	}{
		{name: "new", want: concurrency.StateTriggered},
		{name: "triggered", status: v1alpha1.RunJobStatus{State: v1alpha1.StateTriggered}, want: concurrency.StateTriggered},
		{name: "pending", status: v1alpha1.RunJobStatus{State: v1alpha1.StatePending}, want: concurrency.StatePending},
		{name: "aborted, pod not yet deleted", status: v1alpha1.RunJobStatus{State: v1alpha1.StateAborted}, want: concurrency.StateFinished},
		{name: "success", status: v1alpha1.RunJobStatus{State: v1alpha1.StateSuccess, CompletionTime: &now}, want: concurrency.StateFinished},
		{name: "completed whatever the state", status: v1alpha1.RunJobStatus{State: v1alpha1.StatePending, CompletionTime: &now}, want: concurrency.StateFinished},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rj := &v1alpha1.RunJob{
				ObjectMeta: metav1.ObjectMeta{UID: "u1", CreationTimestamp: metav1.NewTime(created)},
				Spec:       v1alpha1.RunJobSpec{JobName: "unit", QueueName: "q"},
				Status:     tt.status,
			}
			want := concurrency.Peer{UID: "u1", JobName: "unit", Queue: "q", State: tt.want, Created: created}
			if diff := cmp.Diff(want, peerOf(rj)); diff != "" {
				t.Errorf("peerOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewer(t *testing.T) {
	at := func(sec int, uid string) *v1alpha1.RunJob {
		return &v1alpha1.RunJob{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid),
			CreationTimestamp: metav1.NewTime(time.Date(2026, 3, 1, 12, 0, sec, 0, time.UTC))}}
	}
	tests := []struct {
		name string
		a, b *v1alpha1.RunJob
		want bool
	}{
		{name: "later creation", a: at(2, "a"), b: at(1, "b"), want: true},
		{name: "earlier creation", a: at(1, "b"), b: at(2, "a"), want: false},
		{name: "tie: higher UID is newer", a: at(1, "b"), b: at(1, "a"), want: true},
		{name: "tie: lower UID is older", a: at(1, "a"), b: at(1, "b"), want: false},
		{name: "same run", a: at(1, "a"), b: at(1, "a"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newer(tt.a, tt.b); got != tt.want {
				t.Errorf("newer(%s@%v, %s@%v) = %v, want %v", tt.a.UID, tt.a.CreationTimestamp, tt.b.UID, tt.b.CreationTimestamp, got, tt.want)
			}
		})
	}
}

func TestTransientDescription(t *testing.T) {
	tests := []struct {
		desc string
		want bool
	}{
		{"", true},
		{MessageTriggered, true},
		{MessageWaiting + ": 3 jobs are pending, at most 3 may be", true},
		{MessageReplacing + " e2e (Evicted), revival 1.", true},
		{"Aborted by a user: not needed", false},
		{deadlines.ReasonRunning, false},
		{MessageSuperseded + " new.", false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := transientDescription(tt.desc); got != tt.want {
				t.Errorf("transientDescription(%q) = %v, want %v", tt.desc, got, tt.want)
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
