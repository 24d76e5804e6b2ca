package runplan_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	plainconc "github.com/jobkit/jobkit/plain/concurrency"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

// FuzzCompute builds a run, its pod and peers from bytes and checks that
// Compute never fails on valid configuration, never modifies its input, and
// keeps the invariants of the package doc.
func FuzzCompute(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(0), []byte{0, 1, 2}, int64(0))
	f.Add(uint8(2), uint8(0x15), uint8(3), []byte{0x21, 0x42, 0x83}, int64(3600))
	f.Add(uint8(1), uint8(0xff), uint8(0x81), []byte{}, int64(-60))
	f.Add(uint8(7), uint8(0x33), uint8(0x40), []byte{7, 0x10, 0xf0, 0x55}, int64(200000))
	f.Fuzz(func(t *testing.T, state, podBits, runBits uint8, peerBytes []byte, secs int64) {
		states := []runplan.State{runplan.StateNew, runplan.StateTriggered, runplan.StatePending, runplan.StateSuccess,
			runplan.StateFailure, runplan.StateError, runplan.StateAborted, "scheduling"}
		phases := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown, "", "Odd", corev1.PodRunning}
		run := aRun(states[int(state)%len(states)], func(r *runplan.Run) {
			r.DedupeKey = []string{"", "k"}[runBits&1]
			r.MaxConcurrency = int(runBits>>1) & 3
			r.Queue = []string{"", "q", "closed", "nope"}[int(runBits>>3)&3]
			r.AbortRequested = runBits&0x20 != 0
			r.Completed = runBits&0x40 != 0
			r.Revivals.Count = int(runBits>>6) & 3
			if runBits&0x80 != 0 {
				r.PendingTime, r.Revivals.Pod = time.Time{}, podUID
			}
		})
		var pod *corev1.Pod
		if podBits&1 != 0 {
			pod = aPod(phases[int(podBits>>1)&7])
			if podBits&0x10 != 0 {
				terminating(pod)
			}
			if podBits&0x20 != 0 {
				pod.Status.Reason = []string{"Evicted", "NodeLost"}[int(podBits>>6)&1]
			}
			if podBits&0x40 != 0 {
				startedAgo(time.Duration(podBits) * time.Minute)(pod)
			}
			if podBits&0x80 != 0 {
				noCreationTime(pod)
			}
			if podBits&0x0c == 0x0c {
				pod.OwnerReferences = nil
			}
		}
		var peers []runplan.Run
		for i, b := range peerBytes {
			if i >= 8 {
				break
			}
			peers = append(peers, peer(types.UID(fmt.Sprintf("p%d", i)), []string{"unit", "lint"}[b&1], states[int(b>>1)%len(states)],
				now.Add(time.Duration(int(b>>4)-8)*time.Minute), func(r *runplan.Run) {
					r.DedupeKey = []string{"", "k"}[(b>>4)&1]
					r.Queue = []string{"", "q"}[(b>>5)&1]
					if b&0x80 != 0 {
						r.StartTime = time.Time{}
					}
				}))
		}
		in := input(run, pod, peers...)
		in.Limits = plainconc.Limits{MaxPending: int(state>>3) & 3, Queues: map[string]int{"q": 1, "closed": 0}}
		in.Outcome.MaxRevivals = int(state>>5) & 3
		in.Now = now.Add(time.Duration(secs) * time.Second)
		before := deepCopy(in)

		p, err := runplan.Compute(in)
		if err != nil {
			// The one invalid input the generator makes: a queue Limits.Queues lacks,
			// which is invalid configuration (an error naming Run.Queue).
			var ie *plaindl.FieldError
			if _, known := in.Limits.Queues[in.Run.Queue]; errors.As(err, &ie) && ie.Field == "Run.Queue" && !known {
				if !reflect.DeepEqual(before, in) {
					t.Fatal("Compute modified its input")
				}
				return
			}
			t.Fatalf("Compute: %v", err)
		}
		if !reflect.DeepEqual(before, in) {
			t.Fatal("Compute modified its input")
		}
		checkInvariants(t, in, p)
		if p.Action == runplan.ActionCreate {
			checkInvariants(t, in, p.CreateFailed(fmt.Errorf("connection refused")))
		}
	})
}

func checkInvariants(t *testing.T, in runplan.Input, p runplan.Plan) {
	t.Helper()
	if p.Action == "" || p.Reason == "" {
		t.Fatalf("plan without an action or a reason: %s", p)
	}
	if p.Pod.Create && (in.Pod != nil || p.Action != runplan.ActionCreate) {
		t.Fatalf("creates a pod while the cache shows one, or outside Create: %s", p)
	}
	if p.Status.Complete != (p.Action == runplan.ActionFinish) {
		t.Fatalf("completes outside Finish, or finishes without completing: %s", p)
	}
	if p.Action == runplan.ActionFinish && !p.Status.State.Finished() {
		t.Fatalf("finishes in state %q: %s", p.Status.State, p)
	}
	if in.Run.Completed && p.Action != runplan.ActionNone {
		t.Fatalf("plans for a completed run: %s", p)
	}
	if in.Pod != nil && p.Pod.Delete {
		if ref := metav1.GetControllerOf(in.Pod); ref == nil || ref.UID != in.Run.UID || p.Pod.UID != in.Pod.UID {
			t.Fatalf("deletes a pod the run does not control, or without its UID: %s", p)
		}
		if in.Pod.DeletionTimestamp != nil {
			t.Fatalf("deletes a terminating pod again: %s", p)
		}
	}
	if p.Pod.Delete && p.Pod.Terminating {
		t.Fatalf("deletes and waits for termination at once: %s", p)
	}
	if rev := p.Status.Revivals; rev != nil {
		if p.Action != runplan.ActionRevive || rev.Count != in.Run.Revivals.Count+1 || rev.Count > in.Outcome.MaxRevivals {
			t.Fatalf("revival record %+v from %+v (max %d): %s", *rev, in.Run.Revivals, in.Outcome.MaxRevivals, p)
		}
	}
	if p.Pod.ReleaseFinalizers != (p.Action == runplan.ActionRevive) {
		t.Fatalf("finalizers released outside a revive, or kept on one: %s", p)
	}
	for _, s := range p.Supersede {
		if s.UID == in.Run.UID {
			t.Fatalf("supersedes the run being reconciled through Supersede: %s", p)
		}
	}
	if p.RequeueAfter < 0 {
		t.Fatalf("negative requeue: %s", p)
	}
}
