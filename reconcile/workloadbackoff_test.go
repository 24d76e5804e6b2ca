package reconcile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// A Workload's own Backoff replaces Config.Backoff (1s doubling to 4s in newEnv) for
// that owner: the retry of a failed index waits the owner's delay.
func TestSyncWorkloadBackoff(t *testing.T) {
	tests := []struct {
		name      string
		backoff   *backoff.Policy
		wantAfter time.Duration
	}{
		{name: "nil takes Config.Backoff", wantAfter: time.Second},
		{name: "the owner's policy", backoff: &backoff.Policy{Base: 7 * time.Second, Max: time.Minute}, wantAfter: 7 * time.Second},
		{name: "the owner's cap", backoff: &backoff.Policy{Base: 7 * time.Second, Max: 3 * time.Second}, wantAfter: 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			j := indexedJob("a", 1, 1)
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](3)
			e.create(t, j)
			sync := func() reconcile.Result {
				t.Helper()
				e.c.Cache().DeliverAll()
				w := reconcile.JobWorkload(e.c.Cache().Job(ns, "a"))
				w.Backoff = tt.backoff
				res, err := e.r.SyncWorkload(t.Context(), w, func(w *reconcile.Workload) ([]*corev1.Pod, error) {
					return e.c.Cache().PodsForJob(w.Object.(*batchv1.Job))
				})
				require.NoError(t, err)
				return res
			}
			sync()
			require.Len(t, e.pods(), 1)
			e.runPods(t)
			require.NoError(t, e.c.Kubelet().Fail(ns, e.pods()[0].Name, 1))
			var res reconcile.Result
			for range 3 { // count the failure, remove its finalizer, then wait
				res = sync()
			}
			require.Equal(t, tt.wantAfter, res.RequeueAfter, "RequeueAfter of the retry")
			require.Equal(t, 1, e.count(reconciletest.OpCreatePod), "no replacement before the delay")
		})
	}
}
