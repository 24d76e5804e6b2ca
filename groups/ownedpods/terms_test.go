package ownedpods_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// An owner of roles words its conditions and events in its own terms (its
// kind, its roles), not JobSet's (a jobset, jobs); the reasons are JobSet's.
func TestComputeMessagesInTheOwnersTerms(t *testing.T) {
	tests := []struct {
		name        string
		maxRestarts int32
		run         func(c *cluster)
		condition   string
		wantReason  string
		wantMessage string
	}{
		{
			name: "completed", maxRestarts: 1,
			run:        func(c *cluster) { c.finish(c.role("launcher")[0], 0) },
			condition:  plaingroup.ConditionCompleted,
			wantReason: "AllJobsCompleted", wantMessage: "TrainingJob completed successfully",
		},
		{
			name: "failed", maxRestarts: 0,
			run:        func(c *cluster) { c.finish(c.role("worker")[1], 1) },
			condition:  plaingroup.ConditionFailed,
			wantReason: "ReachedMaxRestarts", wantMessage: "TrainingJob failed due to reaching max number of restarts (first failed role: worker)",
		},
		{
			name: "restarting", maxRestarts: 1,
			run:        func(c *cluster) { c.finish(c.role("worker")[0], 1) },
			condition:  plaingroup.ConditionRestarting,
			wantReason: "DefaultFailurePolicy", wantMessage: "applying RestartJobSet failure policy action (first failed role: worker)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := started(t, trainingJob(2, tc.maxRestarts))
			tc.run(c)
			var events []string
			for range 3 {
				for _, e := range c.sync().Events {
					events = append(events, e.Message)
				}
			}
			got := condition(c.w.Status.Conditions, tc.condition)
			require.NotNil(t, got, "condition %s in %+v", tc.condition, c.w.Status.Conditions)
			assert.Equal(t, tc.wantReason, got.Reason)
			assert.Equal(t, tc.wantMessage, got.Message)
			assert.Contains(t, events, tc.wantMessage, "the event of the decision")
		})
	}
}

func TestTerms(t *testing.T) {
	assert.Equal(t, plaingroup.Terms{Group: "TrainingJob", Child: "role", Children: "roles", ByRole: true}, ownedpods.Terms(kind))
}
