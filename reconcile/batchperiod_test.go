package reconcile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// The batch period grows with the pods the owner's last sync listed
// (Config.PodEventBatchPods), for the events that only change counts; events that
// observe a creation or a deletion keep the base period.
func TestBatchPeriodGrowsWithPods(t *testing.T) {
	const per = 10
	running := func(p *corev1.Pod) *corev1.Pod {
		q := p.DeepCopy()
		q.ResourceVersion += "9"
		q.Status.Phase = corev1.PodRunning
		return q
	}
	gone := func(p *corev1.Pod) *corev1.Pod {
		q := running(p)
		q.DeletionTimestamp = &t0
		return q
	}
	tests := []struct {
		name      string
		pods      int32 // the Job's completions and parallelism: the pods the second sync lists
		batchPods int   // Config.PodEventBatchPods
		ev        func(p *corev1.Pod) reconcile.PodEvent
		want      time.Duration // of the pod event
		wantOwner time.Duration // of a status update of the Job
	}{
		{name: "at the threshold: the base period", pods: per, batchPods: per,
			ev: func(p *corev1.Pod) reconcile.PodEvent {
				return reconcile.PodEvent{Type: reconcile.PodUpdated, Old: p, New: running(p)}
			}, want: time.Second, wantOwner: time.Second},
		{name: "2.5 times the threshold: 2.5 periods", pods: 25, batchPods: per,
			ev: func(p *corev1.Pod) reconcile.PodEvent {
				return reconcile.PodEvent{Type: reconcile.PodUpdated, Old: p, New: running(p)}
			}, want: 2500 * time.Millisecond, wantOwner: 2500 * time.Millisecond},
		{name: "at most 10 periods", pods: 150, batchPods: per,
			ev: func(p *corev1.Pod) reconcile.PodEvent {
				return reconcile.PodEvent{Type: reconcile.PodUpdated, Old: p, New: running(p)}
			}, want: 10 * time.Second, wantOwner: 10 * time.Second},
		{name: "a creation observed: the base period", pods: 25, batchPods: per,
			ev: func(p *corev1.Pod) reconcile.PodEvent {
				return reconcile.PodEvent{Type: reconcile.PodAdded, New: running(p)}
			}, want: time.Second, wantOwner: 2500 * time.Millisecond},
		{name: "a deletion observed: the base period", pods: 25, batchPods: per,
			ev: func(p *corev1.Pod) reconcile.PodEvent {
				return reconcile.PodEvent{Type: reconcile.PodUpdated, Old: p, New: gone(p)}
			}, want: time.Second, wantOwner: 2500 * time.Millisecond},
		{name: "a pod gone: the base period", pods: 25, batchPods: per,
			ev: func(p *corev1.Pod) reconcile.PodEvent {
				return reconcile.PodEvent{Type: reconcile.PodDeleted, Old: running(p)}
			}, want: time.Second, wantOwner: 2500 * time.Millisecond},
		{name: "negative: fixed, as upstream", pods: 25, batchPods: -1,
			ev: func(p *corev1.Pod) reconcile.PodEvent {
				return reconcile.PodEvent{Type: reconcile.PodUpdated, Old: p, New: running(p)}
			}, want: time.Second, wantOwner: time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *reconcile.Config) { c.PodEventBatchPods = tc.batchPods })
			e.create(t, job("a", tc.pods, tc.pods))
			_, err := e.sync(t, "a") // creates the pods
			require.NoError(t, err)
			e.c.Cache().DeliverAll()
			_, err = e.sync(t, "a") // lists them
			require.NoError(t, err)
			pods := e.pods()
			require.Len(t, pods, int(tc.pods))
			got := e.r.ObservePodEvent(tc.ev(pods[0]), nil)
			assert.Equal(t, []string{"ns/a"}, got.Sync, "Sync")
			assert.Equal(t, tc.want, got.Delay, "Delay of the pod event")
			w := plan.JobWorkload(e.apiJob(t, "a"))
			status := *w
			status.Status.Active++
			own := e.r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: w, New: &status})
			assert.Equal(t, tc.wantOwner, own.Delay, "Delay of a status update of the Job")
		})
	}
}
