package reconcile_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// A sync that records finished pods and creates others sends the creations beside
// the record, the finalizer removals and the count when its calls may run at once
// (issue 37), and after them in plan order otherwise; a sync that deletes keeps
// the plan order. Every call takes L (a testing/synctest bubble), so which call
// answered first is exact: the creations of the concurrent sync are answered
// after 1 L, before the status write that counts (3 L).
func TestCreationsBesideTracking(t *testing.T) {
	const L = 10 * time.Millisecond
	tests := []struct {
		name        string
		parallelism int
		// wantBeside: the second sync's creations were answered before its last
		// status write; otherwise after it.
		wantBeside bool
	}{
		{name: "calls at once", parallelism: 0, wantBeside: true},
		{name: "calls in plan order", parallelism: 1, wantBeside: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := reconciletest.NewCluster(reconciletest.Options{Seed: 3})
				c.SetInterceptor(func(reconciletest.Call) reconciletest.Outcome { return reconciletest.Outcome{Delay: L} })
				r, err := reconcile.New(reconcile.Config{Name: testName, Clock: c.Clock(), FinalizerRemovalParallelism: tc.parallelism},
					c, reconcile.JobStatusWriter(c))
				require.NoError(t, err)
				d := reconciletest.NewDriver(c, r)
				_, err = c.Jobs().Create(job("beside", 4, 2))
				require.NoError(t, err)
				c.Kubelet().SetScript(reconciletest.SucceedPods())

				// The first sync starts the Job and creates 2 pods, which run and
				// succeed; the second records them and creates the other 2.
				c.Cache().DeliverAll()
				_, _, err = d.Sync(t.Context(), ns, "beside")
				require.NoError(t, err)
				require.NoError(t, c.Kubelet().Step())
				require.NoError(t, c.Kubelet().Step())
				c.Cache().DeliverAll()
				first := len(c.Calls())
				_, res, err := d.Sync(t.Context(), ns, "beside")
				require.NoError(t, err)
				require.Equal(t, 2, res.Created, "creations of the second sync")
				require.Equal(t, 2, res.FinalizersRemoved, "finalizers removed by the second sync")

				lastStatus, creates := 0, []int{}
				for _, call := range c.Calls()[first:] {
					switch call.Op {
					case reconciletest.OpUpdateJobStatus:
						lastStatus = call.Seq
					case reconciletest.OpCreatePod:
						creates = append(creates, call.Seq)
					}
				}
				require.Len(t, creates, 2)
				for _, seq := range creates {
					if beside := seq < lastStatus; beside != tc.wantBeside {
						t.Errorf("creation answered as call %d, the last status write as call %d: beside = %v, want %v", seq, lastStatus, beside, tc.wantBeside)
					}
				}

				// The Job completes with every pod counted once.
				for range 10 {
					require.NoError(t, c.Kubelet().Step())
					c.Cache().DeliverAll()
					_, _, err = d.Sync(t.Context(), ns, "beside")
					require.NoError(t, err)
				}
				j, err := c.Jobs().Get(ns, "beside")
				require.NoError(t, err)
				require.Equal(t, int32(4), j.Status.Succeeded)
				require.Equal(t, batchv1.JobComplete, j.Status.Conditions[len(j.Status.Conditions)-1].Type)
				n := 0
				for _, call := range c.Calls() {
					if call.Op == reconciletest.OpCreatePod {
						n++
					}
				}
				require.Equal(t, 4, n, "pods created")
			})
		})
	}
}
