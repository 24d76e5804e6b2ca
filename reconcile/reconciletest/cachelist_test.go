package reconciletest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// DeliverDuringList delivers queued events after the next pod list has its snapshot
// and before it returns: the handlers hear of changes that the returned list does
// not show.
func TestCacheDeliverDuringList(t *testing.T) {
	for _, tc := range []struct {
		name string
		arm  int
		// heard is what the handlers heard during the list; listed the phases of
		// a and b in the list; after the phases the cache holds afterwards.
		heard         []string
		listed, after []corev1.PodPhase
	}{
		{name: "disarmed", arm: 0, listed: []corev1.PodPhase{corev1.PodPending, corev1.PodPending},
			after: []corev1.PodPhase{corev1.PodPending, corev1.PodPending}},
		{name: "one event", arm: 1, heard: []string{"update a"}, listed: []corev1.PodPhase{corev1.PodPending, corev1.PodPending},
			after: []corev1.PodPhase{corev1.PodRunning, corev1.PodPending}},
		{name: "every event", arm: -1, heard: []string{"update a", "update b"}, listed: []corev1.PodPhase{corev1.PodPending, corev1.PodPending},
			after: []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := reconciletest.NewCluster(reconciletest.Options{})
			job, err := c.Jobs().Create(reconciletest.NewJob(ns, "j", 2, 2))
			require.NoError(t, err)
			for _, name := range []string{"a", "b"} {
				p := newPod(name)
				p.OwnerReferences = append(p.OwnerReferences, owner.BatchJob.NewControllerRef(job))
				_, err := c.AddPod(p)
				require.NoError(t, err)
			}
			c.Cache().DeliverAll()
			var heard []string
			listing := false
			c.Cache().OnPodEvent(func(ev reconcile.PodEvent) {
				require.True(t, listing, "an event outside the list: %v", ev.Type)
				heard = append(heard, ev.Type.String()+" "+ev.New.Name)
			})
			require.NoError(t, c.Kubelet().Run(ns, "a"))
			require.NoError(t, c.Kubelet().Run(ns, "b"))

			c.Cache().DeliverDuringList(tc.arm)
			c.Cache().Pods(ns) // the test's own look does not spend the arm
			w := plan.JobWorkload(c.Jobs().Cached(ns, "j"))
			listing = true
			pods, err := c.Cache().OwnerPods(w)
			listing = false
			require.NoError(t, err)
			assert.Equal(t, tc.heard, heard)
			assert.Equal(t, tc.listed, phases(pods), "the list is the snapshot taken before the delivery")
			assert.Equal(t, tc.after, phases(c.Cache().Pods(ns)))

			// The arm held for one list.
			listing = true
			_, err = c.Cache().OwnerPods(plan.JobWorkload(c.Jobs().Cached(ns, "j")))
			listing = false
			require.NoError(t, err)
			assert.Equal(t, tc.heard, heard, "the next list delivers nothing")
		})
	}
}

// Reset, a new informer, drops the arm.
func TestCacheResetDisarmsDuringList(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	job, err := c.Jobs().Create(reconciletest.NewJob(ns, "j", 1, 1))
	require.NoError(t, err)
	c.Cache().DeliverDuringList(-1)
	c.Cache().Reset()
	_, err = c.Cache().OwnerPods(plan.JobWorkload(job))
	require.NoError(t, err)
	assert.Len(t, c.Cache().Pending(), 1, "the Job's Added event still waits")
}

func phases(pods []*corev1.Pod) []corev1.PodPhase {
	out := make([]corev1.PodPhase, len(pods))
	for i, p := range pods {
		out[i] = p.Status.Phase
	}
	return out
}
