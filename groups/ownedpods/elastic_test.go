package ownedpods_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// indexesOf returns the completion indexes of the live pods of a role not
// being deleted.
func indexesOf(c *cluster, role string) []string {
	var out []string
	for _, p := range c.role(role) {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Annotations[kind.IndexKey()])
		}
	}
	return sortStrings(out)
}

// An elastic role of the owned-pods shape: its pod count (parallelism =
// completions of an Indexed role) changed on a running group. Scaling down
// removes the pods of the highest indexes, counted neither as failures of the
// role nor of the group; scaling up creates the new indexes.
func TestRolePodCountChanged(t *testing.T) {
	c := newCluster(t, trainingJob(4, 0))
	c.syncUntil(5)
	c.runAll("worker")
	c.syncUntil(5)
	c.runAll("launcher")
	c.syncUntil(5)
	require.Equal(t, []string{"0", "1", "2", "3"}, indexesOf(c, "worker"))

	c.w.Roles[0].Spec.Parallelism, c.w.Roles[0].Spec.Completions = ptr.To[int32](2), ptr.To[int32](2)
	c.syncUntil(8)
	assert.Equal(t, []string{"0", "1"}, indexesOf(c, "worker"))
	for _, p := range c.role("worker") {
		assert.Equal(t, corev1.PodRunning, p.Status.Phase, "pod %s", p.Name)
	}
	st := c.roleStatus("worker")
	assert.Equal(t, int32(0), st.Failed, "a pod scaled away is no failure")
	assert.Equal(t, int32(2), st.Job.Active)
	assert.Equal(t, int32(0), c.w.Status.Restarts)
	assert.Nil(t, condition(c.w.Status.Conditions, plaingroup.ConditionFailed))

	c.w.Roles[0].Spec.Parallelism, c.w.Roles[0].Spec.Completions = ptr.To[int32](6), ptr.To[int32](6)
	c.syncUntil(5)
	assert.Equal(t, []string{"0", "1", "2", "3", "4", "5"}, indexesOf(c, "worker"))
	c.runAll("worker")
	c.syncUntil(5)
	assert.Equal(t, int32(6), ptr.Deref(c.roleStatus("worker").Job.Ready, 0))
}
