package ownedpods_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/groups/ownedpods"
)

func jobCondition(j *batchv1.JobStatus, t batchv1.JobConditionType) bool {
	for _, c := range j.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func uncountedOf(j *batchv1.JobStatus) int {
	if j.UncountedTerminatedPods == nil {
		return 0
	}
	return len(j.UncountedTerminatedPods.Succeeded) + len(j.UncountedTerminatedPods.Failed)
}

// The status Compute writes counts no pod whose finalizer the same sync
// removes: a crash between the write and the removals loses nothing and
// counts nothing twice; the role finishes in the write after its last removal.
func TestComputeOneStatusWrite(t *testing.T) {
	c := started(t, trainingJob(1, 1))
	launcher := c.role("launcher")[0]
	c.finish(launcher, 0)

	p1 := c.compute()
	require.Len(t, p1.RemoveFinalizers, 1)
	require.Equal(t, launcher.UID, p1.RemoveFinalizers[0].Pod.UID)
	l1 := p1.Status.Roles[1]
	assert.Zero(t, l1.Job.Succeeded, "counted before its finalizer went")
	assert.Zero(t, l1.Succeeded)
	assert.Equal(t, 1, uncountedOf(&l1.Job), "recorded in the ledger first")
	assert.False(t, jobCondition(&l1.Job, batchv1.JobComplete))

	// Crash after the write, before the removal: the next sync records and
	// removes again, counting nothing yet.
	c.applyStatus(p1)
	p2 := c.compute()
	require.Len(t, p2.RemoveFinalizers, 1)
	l2 := p2.Status.Roles[1]
	assert.Zero(t, l2.Succeeded)
	assert.Equal(t, 1, uncountedOf(&l2.Job))
	assert.False(t, p2.StatusChanged, "nothing new to write")

	// The removal happens: the next write counts the pod, once, and finishes
	// the launcher's role.
	c.removeFinalizer(launcher.Name)
	p3 := c.compute()
	assert.Empty(t, p3.RemoveFinalizers)
	l3 := p3.Status.Roles[1]
	assert.Equal(t, int32(1), l3.Job.Succeeded)
	assert.Equal(t, int32(1), l3.Succeeded)
	assert.Zero(t, uncountedOf(&l3.Job))
	assert.True(t, jobCondition(&l3.Job, batchv1.JobComplete), "the role completes in the sync after its last removal")
	// The group decides over the statuses this sync writes: the launcher's
	// completion and the group's are one write, and the worker stops.
	assert.Equal(t, "Completed", p3.Status.TerminalState)
	require.Len(t, p3.Delete, 1)
	assert.True(t, p3.Delete[0].RemoveFinalizerFirst)
	assert.Equal(t, "worker", p3.Delete[0].Pod.Labels["jobset.sigs.k8s.io/replicatedjob-name"])

	c.applyStatus(p3)
	p4 := c.compute()
	assert.Equal(t, int32(1), p4.Status.Roles[1].Succeeded, "never counted twice")
	var _ ownedpods.Status = p4.Status
}
