package childjobs_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// worstGroupStatus is the longest status of a group of the given roles: every
// condition with a long message, every counter at its largest, both per-index
// restart counters full.
func worstGroupStatus(roles []plaingroup.Role) childjobs.Status {
	const maxInt = 1<<31 - 1
	st := childjobs.Status{
		Restarts: maxInt, RestartsCountTowardsMax: maxInt, TerminalState: plaingroup.ConditionCompleted,
		PreviousInPlaceRestartAttempt: ptr.To[int32](maxInt), CurrentInPlaceRestartAttempt: ptr.To[int32](maxInt),
	}
	for _, t := range []string{plaingroup.ConditionCompleted, plaingroup.ConditionFailed, plaingroup.ConditionSuspended,
		plaingroup.ConditionRestarting, plaingroup.ConditionStartupPolicyInProgress, plaingroup.ConditionStartupPolicyCompleted} {
		st.Conditions = append(st.Conditions, metav1.Condition{
			Type: t, Status: metav1.ConditionTrue, Reason: "FailurePolicyRuleMatched", ObservedGeneration: maxInt,
			Message: "jobset failed due to failure policy rule " + strings.Repeat("r", 63) + ": first failed job: " + strings.Repeat("j", 63) + " (" + strings.Repeat("m", 120) + ")",
		})
	}
	for _, r := range roles {
		rs := plaingroup.RoleStatus{Name: r.Name, Ready: maxInt, Succeeded: maxInt, Failed: maxInt, Active: maxInt, Suspended: maxInt}
		for range min(r.Replicas, 1024) {
			rs.JobRestarts = append(rs.JobRestarts, maxInt)
			rs.JobRestartsCountTowardsMax = append(rs.JobRestartsCountTowardsMax, maxInt)
		}
		st.ReplicatedJobs = append(st.ReplicatedJobs, rs)
	}
	return st
}

func TestWorstStatusSize(t *testing.T) {
	role := func(name string, replicas int32) plaingroup.Role {
		return plaingroup.Role{Name: name, Replicas: replicas, Parallelism: 1}
	}
	for _, tc := range []struct {
		name  string
		roles []plaingroup.Role
		fits  bool
	}{
		{name: "a leader and 64 workers", roles: []plaingroup.Role{role("leader", 1), role("workers", 64)}, fits: true},
		{name: "1,000 child Jobs", roles: []plaingroup.Role{role("driver", 1), role(strings.Repeat("w", 63), 1000)}, fits: true},
		{name: "replicas past the counters' 1,024 items", roles: []plaingroup.Role{role("workers", 100_000)}, fits: true},
		{name: "200 roles of 1,024 replicas", roles: func() []plaingroup.Role {
			var rs []plaingroup.Role
			for i := range 200 {
				rs = append(rs, role(fmt.Sprintf("role-%d", i), 1024))
			}
			return rs
		}(), fits: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &childjobs.Input{Spec: plaingroup.Spec{Roles: tc.roles}}
			got := in.WorstStatusSize()
			b, err := json.Marshal(worstGroupStatus(tc.roles))
			require.NoError(t, err)
			assert.LessOrEqual(t, len(b), got, "the bound holds the longest status")
			assert.Greater(t, float64(len(b)), 0.5*float64(got), "the bound is not far above it (%d of %d bytes)", len(b), got)
			assert.Equal(t, tc.fits, got < plan.MaxObjectBytes, "WorstStatusSize = %d", got)
		})
	}
}
