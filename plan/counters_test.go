package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/plan"
)

// counterRun executes plans on w and its pods as a cluster would, for a few syncs:
// each sync's status is written back, removed finalizers go, deleted pods get a
// deletionTimestamp and, once without finalizer, disappear. mutate, when set,
// changes the pods before each sync (a stopped pod's last phase).
func counterRun(t *testing.T, w *plan.Workload, pods []*corev1.Pod, syncs int, mutate func(sync int, pods []*corev1.Pod)) *plan.Workload {
	t.Helper()
	for sync := range syncs {
		if mutate != nil {
			mutate(sync, pods)
		}
		p, err := plan.Compute(plan.Input{Workload: w, Pods: pods, Owner: trainingKind, ControllerName: "example.com/ctl", ExpectationsSatisfied: true, Now: exampleNow})
		require.NoError(t, err)
		if p.Skip != "" {
			break
		}
		removed := sets.New[types.UID]()
		for _, a := range p.RemoveFinalizers {
			removed.Insert(a.Pod.UID)
		}
		deleted := sets.New[types.UID]()
		for _, d := range p.Delete {
			deleted.Insert(d.Pod.UID)
			if d.RemoveFinalizerFirst {
				removed.Insert(d.Pod.UID)
			}
		}
		w.Status = p.Settle(removed).Status
		var next []*corev1.Pod
		for _, pod := range pods {
			pod = pod.DeepCopy()
			if removed.Has(pod.UID) {
				pod.Finalizers = nil
			}
			if deleted.Has(pod.UID) {
				pod.DeletionTimestamp = ptr.To(metav1.NewTime(exampleNow))
			}
			if pod.DeletionTimestamp != nil && len(pod.Finalizers) == 0 {
				continue // gone
			}
			next = append(next, pod)
		}
		pods = next
	}
	return w
}

// TestCountersOfACustomOwner pins what status.failed counts for an owner of any
// kind (the rule of the package doc's "Counters"): pods that failed, and pods
// stopped while they still count, as upstream; never the pods the plan stops with
// their finalizer removed first.
func TestCountersOfACustomOwner(t *testing.T) {
	t.Run("workers stopped because the owner failed count as failed", func(t *testing.T) {
		w := msgWorkload(func(w *plan.Workload) {
			w.Spec.Completions, w.Spec.Parallelism = ptr.To[int32](3), ptr.To[int32](3)
			w.Spec.BackoffLimit = ptr.To[int32](0)
		})
		pods := []*corev1.Pod{
			msgPod(trainingKind, w, "w1", corev1.PodFailed, -1),
			msgPod(trainingKind, w, "w2", corev1.PodRunning, -1),
			msgPod(trainingKind, w, "w3", corev1.PodRunning, -1),
		}
		w = counterRun(t, w, pods, 4, nil)
		assert.True(t, hasCondition(w.Status, batchv1.JobFailed), "conditions: %+v", w.Status.Conditions)
		assert.Equal(t, int32(3), w.Status.Failed, "the failed worker and the two stopped with it, as upstream counts them")
	})

	t.Run("workers stopped because the owner succeeded by its success policy are not counted", func(t *testing.T) {
		w := msgWorkload(func(w *plan.Workload) {
			w.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			w.Spec.Completions, w.Spec.Parallelism = ptr.To[int32](3), ptr.To[int32](3)
			w.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
		})
		pods := []*corev1.Pod{
			msgPod(trainingKind, w, "leader", corev1.PodSucceeded, 0),
			msgPod(trainingKind, w, "worker-1", corev1.PodRunning, 1),
			msgPod(trainingKind, w, "worker-2", corev1.PodRunning, 2),
		}
		w = counterRun(t, w, pods, 4, nil)
		assert.True(t, hasCondition(w.Status, batchv1.JobComplete), "conditions: %+v", w.Status.Conditions)
		assert.Equal(t, int32(1), w.Status.Succeeded)
		assert.Equal(t, int32(0), w.Status.Failed, "stopped workers of a success are no failures")
	})

	t.Run("workers the plan scales down are not counted", func(t *testing.T) {
		w := msgWorkload(func(w *plan.Workload) {
			w.Spec.Completions = nil
			w.Spec.Parallelism = ptr.To[int32](1)
		})
		pods := []*corev1.Pod{
			msgPod(trainingKind, w, "w1", corev1.PodRunning, -1),
			msgPod(trainingKind, w, "w2", corev1.PodRunning, -1),
			msgPod(trainingKind, w, "w3", corev1.PodRunning, -1),
		}
		w = counterRun(t, w, pods, 3, nil)
		assert.Equal(t, int32(0), w.Status.Failed)
		assert.Equal(t, int32(1), w.Status.Active)
	})

	t.Run("workers stopped by suspend are not counted", func(t *testing.T) {
		w := msgWorkload(func(w *plan.Workload) {
			w.Spec.Parallelism = ptr.To[int32](2)
			w.Spec.Completions = ptr.To[int32](2)
			w.Spec.Suspend = ptr.To(true)
		})
		pods := []*corev1.Pod{
			msgPod(trainingKind, w, "w1", corev1.PodRunning, -1),
			msgPod(trainingKind, w, "w2", corev1.PodRunning, -1),
		}
		w = counterRun(t, w, pods, 3, nil)
		assert.Equal(t, int32(0), w.Status.Failed)
		assert.Equal(t, int32(0), w.Status.Active)
	})

	t.Run("a worker deleted by someone else counts as failed", func(t *testing.T) {
		w := msgWorkload(func(w *plan.Workload) { w.Spec.BackoffLimit = ptr.To[int32](3) })
		pods := []*corev1.Pod{msgPod(trainingKind, w, "w1", corev1.PodRunning, -1)}
		pods[0].DeletionTimestamp = ptr.To(metav1.NewTime(exampleNow))
		w = counterRun(t, w, pods, 1, nil)
		assert.Equal(t, int32(1), w.Status.Failed)
	})
}

func hasCondition(st batchv1.JobStatus, t batchv1.JobConditionType) bool {
	for _, c := range st.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
