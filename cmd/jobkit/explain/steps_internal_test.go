package explain

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

// An owner of another kind lives in the in-memory cluster as a Task of that kind,
// with a new UID that its loaded pods' controller references follow; the pods the
// Reconciler creates carry the kind's controller reference and finalizer (never
// the batch/v1 Job's), and lose the finalizer once counted.
func TestStepRunOfAnotherKind(t *testing.T) {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	now := time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)
	identity := metav1.ObjectMeta{Namespace: "ml", Name: "resnet", UID: "old-uid"}
	w := plan.Workload{
		Namespace: identity.Namespace, Name: identity.Name, UID: identity.UID,
		Spec: plan.Spec{
			Completions: ptr.To[int32](3), Parallelism: ptr.To[int32](2), CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "worker"}}}},
		},
		Status: batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0), StartTime: &metav1.Time{Time: now.Add(-time.Minute)}},
	}
	worker := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "resnet-0-a", UID: "pod-uid",
			Annotations:     map[string]string{batchv1.JobCompletionIndexAnnotation: "0"},
			OwnerReferences: []metav1.OwnerReference{kind.NewControllerRef(&identity)},
			Finalizers:      []string{kind.Finalizer}},
		Spec:   corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "worker"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	run, err := startRun(newWorkload(w, kind), []*corev1.Pod{worker}, Options{Now: now}, StepOptions{Steps: 10})
	require.NoError(t, err)
	ctx := context.Background()
	task, err := run.tasks.Get("ml", "resnet")
	require.NoError(t, err)
	require.Equal(t, "ml.example.com/v1alpha1", task.APIVersion)
	require.Equal(t, "TrainingJob", task.Kind)
	require.NotEqual(t, identity.UID, task.UID, "the cluster gives the Task a UID of its own")
	require.Equal(t, w.Status.Active, task.Status.Active)
	require.Empty(t, run.cluster.Jobs().List())
	loaded := run.cluster.ListPods("ml")
	require.Len(t, loaded, 1)
	require.Equal(t, task.UID, loaded[0].OwnerReferences[0].UID, "the loaded pod's controller reference follows the new UID")

	st, done, err := run.step(ctx)
	require.NoError(t, err)
	require.False(t, done)
	require.Equal(t, []string{"UpdateStatus TrainingJob resnet: active=2 ready=0 terminating=0 succeeded=0 failed=0", "CreatePod resnet-1-qkqvc (index 1)"}, st.Calls)
	pods := run.cluster.ListPods("ml")
	require.Len(t, pods, 2)
	created := pods[1]
	require.Equal(t, []metav1.OwnerReference{kind.NewControllerRef(task)}, created.OwnerReferences)
	require.Equal(t, []string{kind.Finalizer}, created.Finalizers)
	require.False(t, owner.BatchJob.HasFinalizer(created), "a pod of a TrainingJob carries no batch/v1 Job tracking finalizer")

	steps := 1
	for !done {
		steps++
		require.LessOrEqual(t, steps, 10, "the run does not finish")
		_, done, err = run.step(ctx)
		require.NoError(t, err)
	}
	require.Equal(t, 4, steps)
	task, err = run.tasks.Get("ml", "resnet")
	require.NoError(t, err)
	require.Equal(t, int32(3), task.Status.Succeeded)
	require.Equal(t, "0-2", task.Status.CompletedIndexes)
	pods = run.cluster.ListPods("ml")
	require.Len(t, pods, 3, "one pod per index, none created twice")
	for _, p := range pods {
		require.True(t, kind.IsControlledBy(p, string(task.UID)), "pod %s", p.Name)
		require.Empty(t, p.Finalizers, "pod %s keeps a finalizer after the run", p.Name)
		require.Equal(t, corev1.PodSucceeded, p.Status.Phase, "pod %s", p.Name)
	}
}
