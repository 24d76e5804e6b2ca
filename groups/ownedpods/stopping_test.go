package ownedpods_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"
)

// A failed pod of an Indexed role with backoffLimitPerIndex keeps its finalizer
// until its replacement exists (plan's rule for a running Job). A role the group
// stops for good never creates that replacement: it must record the pod and let
// its finalizer go all the same, or the finalizer leaks and the owner never ends
// (found by the simulator's two-role owner, seeds 10, 26, 31, 110 and 232 at 0.1).
func TestComputeStoppingRoleReleasesAFailedPodAwaitingItsReplacement(t *testing.T) {
	for _, tc := range []struct {
		name        string
		maxRestarts int32
		stop        func(c *cluster)
	}{
		{"group completed", 1, func(c *cluster) { c.finish(c.role("launcher")[0], 0) }},
		{"group failed", 0, func(c *cluster) { c.finish(c.role("launcher")[0], 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := trainingJob(3, tc.maxRestarts)
			for i := range w.Roles {
				if w.Roles[i].Name == "worker" {
					w.Roles[i].Spec.BackoffLimitPerIndex = ptr.To[int32](1)
					w.Roles[i].Spec.MaxFailedIndexes = nil
				}
			}
			c := started(t, w)
			failed := c.role("worker")[0]
			c.finish(failed, 1) // index 0 waits for its replacement
			tc.stop(c)
			c.syncUntil(30)
			for _, p := range c.pods {
				assert.False(t, kind.HasFinalizer(p), "pod %s (%s) keeps the finalizer", p.Name, p.Status.Phase)
			}
			assert.NotEmpty(t, c.w.Status.TerminalState, "the group finished")
			assert.NotEmpty(t, c.compute().Skip, "and nothing is left to do")
		})
	}
}
