package ownedpods_test

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// inPlaceJob is a launcher (one pod) and two Indexed workers restarted in
// place, with the template rules of that strategy: no backoff limit, a pod
// replaced once it has failed, completions equal to parallelism.
func inPlaceJob(maxRestarts int32) *ownedpods.Workload {
	role := func(name string, n int32) ownedpods.Role {
		tmpl := template()
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		return ownedpods.Role{Name: name, Spec: plan.Spec{Template: tmpl, Completions: ptr.To(n), Parallelism: ptr.To(n),
			CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimit: ptr.To[int32](math.MaxInt32),
			PodReplacementPolicy: ptr.To(batchv1.Failed)}}
	}
	return &ownedpods.Workload{
		Namespace: ns, Name: ownerName, UID: ownerUID,
		Roles:         []ownedpods.Role{role("launcher", 1), role("worker", 2)},
		FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: maxRestarts, RestartStrategy: plaingroup.InPlaceRestart},
	}
}

// runningInPlace is a cluster whose group has created its three pods, all
// running.
func runningInPlace(t *testing.T, maxRestarts int32) *cluster {
	t.Helper()
	c := newCluster(t, inPlaceJob(maxRestarts))
	c.syncUntil(10)
	c.runAll("launcher")
	c.runAll("worker")
	c.syncUntil(10)
	require.Len(t, c.pods, 3)
	return c
}

func annotate(p *corev1.Pod, attempt string) {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[plaingroup.AnnotationInPlaceRestartAttempt] = attempt
}

// report sets the attempt annotation of the pods, in name order ("" removes
// it), as their agents would.
func (c *cluster) report(attempts ...string) {
	pods := append(c.role("launcher"), c.role("worker")...)
	for i, a := range attempts {
		p := pods[i]
		delete(p.Annotations, plaingroup.AnnotationInPlaceRestartAttempt)
		if a != "" {
			annotate(p, a)
		}
	}
}

// One sync of a group restarted in place: the attempts its pods report move
// the barrier in the status (InPlace), or fail the group; no pod is deleted
// or created for it, and the group's restart counters do not move.
func TestComputeInPlaceRestart(t *testing.T) {
	at := func(n int32) *int32 { return &n }
	cases := []struct {
		name              string
		strategy          plaingroup.RestartStrategy
		was               plaingroup.InPlaceAttempts
		attempts          []string
		restartCount      int32
		stray             string // the attempt a pod of an earlier group attempt reports
		lastSucceeded     bool   // the second worker (completion index 1) has succeeded
		resize            bool   // the workers resized down to one pod
		wantPrev, wantCur *int32
		wantFailed        bool
		wantWarning       string
	}{
		{name: "no pod reports: nothing moves", attempts: []string{"", "", ""}},
		{name: "every pod on attempt 0: current 0", attempts: []string{"0", "0", "0"}, wantCur: at(0)},
		{name: "one pod moved on: previous 0", was: plaingroup.InPlaceAttempts{Current: at(0)}, attempts: []string{"0", "1", "0"},
			wantPrev: at(0), wantCur: at(0)},
		{name: "a pod not yet reporting holds the barrier", was: plaingroup.InPlaceAttempts{Previous: at(0), Current: at(0)},
			attempts: []string{"1", "1", ""}, wantPrev: at(0), wantCur: at(0)},
		{name: "the barrier lifts", was: plaingroup.InPlaceAttempts{Previous: at(0), Current: at(0)}, attempts: []string{"1", "1", "1"},
			wantPrev: at(0), wantCur: at(1)},
		{name: "previous never goes back", was: plaingroup.InPlaceAttempts{Previous: at(2), Current: at(2)}, attempts: []string{"2", "2", "1"},
			wantPrev: at(2), wantCur: at(2)},
		{name: "a worker that succeeded on the old attempt does not hold the barrier", was: plaingroup.InPlaceAttempts{Previous: at(0), Current: at(0)},
			attempts: []string{"1", "1", "0"}, lastSucceeded: true, wantPrev: at(0), wantCur: at(1)},
		{name: "a worker resized away does not hold the barrier", was: plaingroup.InPlaceAttempts{Previous: at(0), Current: at(0)},
			attempts: []string{"1", "1", "0"}, resize: true, wantPrev: at(0), wantCur: at(1)},
		{name: "without either, that worker holds the barrier", was: plaingroup.InPlaceAttempts{Previous: at(0), Current: at(0)},
			attempts: []string{"1", "1", "0"}, wantPrev: at(0), wantCur: at(0)},
		{name: "a stray reports nothing", stray: "9", attempts: []string{"0", "0", "0"}, wantCur: at(0)},
		{name: "an attempt beyond maxRestarts fails the group", attempts: []string{"0", "4", "0"}, wantFailed: true},
		{name: "a container restarting too often fails the group", attempts: []string{"0", "0", "0"}, restartCount: 4, wantFailed: true},
		{name: "a bad annotation is reported and ignored", attempts: []string{"0", "x", "0"},
			wantWarning: `in-place restart: pod 1: invalid value: annotation jobset.sigs.k8s.io/in-place-restart-attempt="x": must be a non-negative integer`},
		{name: "Recreate reads no attempt", strategy: plaingroup.Recreate, attempts: []string{"0", "0", "0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := runningInPlace(t, 3)
			if tc.strategy != "" {
				c.w.FailurePolicy.RestartStrategy = tc.strategy
			}
			c.w.Status.InPlace = tc.was
			c.report(tc.attempts...)
			for _, p := range c.pods {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", RestartCount: tc.restartCount}}
			}
			last := c.role("worker")[1]
			require.Equal(t, "1", last.Annotations[kind.IndexKey()])
			if tc.lastSucceeded {
				last.Status.Phase = corev1.PodSucceeded
			}
			if tc.resize {
				c.w.Roles[1].Spec.Parallelism, c.w.Roles[1].Spec.Completions = ptr.To[int32](1), ptr.To[int32](1)
			}
			if tc.stray != "" {
				c.create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: ns,
					Labels:          map[string]string{plaingroup.LabelRoleName: "worker", plaingroup.LabelRestartAttempt: "7"},
					Annotations:     map[string]string{plaingroup.AnnotationInPlaceRestartAttempt: tc.stray},
					OwnerReferences: []metav1.OwnerReference{{APIVersion: kind.Group + "/" + kind.Version, Kind: kind.Kind, Name: ownerName, UID: ownerUID, Controller: ptr.To(true)}}}})
			}
			p := c.compute()
			assert.Equal(t, tc.wantPrev, p.Status.InPlace.Previous, "previous")
			assert.Equal(t, tc.wantCur, p.Status.InPlace.Current, "current")
			assert.Equal(t, tc.was != p.Status.InPlace || tc.wantFailed, p.StatusChanged, "status changed")
			assert.Zero(t, p.Status.Restarts, "restarts")
			assert.Empty(t, p.Create, "creations")
			if tc.resize || tc.lastSucceeded {
				return // the role's plan removes or records that pod
			}
			failed := condition(p.Status.Conditions, plaingroup.ConditionFailed)
			if tc.wantFailed {
				require.NotNil(t, failed)
				assert.Equal(t, "ReachedMaxRestarts", failed.Reason)
				assert.Equal(t, "Failed", p.Status.TerminalState)
				assert.Len(t, p.Delete, 3, "the group fails: its roles stop")
			} else {
				assert.Nil(t, failed)
				for _, d := range p.Delete {
					assert.Equal(t, "stray", d.Pod.Name, "only the stray is deleted")
				}
			}
			if tc.wantWarning != "" {
				assert.Contains(t, p.Warnings, tc.wantWarning)
			}
		})
	}
}

// A pod that fails under InPlaceRestart is replaced on its own, in place of a
// restart of the group: the role has no backoff limit, so it does not fail,
// and the group's restart counters and its other pods are untouched. The
// replacement reports the next attempt (its agent), which starts the in-place
// restart of the others.
func TestInPlaceRestartReplacesAFailedPod(t *testing.T) {
	c := runningInPlace(t, 3)
	c.report("0", "0", "0")
	c.syncUntil(10)
	require.Equal(t, ptr.To[int32](0), c.w.Status.InPlace.Current)
	victim := c.role("worker")[1]
	c.finish(victim, 1)
	c.syncUntil(10)
	require.Positive(t, c.last.RequeueAfter, "the replacement waits for the pod failure backoff")
	c.now = c.now.Add(c.last.RequeueAfter)
	c.syncUntil(10)
	workers := c.role("worker")
	require.Len(t, workers, 3, "the failed pod stays until deleted, as a Job's")
	workers = slices.DeleteFunc(workers, func(p *corev1.Pod) bool { return p.UID == victim.UID })
	assert.NotEqual(t, victim.UID, workers[1].UID, "the failed pod is replaced")
	assert.Equal(t, "0", attemptOf(workers[1]), "in the group's attempt")
	assert.Zero(t, c.w.Status.Restarts)
	assert.Equal(t, int32(1), c.roleStatus("worker").Failed)
	c.runAll("worker")
	annotate(workers[1], "1") // the replacement's agent: the attempt after the current one
	c.syncUntil(10)
	assert.Equal(t, plaingroup.InPlaceAttempts{Previous: ptr.To[int32](0), Current: ptr.To[int32](0)}, c.w.Status.InPlace)
	for _, p := range append(c.role("launcher"), workers[0]) {
		annotate(p, "1") // restarted in place by their agents
	}
	c.syncUntil(10)
	assert.Equal(t, ptr.To[int32](1), c.w.Status.InPlace.Current, "the barrier lifts at attempt 1")
	assert.Empty(t, c.w.Status.TerminalState)
}
