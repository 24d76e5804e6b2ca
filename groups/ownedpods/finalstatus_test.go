package ownedpods_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
)

// The group's success policy targets the launcher only: the launcher succeeds
// while the workers run. The write that completes the group stops the workers;
// a later write must show them gone, or the finished group's status says
// workers are active forever (issue 33): a finished group is skipped only once
// every role's status shows what is left of its pods.
func TestComputeFinishedGroupStatusShowsStoppedRoles(t *testing.T) {
	for _, tc := range []struct {
		name string
		// linger keeps the stopped workers terminating until the kubelet stops
		// them, after the group has completed.
		linger bool
	}{
		{name: "workers go at once"},
		{name: "workers terminate after the stop", linger: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := started(t, trainingJob(2, 1))
			require.Equal(t, int32(2), c.roleStatus("worker").Job.Active)
			c.linger = tc.linger
			c.finish(c.role("launcher")[0], 0)
			c.syncUntil(10)
			require.Equal(t, "Completed", c.w.Status.TerminalState)
			if tc.linger {
				ws := c.role("worker")
				require.Len(t, ws, 2, "the stopped workers are still terminating")
				st := c.roleStatus("worker").Job
				assert.Equal(t, int32(2), ptr.Deref(st.Terminating, 0), "the status counts them as terminating")
				assert.Zero(t, st.Active, "and not as active")
				for _, p := range ws {
					c.terminate(p)
				}
				c.syncUntil(10)
			}
			require.Empty(t, c.role("worker"), "every worker is gone")
			for _, r := range c.w.Status.Roles {
				assert.Zero(t, r.Job.Active, "role %q: status.active", r.Name)
				assert.Zero(t, ptr.Deref(r.Job.Ready, 0), "role %q: status.ready", r.Name)
				assert.Zero(t, ptr.Deref(r.Job.Terminating, 0), "role %q: status.terminating", r.Name)
			}
			assert.Zero(t, c.roleStatus("worker").Failed, "stopped workers are not failures")
			assert.Equal(t, int32(1), c.roleStatus("launcher").Succeeded)
			assert.NotEmpty(t, c.compute().Skip, "and then nothing is left to do")
		})
	}
}
