package podoutcome_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
)

const uid types.UID = "pod-uid-1"

func res(o podoutcome.Outcome) podoutcome.Result {
	return podoutcome.Result{Outcome: o, PodUID: uid, Message: "pod says " + string(o)}
}

func waiting(kind plaindl.Kind, remaining time.Duration) plaindl.Result {
	return plaindl.Result{Kind: kind, Timeout: time.Hour, Elapsed: time.Hour - remaining, Remaining: remaining}
}

func expired(kind plaindl.Kind) plaindl.Result {
	return plaindl.Result{Kind: kind, Expired: true, Reason: kind.Reason(), Timeout: time.Hour, Elapsed: time.Hour}
}

func TestNext(t *testing.T) {
	three := podoutcome.Options{MaxRevivals: 3}
	none := podoutcome.Revivals{}
	tests := []struct {
		name   string
		result podoutcome.Result
		dl     plaindl.Result
		rev    podoutcome.Revivals
		opts   podoutcome.Options
		want   podoutcome.Step
	}{
		{
			name:   "succeeded completes",
			result: res(podoutcome.OutcomeSucceeded),
			want: podoutcome.Step{Action: podoutcome.ActionComplete, Reason: "Succeeded", Message: "Job succeeded.",
				Outcome: podoutcome.OutcomeSucceeded},
		},
		{
			name:   "failed fails and keeps the container",
			result: podoutcome.Result{Outcome: podoutcome.OutcomeFailed, Container: "test", PodUID: uid},
			rev:    podoutcome.Revivals{Count: 1, Pod: "old"},
			want: podoutcome.Step{Action: podoutcome.ActionFail, Reason: "Failed", Message: "Job failed.",
				Outcome: podoutcome.OutcomeFailed, Container: "test", Revivals: podoutcome.Revivals{Count: 1, Pod: "old"}},
		},
		{
			name: "false success errors, naming the container",
			result: podoutcome.Result{Outcome: podoutcome.OutcomeFalseSuccess, Container: "test", PodUID: uid,
				Message: `pod is in phase Succeeded but container "test" exited with code 2`},
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "FalseSuccess",
				Message: `Pod was in succeeded phase but some containers didn't finish: pod is in phase Succeeded but container "test" exited with code 2`,
				Outcome: podoutcome.OutcomeFalseSuccess, Container: "test"},
		},
		{
			name:   "OOM-killed errors and leaves the pod",
			result: podoutcome.Result{Outcome: podoutcome.OutcomeOOMKilled, Container: "test", PodUID: uid},
			dl:     waiting(plaindl.KindRunning, time.Minute),
			opts:   three,
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "OOMKilled", Message: "Job pod was OOM killed by the cluster.",
				Outcome: podoutcome.OutcomeOOMKilled, Container: "test"},
		},

		// Eviction and revivals.
		{
			name:   "evicted with ErrorOnEviction errors and leaves the pod",
			result: res(podoutcome.OutcomeEvicted),
			opts:   podoutcome.Options{ErrorOnEviction: true, MaxRevivals: 3},
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "Evicted", Message: "Job pod was evicted by the cluster.",
				Outcome: podoutcome.OutcomeEvicted},
		},
		{
			name:   "evicted is retried: count raised and tied to the pod, pod deleted",
			result: res(podoutcome.OutcomeEvicted),
			rev:    none,
			opts:   three,
			want: podoutcome.Step{Action: podoutcome.ActionRetry, Reason: "Evicted",
				Message: "Job pod was stopped unexpectedly (evicted); replacing the pod (revival 1 of 3).",
				Outcome: podoutcome.OutcomeEvicted, Revivals: podoutcome.Revivals{Count: 1, Pod: uid}, DeletePod: true},
		},
		{
			name:   "evicted at the limit errors and leaves the pod",
			result: res(podoutcome.OutcomeEvicted),
			rev:    podoutcome.Revivals{Count: 3, Pod: "older-pod"},
			opts:   three,
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "MaxRevivals",
				Message: "Job pod reached max revivals (3) after being stopped unexpectedly (evicted)",
				Outcome: podoutcome.OutcomeEvicted, Revivals: podoutcome.Revivals{Count: 3, Pod: "older-pod"}},
		},
		{
			name:   "evicted above the limit errors",
			result: res(podoutcome.OutcomeEvicted),
			rev:    podoutcome.Revivals{Count: 7},
			opts:   three,
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "MaxRevivals",
				Message: "Job pod reached max revivals (7) after being stopped unexpectedly (evicted)",
				Outcome: podoutcome.OutcomeEvicted, Revivals: podoutcome.Revivals{Count: 7}},
		},
		{
			name:   "MaxRevivals 0 never revives",
			result: res(podoutcome.OutcomeEvicted),
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "MaxRevivals",
				Message: "Job pod reached max revivals (0) after being stopped unexpectedly (evicted)",
				Outcome: podoutcome.OutcomeEvicted},
		},
		{
			name:   "a revival already counted for this pod continues, even at the limit",
			result: res(podoutcome.OutcomeEvicted),
			rev:    podoutcome.Revivals{Count: 3, Pod: uid},
			opts:   three,
			want: podoutcome.Step{Action: podoutcome.ActionRetry, Reason: "Evicted",
				Message: "Job pod was stopped unexpectedly (evicted); revival 3 already recorded, replacing the pod.",
				Outcome: podoutcome.OutcomeEvicted, Revivals: podoutcome.Revivals{Count: 3, Pod: uid}, DeletePod: true},
		},
		{
			name:   "a pod without a UID is never taken for the recorded one",
			result: podoutcome.Result{Outcome: podoutcome.OutcomeEvicted},
			rev:    podoutcome.Revivals{Count: 1},
			opts:   three,
			want: podoutcome.Step{Action: podoutcome.ActionRetry, Reason: "Evicted",
				Message: "Job pod was stopped unexpectedly (evicted); replacing the pod (revival 2 of 3).",
				Outcome: podoutcome.OutcomeEvicted, Revivals: podoutcome.Revivals{Count: 2}, DeletePod: true},
		},
		{
			name:   "node lost is retried without deleting the terminating pod",
			result: terminating(res(podoutcome.OutcomeNodeLost)),
			rev:    podoutcome.Revivals{Count: 1, Pod: "older-pod"},
			opts:   podoutcome.Options{MaxRevivals: 3, ErrorOnEviction: true},
			want: podoutcome.Step{Action: podoutcome.ActionRetry, Reason: "NodeLost",
				Message: "Job pod was stopped unexpectedly (unreachable); replacing the pod (revival 2 of 3).",
				Outcome: podoutcome.OutcomeNodeLost, Revivals: podoutcome.Revivals{Count: 2, Pod: uid}},
		},
		{
			name:   "node lost, seen again while it terminates: wait for it, count unchanged",
			result: terminating(res(podoutcome.OutcomeNodeLost)),
			rev:    podoutcome.Revivals{Count: 2, Pod: uid},
			opts:   three,
			want: podoutcome.Step{Action: podoutcome.ActionRetry, Reason: "NodeLost",
				Message: "Job pod was stopped unexpectedly (unreachable); revival 2 already recorded, replacing the pod.",
				Outcome: podoutcome.OutcomeNodeLost, Revivals: podoutcome.Revivals{Count: 2, Pod: uid}},
		},
		{
			name:   "node lost at the limit",
			result: terminating(res(podoutcome.OutcomeNodeLost)),
			rev:    podoutcome.Revivals{Count: 3},
			opts:   three,
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "MaxRevivals",
				Message: "Job pod reached max revivals (3) after being stopped unexpectedly (unreachable)",
				Outcome: podoutcome.OutcomeNodeLost, Revivals: podoutcome.Revivals{Count: 3}},
		},
		{
			name:   "phase unknown is retried",
			result: res(podoutcome.OutcomeUnknown),
			opts:   three,
			want: podoutcome.Step{Action: podoutcome.ActionRetry, Reason: "Unknown",
				Message: "Job pod was stopped unexpectedly (unknown); replacing the pod (revival 1 of 3).",
				Outcome: podoutcome.OutcomeUnknown, Revivals: podoutcome.Revivals{Count: 1, Pod: uid}, DeletePod: true},
		},
		{
			name:   "phase unknown at the limit",
			result: res(podoutcome.OutcomeUnknown),
			rev:    podoutcome.Revivals{Count: 1},
			opts:   podoutcome.Options{MaxRevivals: 1},
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "MaxRevivals",
				Message: "Job pod reached max revivals (1) after being stopped unexpectedly (unknown)",
				Outcome: podoutcome.OutcomeUnknown, Revivals: podoutcome.Revivals{Count: 1}},
		},

		// Timeouts.
		{
			name:   "pending, not scheduled yet: wait until the timeout",
			result: res(podoutcome.OutcomePending),
			dl:     waiting(plaindl.KindUnscheduled, 3*time.Minute),
			want: podoutcome.Step{Action: podoutcome.ActionWait, Reason: "Pending", Message: "pod says Pending",
				Outcome: podoutcome.OutcomePending, RequeueAfter: 3 * time.Minute},
		},
		{
			name:   "pending without timeouts: wait for events",
			result: res(podoutcome.OutcomePending),
			want: podoutcome.Step{Action: podoutcome.ActionWait, Reason: "Pending", Message: "pod says Pending",
				Outcome: podoutcome.OutcomePending},
		},
		{
			name:   "unscheduled timeout errors and deletes the pod",
			result: res(podoutcome.OutcomePending),
			dl:     expired(plaindl.KindUnscheduled),
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "UnscheduledTimeout", Message: "Pod scheduling timeout.",
				Outcome: podoutcome.OutcomePending, DeletePod: true},
		},
		{
			name:   "pending timeout errors and deletes the pod",
			result: res(podoutcome.OutcomePending),
			dl:     expired(plaindl.KindPending),
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "PendingTimeout", Message: "Pod pending timeout.",
				Outcome: podoutcome.OutcomePending, DeletePod: true},
		},
		{
			name:   "running: wait until the timeout",
			result: res(podoutcome.OutcomeRunning),
			dl:     waiting(plaindl.KindRunning, 47*time.Hour),
			want: podoutcome.Step{Action: podoutcome.ActionWait, Reason: "Running", Message: "pod says Running",
				Outcome: podoutcome.OutcomeRunning, RequeueAfter: 47 * time.Hour},
		},
		{
			name:   "running timeout aborts and deletes the pod",
			result: res(podoutcome.OutcomeRunning),
			dl:     expired(plaindl.KindRunning),
			want: podoutcome.Step{Action: podoutcome.ActionAbort, Reason: "RunningTimeout", Message: "Pod running timeout.",
				Outcome: podoutcome.OutcomeRunning, DeletePod: true},
		},

		// Deleted.
		{
			name:   "deleted unexpectedly errors",
			result: terminating(res(podoutcome.OutcomeDeleted)),
			dl:     waiting(plaindl.KindPending, time.Minute),
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "DeletedUnexpectedly", Message: "Pod got deleted unexpectedly",
				Outcome: podoutcome.OutcomeDeleted},
		},
		{
			name:   "deleted while pending past its timeout reports the timeout",
			result: terminating(res(podoutcome.OutcomeDeleted)),
			dl:     expired(plaindl.KindUnscheduled),
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "UnscheduledTimeout", Message: "Pod scheduling timeout.",
				Outcome: podoutcome.OutcomeDeleted},
		},
		{
			name:   "deleted while running past its timeout is still deleted unexpectedly",
			result: terminating(res(podoutcome.OutcomeDeleted)),
			dl:     expired(plaindl.KindRunning),
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "DeletedUnexpectedly", Message: "Pod got deleted unexpectedly",
				Outcome: podoutcome.OutcomeDeleted},
		},

		{
			name:   "unrecognised phase waits without requeue",
			result: res(podoutcome.OutcomeOtherPhase),
			want: podoutcome.Step{Action: podoutcome.ActionWait, Reason: "OtherPhase", Message: "pod says OtherPhase",
				Outcome: podoutcome.OutcomeOtherPhase},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := podoutcome.Next(tt.result, tt.dl, tt.rev, tt.opts)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Next() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextErrors(t *testing.T) {
	tests := []struct {
		name    string
		result  podoutcome.Result
		dl      plaindl.Result
		rev     podoutcome.Revivals
		opts    podoutcome.Options
		wantErr string
	}{
		{name: "zero outcome", result: podoutcome.Result{}, wantErr: `podoutcome: Result.Outcome="": not an Outcome of this package`},
		{name: "unknown outcome", result: res("Exploded"), wantErr: `podoutcome: Result.Outcome="Exploded": not an Outcome of this package`},
		{
			name: "negative MaxRevivals", result: res(podoutcome.OutcomeEvicted), opts: podoutcome.Options{MaxRevivals: -1},
			wantErr: "podoutcome: Options.MaxRevivals=-1: must not be negative",
		},
		{
			name: "negative revival count", result: res(podoutcome.OutcomeEvicted), rev: podoutcome.Revivals{Count: -2},
			wantErr: "podoutcome: Revivals.Count=-2: must not be negative",
		},
		{
			name: "running deadline for a pending pod", result: res(podoutcome.OutcomePending), dl: expired(plaindl.KindRunning),
			wantErr: `podoutcome: deadline.Kind="Running": cannot apply to a pod with outcome Pending (pod and deadline from different snapshots?)`,
		},
		{
			name: "pending deadline for a running pod", result: res(podoutcome.OutcomeRunning), dl: expired(plaindl.KindPending),
			wantErr: `podoutcome: deadline.Kind="Pending": cannot apply to a pod with outcome Running (pod and deadline from different snapshots?)`,
		},
		{
			name: "unscheduled deadline for a running pod", result: res(podoutcome.OutcomeRunning), dl: waiting(plaindl.KindUnscheduled, 1),
			wantErr: `podoutcome: deadline.Kind="Unscheduled": cannot apply to a pod with outcome Running (pod and deadline from different snapshots?)`,
		},
		{
			name: "unknown deadline kind", result: res(podoutcome.OutcomeDeleted), dl: plaindl.Result{Kind: "Forever"},
			wantErr: `podoutcome: deadline.Kind="Forever": cannot apply to a pod with outcome DeletedUnexpectedly (pod and deadline from different snapshots?)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := podoutcome.Next(tt.result, tt.dl, tt.rev, tt.opts)
			assert.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, plaindl.ErrInvalidInput)
			var ie *plaindl.FieldError
			assert.ErrorAs(t, err, &ie)
			assert.Equal(t, podoutcome.Step{}, got)
		})
	}
}

func TestDecide(t *testing.T) {
	opts := podoutcome.Options{MaxRevivals: 2, Timeouts: plaindl.DefaultTimeouts()}
	started := func(p *corev1.Pod) { p.Status.StartTime = ptr.To(metav1.NewTime(t0.Add(time.Minute))) }
	tests := []struct {
		name string
		pod  *corev1.Pod
		now  time.Time
		rev  podoutcome.Revivals
		want podoutcome.Step
	}{
		{
			name: "unscheduled pod waits for its timeout",
			pod:  newPod(corev1.PodPending), now: t0.Add(time.Minute),
			want: podoutcome.Step{Action: podoutcome.ActionWait, Reason: "Pending", Message: "pod is pending",
				Outcome: podoutcome.OutcomePending, RequeueAfter: 4 * time.Minute},
		},
		{
			name: "unscheduled pod times out",
			pod:  newPod(corev1.PodPending), now: t0.Add(5 * time.Minute),
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "UnscheduledTimeout", Message: "Pod scheduling timeout.",
				Outcome: podoutcome.OutcomePending, DeletePod: true},
		},
		{
			name: "pending pod times out from its start time",
			pod:  newPod(corev1.PodPending, started), now: t0.Add(11 * time.Minute),
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "PendingTimeout", Message: "Pod pending timeout.",
				Outcome: podoutcome.OutcomePending, DeletePod: true},
		},
		{
			name: "running pod waits for its timeout",
			pod:  newPod(corev1.PodRunning, started, statuses(running("test"))), now: t0.Add(time.Hour + time.Minute),
			want: podoutcome.Step{Action: podoutcome.ActionWait, Reason: "Running", Message: "pod is running",
				Outcome: podoutcome.OutcomeRunning, RequeueAfter: 47 * time.Hour},
		},
		{
			name: "running pod times out",
			pod:  newPod(corev1.PodRunning, started, statuses(running("test"))), now: t0.Add(49 * time.Hour),
			want: podoutcome.Step{Action: podoutcome.ActionAbort, Reason: "RunningTimeout", Message: "Pod running timeout.",
				Outcome: podoutcome.OutcomeRunning, DeletePod: true},
		},
		{
			name: "pending pod deleted after its timeout",
			pod:  newPod(corev1.PodPending, deleting), now: t0.Add(time.Hour),
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "UnscheduledTimeout", Message: "Pod scheduling timeout.",
				Outcome: podoutcome.OutcomeDeleted},
		},
		{
			name: "running pod deleted after its timeout",
			pod:  newPod(corev1.PodRunning, started, deleting), now: t0.Add(100 * time.Hour),
			want: podoutcome.Step{Action: podoutcome.ActionError, Reason: "DeletedUnexpectedly", Message: "Pod got deleted unexpectedly",
				Outcome: podoutcome.OutcomeDeleted},
		},
		{
			name: "evicted pod is retried",
			pod:  newPod(corev1.PodFailed, started, reason("Evicted", "")), now: t0.Add(time.Hour),
			rev: podoutcome.Revivals{Count: 1, Pod: "pod-uid-0"},
			want: podoutcome.Step{Action: podoutcome.ActionRetry, Reason: "Evicted",
				Message: "Job pod was stopped unexpectedly (evicted); replacing the pod (revival 2 of 2).",
				Outcome: podoutcome.OutcomeEvicted, Revivals: podoutcome.Revivals{Count: 2, Pod: "pod-uid-1"}, DeletePod: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := podoutcome.Decide(tt.pod, tt.rev, opts, tt.now)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideErrors(t *testing.T) {
	tests := []struct {
		name    string
		pod     *corev1.Pod
		opts    podoutcome.Options
		wantErr string
	}{
		{name: "nil pod", pod: nil, wantErr: "podoutcome: pod=nil: a pod is required; a missing pod is recreated, not classified"},
		{
			name: "negative timeout", pod: newPod(corev1.PodRunning), opts: podoutcome.Options{Timeouts: plaindl.Timeouts{Running: -time.Hour}},
			wantErr: `deadlines.Check: invalid input: timeouts.running: Invalid value: "-1h0m0s": must not be negative (0 means no timeout)`,
		},
		{
			name: "negative MaxRevivals", pod: newPod(corev1.PodRunning), opts: podoutcome.Options{MaxRevivals: -3},
			wantErr: "podoutcome: Options.MaxRevivals=-3: must not be negative",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := podoutcome.Decide(tt.pod, podoutcome.Revivals{}, tt.opts, t0)
			assert.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, plaindl.ErrInvalidInput)
			assert.Equal(t, podoutcome.Step{}, got)
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts podoutcome.Options
		path *field.Path
		want field.ErrorList
	}{
		{name: "zero", want: nil},
		{name: "plank defaults", opts: podoutcome.Options{MaxRevivals: podoutcome.DefaultMaxRevivals, Timeouts: plaindl.DefaultTimeouts()}},
		{
			name: "everything negative", path: field.NewPath("spec"),
			opts: podoutcome.Options{MaxRevivals: -1, Timeouts: plaindl.Timeouts{Pending: -time.Second}},
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "maxRevivals"), -1, "must not be negative (0 never replaces the pod)"),
				field.Invalid(field.NewPath("spec", "timeouts", "pending"), "-1s", "must not be negative (0 means no timeout)"),
			},
		},
		{
			name: "no path",
			opts: podoutcome.Options{MaxRevivals: -1},
			want: field.ErrorList{field.Invalid(field.NewPath("maxRevivals"), -1, "must not be negative (0 never replaces the pod)")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.opts.Validate(tt.path)); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActionTerminal(t *testing.T) {
	for a, want := range map[podoutcome.Action]bool{
		podoutcome.ActionWait: false, podoutcome.ActionRetry: false,
		podoutcome.ActionComplete: true, podoutcome.ActionFail: true, podoutcome.ActionError: true, podoutcome.ActionAbort: true,
		"": false,
	} {
		assert.Equal(t, want, a.Terminal(), "Action(%q).Terminal()", a)
	}
}

// TestRevivalsAcrossRestarts plays a controller that keeps only the job's
// stored Revivals between syncs (as after a restart) and sees the same
// evicted pod several times before it goes away: each pod is counted once,
// and the job errors when a pod stops once more after MaxRevivals.
func TestRevivalsAcrossRestarts(t *testing.T) {
	opts := podoutcome.Options{MaxRevivals: 2}
	var stored podoutcome.Revivals // what the job's status holds
	evicted := func(u types.UID) *corev1.Pod {
		p := newPod(corev1.PodFailed, reason("Evicted", ""))
		p.UID = u
		return p
	}
	type sync struct {
		pod        *corev1.Pod
		wantAction podoutcome.Action
		wantCount  int
	}
	syncs := []sync{
		{evicted("a"), podoutcome.ActionRetry, 1},
		{evicted("a"), podoutcome.ActionRetry, 1}, // stale cache: the same pod again
		{evicted("a"), podoutcome.ActionRetry, 1}, // the delete failed: again
		{evicted("b"), podoutcome.ActionRetry, 2},
		{evicted("b"), podoutcome.ActionRetry, 2},
		{evicted("c"), podoutcome.ActionError, 2},
	}
	for i, s := range syncs {
		step, err := podoutcome.Decide(s.pod, stored, opts, t0)
		require.NoError(t, err)
		require.Equal(t, s.wantAction, step.Action, "sync %d: %s", i, step.Message)
		stored = step.Revivals // written back before the pod is deleted
		require.Equal(t, s.wantCount, stored.Count, "sync %d", i)
	}
}
