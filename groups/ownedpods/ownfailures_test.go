package ownedpods_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
)

// RoleStatus.FailedOnTheirOwn counts the pods that failed by themselves, not
// those a failing role or the group stopped (which Failed counts, as a Job
// does, or not at all); it keeps its total over attempts.
func TestComputeFailedOnTheirOwn(t *testing.T) {
	tests := []struct {
		name        string
		maxRestarts int32
		// perIndex gives each worker index a retry: a failure is replaced, the
		// role does not fail.
		perIndex bool
		// run acts on the started owner; the cluster then syncs to a quiet state.
		run                 func(t *testing.T, c *cluster)
		wantFailed, wantOwn int32
		wantRestarts        int32
		wantLauncherOwn     int32
		wantTerminalState   string
	}{
		{
			name: "a worker fails and is replaced", maxRestarts: 1, perIndex: true,
			run:        func(t *testing.T, c *cluster) { c.finish(c.role("worker")[0], 1) },
			wantFailed: 1, wantOwn: 1,
		},
		{
			name: "a worker is evicted by its kubelet and replaced", maxRestarts: 1, perIndex: true,
			run: func(t *testing.T, c *cluster) {
				p := c.role("worker")[1]
				p.Status.Phase, p.Status.Reason, p.Status.Conditions = corev1.PodFailed, "Evicted", nil
			},
			wantFailed: 1, wantOwn: 1,
		},
		{
			name: "a worker fails its role, which stops the other, and the group restarts", maxRestarts: 1,
			run: func(t *testing.T, c *cluster) {
				c.finish(c.role("worker")[0], 1)
				c.syncUntil(10)
				c.runAll("worker")
				c.syncUntil(10)
			},
			wantFailed: 2, wantOwn: 1, wantRestarts: 1,
		},
		{
			name: "a worker fails in each of two attempts: the totals keep", maxRestarts: 2,
			run: func(t *testing.T, c *cluster) {
				for attempt := range 2 {
					c.finish(c.role("worker")[0], 1)
					c.syncUntil(10)
					c.runAll("worker")
					c.syncUntil(10)
					require.Equal(t, int32(attempt+1), c.w.Status.Restarts)
				}
			},
			wantFailed: 4, wantOwn: 2, wantRestarts: 2,
		},
		{
			name: "the launcher succeeds: the running workers are stopped, not failures", maxRestarts: 1,
			run:               func(t *testing.T, c *cluster) { c.finish(c.role("launcher")[0], 0) },
			wantTerminalState: "Completed",
		},
		{
			name: "the launcher fails for good: the group fails, the workers are stopped", maxRestarts: 0,
			run:             func(t *testing.T, c *cluster) { c.finish(c.role("launcher")[0], 1) },
			wantLauncherOwn: 1, wantTerminalState: "Failed",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := trainingJob(2, tc.maxRestarts)
			if tc.perIndex {
				w.Roles[0].Spec.BackoffLimitPerIndex = ptr.To[int32](1)
				w.Roles[0].Spec.MaxFailedIndexes = nil
			}
			c := started(t, w)
			var prev []ownedpods.RoleStatus
			tc.run(t, c)
			for range 40 {
				p := c.sync()
				for _, rs := range c.w.Status.Roles {
					for _, old := range prev {
						if old.Name == rs.Name {
							assert.GreaterOrEqual(t, rs.FailedOnTheirOwn, old.FailedOnTheirOwn, "role %s: FailedOnTheirOwn went back", rs.Name)
						}
					}
				}
				prev = c.w.Status.Roles
				if p.Skip != "" || !p.StatusChanged && len(p.RemoveFinalizers)+len(p.Delete)+len(p.Create) == 0 {
					if p.RequeueAfter == 0 {
						break
					}
					c.now = c.now.Add(p.RequeueAfter) // a replacement's backoff
				}
			}
			worker, launcher := c.roleStatus("worker"), c.roleStatus("launcher")
			assert.Equal(t, tc.wantTerminalState, c.w.Status.TerminalState)
			assert.Equal(t, tc.wantRestarts, c.w.Status.Restarts, "restarts")
			assert.Equal(t, tc.wantFailed, worker.Failed, "worker Failed")
			assert.Equal(t, tc.wantOwn, worker.FailedOnTheirOwn, "worker FailedOnTheirOwn")
			assert.Equal(t, tc.wantLauncherOwn, launcher.FailedOnTheirOwn, "launcher FailedOnTheirOwn")
			assert.LessOrEqual(t, launcher.FailedOnTheirOwn, launcher.Failed, "nothing is uncounted: at most Failed")
		})
	}
}
