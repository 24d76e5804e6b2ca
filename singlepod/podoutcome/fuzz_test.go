package podoutcome_test

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
)

// FuzzDecide builds a pod from bytes and checks that Decide never panics and
// keeps its invariants: a retry never exceeds MaxRevivals, a terminating pod
// is never deleted again, the count rises by at most one, and a success is a
// Succeeded pod.
func FuzzDecide(f *testing.F) {
	f.Add(uint8(0), uint8(0), []byte{0, 0}, uint8(3), uint8(0), false, int64(60))
	f.Add(uint8(1), uint8(1), []byte{1, 2, 3}, uint8(1), uint8(1), true, int64(600))
	f.Add(uint8(4), uint8(2), []byte{4, 0x85}, uint8(0), uint8(0), true, int64(-5))
	f.Fuzz(func(t *testing.T, phase, why uint8, cs []byte, maxRev, count uint8, sameUID bool, secs int64) {
		phases := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown, "", "Odd"}
		reasons := []string{"", "Evicted", "NodeLost", "Other"}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "p", CreationTimestamp: metav1.NewTime(t0)}}
		pod.Status.Phase = phases[int(phase)%len(phases)]
		pod.Status.Reason = reasons[int(why)%len(reasons)]
		if why&8 != 0 {
			pod.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
		}
		if why&16 != 0 {
			pod.Status.StartTime = ptr.To(metav1.NewTime(t0.Add(time.Minute)))
		}
		names := []string{"a", "b", "c"}
		for i, b := range cs {
			if i >= 6 {
				break
			}
			name := names[int(b)%3]
			st := corev1.ContainerStatus{Name: name}
			switch (b >> 2) & 3 {
			case 1:
				st.State.Running = &corev1.ContainerStateRunning{}
			case 2, 3:
				st.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: int32(b>>6) - 1, Reason: reasons[int(b>>4)&3]}
				if b&0x20 != 0 {
					st.State.Terminated.Reason = "OOMKilled"
				}
				if b&1 != 0 {
					st.State.Terminated.FinishedAt = finished
				}
			}
			c := corev1.Container{Name: name}
			if b&0x80 != 0 {
				c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
				pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, st)
			} else {
				pod.Spec.Containers = append(pod.Spec.Containers, c)
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, st)
			}
		}
		rev := podoutcome.Revivals{Count: int(count % 8)}
		if sameUID {
			rev.Pod = pod.UID
		}
		opts := podoutcome.Options{MaxRevivals: int(maxRev % 5), ErrorOnEviction: why&32 != 0, Timeouts: plaindl.DefaultTimeouts()}
		before := pod.DeepCopy()
		step, err := podoutcome.Decide(pod, rev, opts, t0.Add(time.Duration(secs)*time.Second))
		if err != nil {
			t.Fatalf("Decide: %v", err)
		}
		if !reflect.DeepEqual(before, pod) {
			t.Fatal("Decide modified the pod")
		}
		if step.Action == "" {
			t.Fatalf("empty action: %+v", step)
		}
		if pod.DeletionTimestamp != nil && step.DeletePod {
			t.Fatalf("asked to delete a terminating pod: %+v", step)
		}
		if step.Action == podoutcome.ActionRetry {
			if step.Revivals.Count > opts.MaxRevivals && step.Revivals != rev {
				t.Fatalf("retry past MaxRevivals %d: %+v", opts.MaxRevivals, step)
			}
			if step.Revivals.Pod != pod.UID {
				t.Fatalf("retry not tied to the pod: %+v", step)
			}
		}
		if step.Revivals != rev && (step.Action != podoutcome.ActionRetry || step.Revivals.Count != rev.Count+1) {
			t.Fatalf("revivals changed from %+v to %+v by %s", rev, step.Revivals, step.Action)
		}
		if step.Action == podoutcome.ActionComplete && pod.Status.Phase != corev1.PodSucceeded {
			t.Fatalf("complete for phase %q", pod.Status.Phase)
		}
		if step.Action != podoutcome.ActionWait && step.RequeueAfter != 0 {
			t.Fatalf("requeue for a non-wait step: %+v", step)
		}
	})
}
