package runplan_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	plainconc "github.com/jobkit/jobkit/plain/concurrency"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

// pendingStart is what a run records when its pod is created or adopted.
var pendingStart = runplan.Status{State: runplan.StatePending, Description: "Job triggered.", PendingTime: now}

// TestCompute replays plank's rules (plank-behaviour.md); plank says what
// plank does, and "differs" why jobkit does otherwise.
func TestCompute(t *testing.T) {
	old := now.Add(-2 * time.Hour)
	young := now.Add(-time.Minute)
	tests := []struct {
		name  string
		plank string
		in    runplan.Input
		edit  func(*runplan.Input)
		want  runplan.Plan
	}{
		// Entry.
		{
			name:  "completed run: nothing",
			plank: "only reconciles jobs without a completionTime",
			in:    input(aRun(runplan.StateAborted, func(r *runplan.Run) { r.Completed = true }), aPod(corev1.PodRunning)),
			want:  runplan.Plan{Action: runplan.ActionNone, Reason: "Completed"},
		},
		{
			name:  "unknown state: nothing",
			plank: "any other state: nothing runs",
			in:    input(aRun("scheduling"), nil),
			want:  runplan.Plan{Action: runplan.ActionNone, Reason: "UnknownState"},
		},
		{
			name:  "new run: start time, then create",
			plank: "a job is created triggered with a start time; differs: here the controller stamps it",
			in:    input(aRun(runplan.StateNew, func(r *runplan.Run) { r.StartTime = time.Time{} }), nil),
			want: runplan.Plan{Action: runplan.ActionCreate, Reason: "Start", StartTime: now,
				Status: pendingStart, Pod: runplan.PodEffects{Create: true}},
		},

		// syncTriggered.
		{
			name:  "triggered with a pod: adopt without asking the limits",
			plank: "if the pod exists, adopt it and skip the concurrency gate",
			in: func() runplan.Input {
				in := input(aRun(runplan.StateTriggered), aPod(corev1.PodRunning), peer("p", "lint", runplan.StatePending, old))
				in.Limits.MaxPending = 1
				return in
			}(),
			want: runplan.Plan{Action: runplan.ActionAdopt, Reason: "PodExists", Status: pendingStart,
				Pod: runplan.PodEffects{UID: podUID}},
		},
		{
			name:  "triggered with a pod another owner controls: error, pod left alone",
			plank: "differs: plank adopts any pod with the job's name",
			in: input(aRun(runplan.StateTriggered), aPod(corev1.PodRunning, func(p *corev1.Pod) {
				p.OwnerReferences[0].UID = "someone-else"
			})),
			want: runplan.Plan{Action: runplan.ActionFinish, Reason: "PodNotControlled",
				Status: runplan.Status{State: runplan.StateError, Description: "Pod run-1 exists and does not belong to this run", Complete: true}},
		},
		{
			name:  "global cap reached by pending jobs: wait",
			plank: "global: count pending jobs of any name, blocked if count >= max, requeue after 10s",
			in: func() runplan.Input {
				in := input(aRun(runplan.StateTriggered), nil, peer("p", "lint", runplan.StatePending, young))
				in.Limits.MaxPending = 1
				return in
			}(),
			want: runplan.Plan{Action: runplan.ActionWait, Reason: "MaxPending", RequeueAfter: 10 * time.Second,
				Status: runplan.Status{Description: "Waiting: 1 jobs are pending, at most 1 may be"}},
		},
		{
			name:  "global cap: triggered jobs do not count",
			plank: "triggered jobs do not count against the global cap",
			in: func() runplan.Input {
				in := input(aRun(runplan.StateTriggered), nil, peer("p", "lint", runplan.StateTriggered, old))
				in.Limits.MaxPending = 1
				return in
			}(),
			want: runplan.Plan{Action: runplan.ActionCreate, Reason: "Start", Status: pendingStart, Pod: runplan.PodEffects{Create: true}},
		},
		{
			name:  "per job: an older triggered run of the same job holds the slot",
			plank: "peers with the same spec.job that are pending, or triggered and created strictly before",
			in: input(aRun(runplan.StateTriggered, func(r *runplan.Run) { r.MaxConcurrency = 1 }), nil,
				peer("p", "unit", runplan.StateTriggered, old)),
			want: runplan.Plan{Action: runplan.ActionWait, Reason: "MaxConcurrency", RequeueAfter: 10 * time.Second,
				Status: runplan.Status{Description: `Waiting: 1 jobs named "unit" are pending or were triggered earlier, at most 1 may run at once`}},
		},
		{
			name:  "per job: a younger triggered run does not count",
			plank: "a triggered peer counts only when created before",
			in: input(aRun(runplan.StateTriggered, func(r *runplan.Run) { r.MaxConcurrency = 1 }), nil,
				peer("p", "unit", runplan.StateTriggered, young)),
			want: runplan.Plan{Action: runplan.ActionCreate, Reason: "Start", Status: pendingStart, Pod: runplan.PodEffects{Create: true}},
		},
		{
			name:  "per job: a run asked to abort does not wait for a slot",
			plank: "differs: plank has no abort request apart from the aborted state, which never counts",
			in: input(aRun(runplan.StateTriggered, func(r *runplan.Run) { r.MaxConcurrency = 1 }), nil,
				peer("p", "unit", runplan.StateTriggered, old, func(r *runplan.Run) { r.AbortRequested = true })),
			want: runplan.Plan{Action: runplan.ActionCreate, Reason: "Start", Status: pendingStart, Pod: runplan.PodEffects{Create: true}},
		},
		{
			name:  "queue of capacity 0: never runs",
			plank: "capacity 0 never runs",
			in: func() runplan.Input {
				in := input(aRun(runplan.StateTriggered, func(r *runplan.Run) { r.Queue = "closed" }), nil)
				in.Limits.Queues = map[string]int{"closed": 0}
				return in
			}(),
			want: runplan.Plan{Action: runplan.ActionWait, Reason: "Queue", RequeueAfter: 10 * time.Second,
				Status: runplan.Status{Description: `Waiting: queue "closed" has capacity 0: its jobs never start`}},
		},
		{
			name:  "queue of negative capacity: unlimited",
			plank: "capacity < 0 is unlimited",
			in: func() runplan.Input {
				in := input(aRun(runplan.StateTriggered, func(r *runplan.Run) { r.Queue = "open" }), nil,
					peer("p", "lint", runplan.StatePending, old, func(r *runplan.Run) { r.Queue = "open" }))
				in.Limits.Queues = map[string]int{"open": -1}
				return in
			}(),
			want: runplan.Plan{Action: runplan.ActionCreate, Reason: "Start", Status: pendingStart, Pod: runplan.PodEffects{Create: true}},
		},

		{
			name:  "held back again: the description is not rewritten",
			plank: "plank does not write a description while blocked",
			in: func() runplan.Input {
				in := input(aRun(runplan.StateTriggered, func(r *runplan.Run) {
					r.Description = "Waiting: 1 jobs are pending, at most 1 may be"
				}), nil, peer("p", "lint", runplan.StatePending, young))
				in.Limits.MaxPending = 1
				return in
			}(),
			want: runplan.Plan{Action: runplan.ActionWait, Reason: "MaxPending", RequeueAfter: 10 * time.Second},
		},

		// syncPending A: pod missing.
		{
			name:  "pending without a pod: create again at once, without the limits",
			plank: "rule A: recreate at once, no concurrency gate, job stays pending",
			in: func() runplan.Input {
				in := input(aRun(runplan.StatePending), nil, peer("p", "lint", runplan.StatePending, old))
				in.Limits.MaxPending = 1
				return in
			}(),
			want: runplan.Plan{Action: runplan.ActionCreate, Reason: "PodMissing", Pod: runplan.PodEffects{Create: true}},
		},

		// syncPending B: unexpected stops.
		{
			name:  "OOM-killed while running: error, pod left alone",
			plank: "oomkilled: error, Job pod was OOM killed by the cluster., the pod is left alone",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodRunning, startedAgo(time.Minute), terminated(137, "OOMKilled"))),
			want:  finished(runplan.StateError, "OOMKilled", "Job pod was OOM killed by the cluster.", runplan.PodEffects{UID: podUID}),
		},
		{
			name:  "evicted with errorOnEviction: error",
			plank: "evicted and errorOnEviction: error, Job pod was evicted by the cluster.",
			in: func() runplan.Input {
				in := input(aRun(runplan.StatePending), aPod(corev1.PodFailed, reason("Evicted")))
				in.Outcome.ErrorOnEviction = true
				return in
			}(),
			want: finished(runplan.StateError, "Evicted", "Job pod was evicted by the cluster.", runplan.PodEffects{UID: podUID}),
		},
		{
			name:  "evicted: revive, revival recorded before the delete, finalizers released",
			plank: "revive: count in memory only (differs: written back), strip the reporter finalizer, delete the pod",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodFailed, reason("Evicted"))),
			want: runplan.Plan{Action: runplan.ActionRevive, Reason: "Evicted",
				Status: runplan.Status{Revivals: &podoutcome.Revivals{Count: 1, Pod: podUID}, Description: "Replacing pod run-1 (Evicted), revival 1."},
				Pod:    runplan.PodEffects{Delete: true, UID: podUID, ReleaseFinalizers: true}},
		},
		{
			name:  "evicted and already terminating: revive without a delete, finalizers released",
			plank: "revive: strip the finalizer; if the pod is already terminating, stop there",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodFailed, reason("Evicted"), terminating)),
			want: runplan.Plan{Action: runplan.ActionRevive, Reason: "Evicted",
				Status: runplan.Status{Revivals: &podoutcome.Revivals{Count: 1, Pod: podUID}, Description: "Replacing pod run-1 (Evicted), revival 1."},
				Pod:    runplan.PodEffects{UID: podUID, Terminating: true, ReleaseFinalizers: true}},
		},
		{
			name:  "the same evicted pod seen again: no second revival",
			plank: "differs: plank would count every sync that sees it",
			in: input(aRun(runplan.StatePending, func(r *runplan.Run) { r.Revivals = podoutcome.Revivals{Count: 1, Pod: podUID} }),
				aPod(corev1.PodFailed, reason("Evicted"))),
			want: runplan.Plan{Action: runplan.ActionRevive, Reason: "Evicted",
				Pod: runplan.PodEffects{Delete: true, UID: podUID, ReleaseFinalizers: true}},
		},
		{
			name:  "node lost and terminating: revive",
			plank: "NodeLost with a deletionTimestamp gives unreachable",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodRunning, reason("NodeLost"), terminating, startedAgo(time.Minute))),
			want: runplan.Plan{Action: runplan.ActionRevive, Reason: "NodeLost",
				Status: runplan.Status{Revivals: &podoutcome.Revivals{Count: 1, Pod: podUID}, Description: "Replacing pod run-1 (NodeLost), revival 1."},
				Pod:    runplan.PodEffects{UID: podUID, Terminating: true, ReleaseFinalizers: true}},
		},
		{
			name:  "phase unknown at max revivals: error",
			plank: "podRevivalCount >= maxRevivals: error, Job pod reached max revivals (<count>) after being stopped unexpectedly (<cause>)",
			in: input(aRun(runplan.StatePending, func(r *runplan.Run) { r.Revivals = podoutcome.Revivals{Count: 3, Pod: "older"} }),
				aPod(corev1.PodUnknown)),
			want: finished(runplan.StateError, "MaxRevivals",
				"Job pod reached max revivals (3) after being stopped unexpectedly (unknown)", runplan.PodEffects{UID: podUID}),
		},

		// syncPending C: by phase.
		{
			name:  "succeeded: success, pod kept",
			plank: "Succeeded with every container terminated 0: success, Job succeeded.",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodSucceeded, terminated(0, "Completed"))),
			want:  finished(runplan.StateSuccess, "Succeeded", "Job succeeded.", runplan.PodEffects{UID: podUID}),
		},
		{
			name:  "succeeded but a container did not finish: error",
			plank: "otherwise error: Pod was in succeeded phase but some containers didn't finish",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodSucceeded, terminated(2, "Error"))),
			want: finished(runplan.StateError, "FalseSuccess",
				`Pod was in succeeded phase but some containers didn't finish: pod is in phase Succeeded but container "test" exited with code 2`,
				runplan.PodEffects{UID: podUID}),
		},
		{
			name:  "failed: failure",
			plank: "Failed: failure, Job failed.",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodFailed, terminated(1, "Error"))),
			want:  finished(runplan.StateFailure, "Failed", "Job failed.", runplan.PodEffects{UID: podUID}),
		},
		{
			name:  "unscheduled timeout: error, pod deleted",
			plank: "no startTime and creation >= unscheduled timeout ago: error Pod scheduling timeout., pod deleted",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodPending)),
			want:  finished(runplan.StateError, "UnscheduledTimeout", "Pod scheduling timeout.", runplan.PodEffects{Delete: true, UID: podUID}),
		},
		{
			name:  "unscheduled, not yet: wait until it would expire",
			plank: "otherwise requeue after the remaining time",
			in: input(aRun(runplan.StatePending), aPod(corev1.PodPending, func(p *corev1.Pod) {
				p.CreationTimestamp.Time = now.Add(-time.Minute)
			})),
			want: runplan.Plan{Action: runplan.ActionWait, Reason: "Pending", RequeueAfter: 4 * time.Minute, Pod: runplan.PodEffects{UID: podUID}},
		},
		{
			name:  "pending timeout: error, pod deleted",
			plank: "startTime >= pending timeout ago: error Pod pending timeout., pod deleted",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodPending, startedAgo(10*time.Minute))),
			want:  finished(runplan.StateError, "PendingTimeout", "Pod pending timeout.", runplan.PodEffects{Delete: true, UID: podUID}),
		},
		{
			name:  "running timeout: aborted, pod deleted",
			plank: "Running past the running timeout: aborted, Pod running timeout., pod deleted",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodRunning, startedAgo(48*time.Hour))),
			want:  finished(runplan.StateAborted, "RunningTimeout", "Pod running timeout.", runplan.PodEffects{Delete: true, UID: podUID}),
		},
		{
			name:  "running: wait until the running timeout",
			plank: "differs: plank does not requeue running pods",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodRunning, startedAgo(time.Hour))),
			want:  runplan.Plan{Action: runplan.ActionWait, Reason: "Running", RequeueAfter: 47 * time.Hour, Pod: runplan.PodEffects{UID: podUID}},
		},
		{
			name:  "pending, terminating and timed out: the timeout wins, nothing to delete",
			plank: "Pending timeouts are checked before the deletion",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodPending, startedAgo(time.Hour), terminating)),
			want:  finished(runplan.StateError, "PendingTimeout", "Pod pending timeout.", runplan.PodEffects{UID: podUID, Terminating: true}),
		},

		// syncPending D.
		{
			name:  "running pod deleted by someone: error",
			plank: "rule D: a deletionTimestamp on an incomplete job: error Pod got deleted unexpectedly",
			in:    input(aRun(runplan.StatePending), aPod(corev1.PodRunning, startedAgo(time.Minute), terminating)),
			want:  finished(runplan.StateError, "DeletedUnexpectedly", "Pod got deleted unexpectedly", runplan.PodEffects{UID: podUID, Terminating: true}),
		},

		// Robust inputs.
		{
			name:  "unknown phase: a clear wait",
			plank: "any other phase: nothing",
			in:    input(aRun(runplan.StatePending), aPod("Weird")),
			want:  runplan.Plan{Action: runplan.ActionWait, Reason: "OtherPhase", Pod: runplan.PodEffects{UID: podUID}},
		},
		{
			name:  "no status at all: pending, measured from creation",
			plank: "differs: plank ignores a pod without a phase",
			in: input(aRun(runplan.StatePending), aPod("", func(p *corev1.Pod) {
				p.Status = corev1.PodStatus{}
				p.CreationTimestamp.Time = now.Add(-2 * time.Minute)
			})),
			want: runplan.Plan{Action: runplan.ActionWait, Reason: "Pending", RequeueAfter: 3 * time.Minute, Pod: runplan.PodEffects{UID: podUID}},
		},
		{
			name:  "no creation time: measured from the run's pending time",
			plank: "differs: plank's time.Since of a zero time expires at once",
			in: input(aRun(runplan.StatePending, func(r *runplan.Run) { r.PendingTime = now.Add(-time.Minute) }),
				aPod(corev1.PodPending, noCreationTime)),
			want: runplan.Plan{Action: runplan.ActionWait, Reason: "Pending", RequeueAfter: 4 * time.Minute, Pod: runplan.PodEffects{UID: podUID}},
		},
		{
			name:  "no creation time and no pending time: wait and look again",
			plank: "differs: see above",
			in: input(aRun(runplan.StatePending, func(r *runplan.Run) { r.PendingTime = time.Time{} }),
				aPod(corev1.PodPending, noCreationTime)),
			want: runplan.Plan{Action: runplan.ActionWait, Reason: "NoCreationTime", RequeueAfter: 10 * time.Second,
				Pod: runplan.PodEffects{UID: podUID}},
		},
		{
			name:  "no creation time on a failed pod: failure all the same",
			plank: "Failed: failure",
			in: input(aRun(runplan.StatePending, func(r *runplan.Run) { r.PendingTime = time.Time{} }),
				aPod(corev1.PodFailed, terminated(1, ""), noCreationTime)),
			want: finished(runplan.StateFailure, "Failed", "Job failed.", runplan.PodEffects{UID: podUID}),
		},

		// syncAborted and final states without completion.
		{
			name:  "aborted by a user: delete the pod, then complete",
			plank: "syncAborted: delete the pod by name (NotFound ignored), then set the completion time",
			in:    input(aRun(runplan.StateAborted, func(r *runplan.Run) { r.HadPod = true; r.Description = "Job triggered." }), aPod(corev1.PodRunning)),
			want:  finished(runplan.StateAborted, "FinalState", "Job aborted.", runplan.PodEffects{Delete: true, UID: podUID}),
		},
		{
			name:  "aborted, pod not in the cache but the run had one: delete by name",
			plank: "plank deletes by name without checking",
			in:    input(aRun(runplan.StateAborted, func(r *runplan.Run) { r.HadPod = true }), nil),
			want:  finished(runplan.StateAborted, "FinalState", "Job aborted.", runplan.PodEffects{Delete: true}),
		},
		{
			name:  "aborted, pod already terminating: complete",
			plank: "plank deletes again; NotFound or not, it completes",
			in:    input(aRun(runplan.StateAborted), aPod(corev1.PodRunning, terminating)),
			want:  finished(runplan.StateAborted, "FinalState", "Job aborted.", runplan.PodEffects{UID: podUID, Terminating: true}),
		},
		{
			name:  "aborted, a pod of another owner: left alone",
			plank: "differs: plank deletes by name",
			in:    input(aRun(runplan.StateAborted), aPod(corev1.PodRunning, func(p *corev1.Pod) { p.OwnerReferences = nil })),
			want:  finished(runplan.StateAborted, "FinalState", "Job aborted.", runplan.PodEffects{}),
		},
		{
			name:  "abort requested on a pending run: aborted, pod deleted",
			plank: "plank's abort is the aborted state; a spec flag is the same request",
			in:    input(aRun(runplan.StatePending, func(r *runplan.Run) { r.AbortRequested = true }), aPod(corev1.PodRunning)),
			want:  finished(runplan.StateAborted, "AbortRequested", "Job aborted.", runplan.PodEffects{Delete: true, UID: podUID}),
		},
		{
			name:  "error recorded before the pod was deleted (a crash): delete, then complete",
			plank: "differs: plank deletes first; here the state is written first",
			in:    input(aRun(runplan.StateError, func(r *runplan.Run) { r.Description = "Pod pending timeout." }), aPod(corev1.PodPending)),
			want:  finished(runplan.StateError, "FinalState", "Pod pending timeout.", runplan.PodEffects{Delete: true, UID: podUID}),
		},

		// Dedupe.
		{
			name:  "an older run with the same key is superseded; the newest goes on",
			plank: "TerminateOlderJobs: the latest startTime survives, others get aborted (not completed)",
			in: input(aRun(runplan.StateTriggered, func(r *runplan.Run) { r.DedupeKey = "pr-1" }), nil,
				peer("older", "unit", runplan.StatePending, old, func(r *runplan.Run) { r.DedupeKey = "pr-1" }),
				peer("other-job", "lint", runplan.StatePending, old, func(r *runplan.Run) { r.DedupeKey = "pr-1" }),
				peer("no-key", "unit", runplan.StatePending, old)),
			want: runplan.Plan{Action: runplan.ActionCreate, Reason: "Start", Status: pendingStart, Pod: runplan.PodEffects{Create: true},
				Supersede: []runplan.Supersession{{UID: "older", Name: "older", Description: "Superseded by a newer run run-1."}}},
		},
		{
			name:  "superseded itself: aborted, pod deleted, completed after",
			plank: "differs: plank aborts without deleting; its syncAborted deletes and completes on the next sync",
			in: input(aRun(runplan.StatePending, func(r *runplan.Run) { r.DedupeKey = "pr-1" }), aPod(corev1.PodRunning, startedAgo(time.Minute)),
				peer("newer", "unit", runplan.StateTriggered, young, func(r *runplan.Run) { r.DedupeKey = "pr-1" })),
			want: finished(runplan.StateAborted, "Superseded", "Superseded by a newer run newer.", runplan.PodEffects{Delete: true, UID: podUID}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runplan.Compute(tt.in)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compute() (-want +got), plank: %s\n%s", tt.plank, diff)
			}
		})
	}
}

// TestComputeAbortedDescription: a completed aborted run keeps a description
// of its own, and replaces one this package writes for unfinished runs.
func TestComputeAbortedDescription(t *testing.T) {
	tests := []struct {
		name  string
		plank string
		desc  string
		want  string
	}{
		{name: "none", plank: "plank keeps the job's description", desc: "", want: "Job aborted."},
		{name: "triggered", plank: "idem", desc: "Job triggered.", want: "Job aborted."},
		{name: "waiting", plank: "plank writes none while blocked", desc: "Waiting: queue full", want: "Job aborted."},
		{name: "replacing a pod", plank: "plank writes none on a revive", desc: "Replacing pod run-1 (Evicted), revival 1.", want: "Job aborted."},
		{name: "a user's", plank: "kept", desc: "Cancelled by alice.", want: "Cancelled by alice."},
		{name: "superseded", plank: "TerminateOlderJobs' description, kept by syncAborted", desc: "Superseded by a newer run run-2.", want: "Superseded by a newer run run-2."},
		{name: "running timeout", plank: "kept", desc: "Pod running timeout.", want: "Pod running timeout."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(aRun(runplan.StateAborted, func(r *runplan.Run) { r.Description = tt.desc }), aPod(corev1.PodRunning))
			got, err := runplan.Compute(in)
			require.NoError(t, err)
			want := finished(runplan.StateAborted, "FinalState", tt.want, runplan.PodEffects{Delete: true, UID: podUID})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Compute() (-want +got), plank: %s\n%s", tt.plank, diff)
			}
		})
	}
}

func finished(state runplan.State, reason, desc string, pod runplan.PodEffects) runplan.Plan {
	return runplan.Plan{Action: runplan.ActionFinish, Reason: reason,
		Status: runplan.Status{State: state, Description: desc, Complete: true}, Pod: pod}
}

func TestComputeInvalidInput(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(*runplan.Input)
		wantField string
	}{
		{name: "no run UID", edit: func(in *runplan.Input) { in.Run.UID = "" }, wantField: "Run.UID"},
		{name: "no time", edit: func(in *runplan.Input) { in.Now = time.Time{} }, wantField: "Now"},
		{name: "negative max concurrency", edit: func(in *runplan.Input) { in.Run.MaxConcurrency = -1 }, wantField: "Run.MaxConcurrency"},
		{name: "max concurrency without a job name", edit: func(in *runplan.Input) { in.Run.MaxConcurrency, in.Run.JobName = 1, "" }, wantField: "Run.JobName"},
		{name: "negative revival count", edit: func(in *runplan.Input) { in.Run.Revivals.Count = -1 }, wantField: "Run.Revivals.Count"},
		{name: "negative max pending", edit: func(in *runplan.Input) { in.Limits.MaxPending = -2 }, wantField: "Limits.MaxPending"},
		{name: "negative retry", edit: func(in *runplan.Input) { in.Limits.RetryAfter = -time.Second }, wantField: "Limits.RetryAfter"},
		{name: "empty queue name", edit: func(in *runplan.Input) { in.Limits.Queues = map[string]int{"": 1} }, wantField: "Limits.Queues"},
		{name: "negative max revivals", edit: func(in *runplan.Input) { in.Outcome.MaxRevivals = -1 }, wantField: "Outcome.maxRevivals"},
		{name: "negative pending timeout", edit: func(in *runplan.Input) { in.Outcome.Timeouts.Pending = -time.Minute }, wantField: "Outcome.timeouts.pending"},
		{name: "unknown create error policy", edit: func(in *runplan.Input) { in.CreateErrors = "Lenient" }, wantField: "CreateErrors"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(aRun(runplan.StatePending), aPod(corev1.PodRunning))
			tt.edit(&in)
			got, err := runplan.Compute(in)
			require.ErrorIs(t, err, plaindl.ErrInvalidInput)
			var ie *plaindl.FieldError
			require.ErrorAs(t, err, &ie)
			if ie.Field != tt.wantField {
				t.Errorf("Compute() error field = %q, want %q (%v)", ie.Field, tt.wantField, err)
			}
			if diff := cmp.Diff(runplan.Plan{}, got); diff != "" {
				t.Errorf("Compute() returned a plan with its error (-want +got):\n%s", diff)
			}
		})
	}
}

// A queue missing from Limits.Queues is invalid configuration, as in plank: the sync
// fails, naming the field and the queue, and is retried by the caller.
func TestComputeUnknownQueue(t *testing.T) {
	in := input(aRun(runplan.StateTriggered, func(r *runplan.Run) { r.Queue = "nope" }), nil)
	in.Limits.Queues = map[string]int{"open": 1}
	got, err := runplan.Compute(in)
	require.ErrorIs(t, err, plaindl.ErrInvalidInput)
	var ie *plaindl.FieldError
	require.ErrorAs(t, err, &ie)
	assert.EqualError(t, err, `runplan: Run.Queue="nope": not a queue of Limits.Queues`)
	if ie.Field != "Run.Queue" || ie.Value != `"nope"` {
		t.Errorf("Compute() error = %+v, want field Run.Queue, value %q", ie, `"nope"`)
	}
	if diff := cmp.Diff(runplan.Plan{}, got); diff != "" {
		t.Errorf("Compute() returned a plan with its error (-want +got):\n%s", diff)
	}
}

// TestComputeDoesNotModifyInput runs every kind of plan over inputs it
// compares before and after.
func TestComputeDoesNotModifyInput(t *testing.T) {
	pods := []*corev1.Pod{nil, aPod(corev1.PodPending, func(p *corev1.Pod) { p.CreationTimestamp.Time = time.Time{} }),
		aPod(corev1.PodFailed, reason("Evicted")), aPod(corev1.PodRunning, startedAgo(49*time.Hour))}
	for _, state := range []runplan.State{runplan.StateNew, runplan.StateTriggered, runplan.StatePending, runplan.StateAborted} {
		for _, pod := range pods {
			in := input(aRun(state, func(r *runplan.Run) { r.DedupeKey, r.MaxConcurrency = "k", 1 }), pod,
				peer("a", "unit", runplan.StatePending, now.Add(-time.Hour), func(r *runplan.Run) { r.DedupeKey = "k" }),
				peer("b", "unit", runplan.StateTriggered, now, func(r *runplan.Run) { r.DedupeKey = "k" }))
			in.Limits = plainconc.Limits{MaxPending: 1, Queues: map[string]int{"q": 1}}
			before := deepCopy(in)
			if _, err := runplan.Compute(in); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("Compute modified its input (-before +after):\n%s", diff)
			}
		}
	}
}

func deepCopy(in runplan.Input) runplan.Input {
	out := in
	out.Pod = in.Pod.DeepCopy()
	out.Peers = append([]runplan.Run(nil), in.Peers...)
	out.Limits.Queues = map[string]int{}
	for k, v := range in.Limits.Queues {
		out.Limits.Queues[k] = v
	}
	return out
}

func TestHoldsAndWaits(t *testing.T) {
	tests := []struct {
		name      string
		run       runplan.Run
		wantHolds bool
		wantWaits bool
	}{
		{name: "new", run: aRun(runplan.StateNew), wantHolds: true, wantWaits: true},
		{name: "triggered", run: aRun(runplan.StateTriggered), wantHolds: true, wantWaits: true},
		{name: "triggered, abort requested", run: aRun(runplan.StateTriggered, func(r *runplan.Run) { r.AbortRequested = true })},
		{name: "pending", run: aRun(runplan.StatePending), wantHolds: true},
		{name: "pending, abort requested: holds its slot until its pod goes", run: aRun(runplan.StatePending, func(r *runplan.Run) { r.AbortRequested = true }), wantHolds: true},
		{name: "pending but completed", run: aRun(runplan.StatePending, func(r *runplan.Run) { r.Completed = true })},
		{name: "aborted, pod not deleted yet", run: aRun(runplan.StateAborted)},
		{name: "success", run: aRun(runplan.StateSuccess)},
		{name: "unknown state", run: aRun("scheduling")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runplan.Holds(tt.run); got != tt.wantHolds {
				t.Errorf("Holds(%s) = %v, want %v", tt.run.State, got, tt.wantHolds)
			}
			if got := runplan.Waits(tt.run); got != tt.wantWaits {
				t.Errorf("Waits(%s) = %v, want %v", tt.run.State, got, tt.wantWaits)
			}
		})
	}
}

func TestSharesLimit(t *testing.T) {
	unit := aRun(runplan.StateTriggered)
	capped := aRun(runplan.StateTriggered, func(r *runplan.Run) { r.MaxConcurrency = 1 })
	queued := aRun(runplan.StateTriggered, func(r *runplan.Run) { r.Queue = "q" })
	tests := []struct {
		name           string
		waiting, other runplan.Run
		limits         plainconc.Limits
		want           bool
	}{
		{name: "no limit", waiting: unit, other: peer("p", "unit", runplan.StatePending, now)},
		{name: "global cap", waiting: unit, other: peer("p", "lint", runplan.StatePending, now), limits: plainconc.Limits{MaxPending: 1}, want: true},
		{name: "same job, capped", waiting: capped, other: peer("p", "unit", runplan.StatePending, now), want: true},
		{name: "other job, capped", waiting: capped, other: peer("p", "lint", runplan.StatePending, now)},
		{name: "same queue", waiting: queued, other: peer("p", "lint", runplan.StatePending, now, func(r *runplan.Run) { r.Queue = "q" }), want: true},
		{name: "other queue", waiting: queued, other: peer("p", "unit", runplan.StatePending, now, func(r *runplan.Run) { r.Queue = "r" })},
		{name: "no queue on either side", waiting: unit, other: peer("p", "lint", runplan.StatePending, now)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runplan.SharesLimit(tt.waiting, tt.other, tt.limits); got != tt.want {
				t.Errorf("SharesLimit() = %v, want %v", got, tt.want)
			}
		})
	}
}
