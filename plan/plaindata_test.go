package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/plan"
)

// plainDataInput is a Job of three completions with one pod succeeded (carrying the
// finalizer, recorded in an earlier sync), one newly failed and one running, so that
// its plan records, removes finalizers and settles.
func plainDataInput() plan.Input {
	job := exampleJob(batchv1.NonIndexedCompletion, 3, 2)
	job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"a"}}
	job.Status.StartTime = nil
	return plan.Input{
		Workload: plan.JobWorkload(job),
		Pods: []*corev1.Pod{
			examplePod(job, "a", corev1.PodSucceeded, ""),
			examplePod(job, "b", corev1.PodFailed, ""),
			examplePod(job, "c", corev1.PodRunning, ""),
		},
		ControllerName:        batchv1.JobControllerName,
		ExpectationsSatisfied: true,
		Now:                   exampleNow,
	}
}

// TestPlanIsPlainData compares Plans from outside the package: cmp.Diff needs no
// option (a Plan has no unexported field), and Settle reads only Plan.Settlement.
func TestPlanIsPlainData(t *testing.T) {
	in := plainDataInput()
	p1, err := plan.Compute(in)
	require.NoError(t, err)
	p2, err := plan.Compute(plainDataInput())
	require.NoError(t, err)
	require.NotEmpty(t, p1.RemoveFinalizers, "the case must settle something")

	if diff := cmp.Diff(p1, p2); diff != "" {
		t.Errorf("two plans of one input differ (-first +second):\n%s", diff)
	}
	later := plainDataInput()
	later.Now = exampleNow.Add(1)
	p3, err := plan.Compute(later)
	require.NoError(t, err)
	assert.NotEmpty(t, cmp.Diff(p1.Settlement, p3.Settlement), "Settlement carries the time of the sync")

	tests := []struct {
		name    string
		removed sets.Set[types.UID]
	}{
		{name: "every removal succeeds", removed: sets.New[types.UID]("a", "b")},
		{name: "one removal fails", removed: sets.New[types.UID]("b")},
		{name: "every removal fails", removed: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := p1.Settle(tc.removed)
			only := &plan.Plan{Settlement: p1.Settlement}
			if diff := cmp.Diff(want, only.Settle(tc.removed)); diff != "" {
				t.Errorf("Settle reads more than Settlement (-whole plan +Settlement only):\n%s", diff)
			}
		})
	}
}

// TestSettlementHeld checks which ledger UIDs stay uncounted unless their removal
// succeeds: those of the base status (a recorded earlier, b now) whose pods carry
// the finalizer and whose removal is not pending.
func TestSettlementHeld(t *testing.T) {
	tests := []struct {
		name     string
		pending  sets.Set[types.UID]
		wantHeld []types.UID
	}{
		{name: "no removal pending", wantHeld: []types.UID{"a", "b"}},
		{name: "removal of a pending", pending: sets.New[types.UID]("a"), wantHeld: []types.UID{"b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := plainDataInput()
			in.PendingFinalizerRemovals = tc.pending
			p, err := plan.Compute(in)
			require.NoError(t, err)
			if diff := cmp.Diff(tc.wantHeld, p.Settlement.Held); diff != "" {
				t.Errorf("Settlement.Held (-want +got):\n%s", diff)
			}
		})
	}
}
