package ownedpods_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plan"
)

// worstRoleJobStatus is a role's Job status at its longest for c completions:
// completed indexes in runs of two, a full ledger, four long conditions, every
// counter at its largest.
func worstRoleJobStatus(c int) batchv1.JobStatus {
	const maxInt = 1<<31 - 1
	var done plainindexes.Intervals
	for i := 0; i < c; i += 3 {
		done = append(done, plainindexes.Interval{First: i, Last: min(i+1, c-1)})
	}
	now := metav1.Now()
	st := batchv1.JobStatus{
		Active: maxInt, Succeeded: maxInt, Failed: maxInt, Ready: ptr.To[int32](maxInt), Terminating: ptr.To[int32](maxInt),
		StartTime: &now, CompletionTime: &now, CompletedIndexes: done.String(),
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
	}
	for i := range plan.DefaultMaxUncounted {
		st.UncountedTerminatedPods.Failed = append(st.UncountedTerminatedPods.Failed, types.UID(fmt.Sprintf("%08d-0000-0000-0000-000000000000", i)))
	}
	for _, t := range []batchv1.JobConditionType{batchv1.JobSuspended, batchv1.JobFailureTarget, batchv1.JobFailed, batchv1.JobSuccessCriteriaMet} {
		st.Conditions = append(st.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
			Message: strings.Repeat("K", 63) + " has reached the specified backoff limit", LastProbeTime: now, LastTransitionTime: now})
	}
	return st
}

func TestWorkloadWorstStatusSize(t *testing.T) {
	indexed := func(name string, c int32) ownedpods.Role {
		return ownedpods.Role{Name: name, Spec: plan.Spec{Completions: ptr.To(c), Parallelism: ptr.To[int32](1), CompletionMode: ptr.To(batchv1.IndexedCompletion)}}
	}
	for _, tc := range []struct {
		name string
		w    ownedpods.Workload
		fits bool
	}{
		{name: "a launcher and 1,000 workers", w: ownedpods.Workload{Roles: []ownedpods.Role{indexed("launcher", 1), indexed("workers", 1000)}}, fits: true},
		{name: "two roles of 100,000 completions", w: ownedpods.Workload{Roles: []ownedpods.Role{indexed("a", 100_000), indexed("b", 100_000)}}, fits: true},
		{name: "two roles of 200,000 completions", w: ownedpods.Workload{Roles: []ownedpods.Role{indexed("a", 200_000), indexed("b", 200_000)}}, fits: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.w.WorstStatusSize(plan.Options{})
			st := ownedpods.Status{Restarts: 1<<31 - 1, RestartsCountTowardsMax: 1<<31 - 1, TerminalState: "Completed"}
			for _, r := range tc.w.Roles {
				st.Roles = append(st.Roles, ownedpods.RoleStatus{Name: r.Name, Attempt: 1<<31 - 1, Succeeded: 1<<31 - 1, Failed: 1<<31 - 1,
					FailedOnTheirOwn: 1<<31 - 1, Job: worstRoleJobStatus(int(*r.Spec.Completions))})
			}
			b, err := json.Marshal(st)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(b), got, "the bound holds the longest status")
			assert.Equal(t, tc.fits, got < plan.MaxObjectBytes, "WorstStatusSize = %d", got)
		})
	}
}
