package plan_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

// trainingKind is a custom owner: its pods carry its controller reference and its
// own tracking finalizer.
var trainingKind = owner.Kind{
	Group: "ml.example.com", Version: "v1", Kind: "TrainingJob",
	Finalizer: "ml.example.com/worker-tracking",
}

// trainingWorkload is a custom resource presented field by field, with no Job in
// sight: three indexed workers, one retry per index, exit code 42 fails the run.
func trainingWorkload() *plan.Workload {
	return &plan.Workload{
		Namespace: "ml", Name: "resnet", UID: "tj-1",
		Spec: plan.Spec{
			Parallelism:          ptr.To[int32](3),
			Completions:          ptr.To[int32](3),
			CompletionMode:       ptr.To(batchv1.IndexedCompletion),
			BackoffLimitPerIndex: ptr.To[int32](1),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:      batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
			}}},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "resnet"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "worker", Image: "trainer"}},
				},
			},
			ManagedBy: ptr.To("ml.example.com/trainer"),
		},
		Status: batchv1.JobStatus{StartTime: ptr.To(metav1.NewTime(exampleNow.Add(-time.Minute)))},
	}
}

// trainingPod is a worker of trainingWorkload for index ix, with the custom
// finalizer.
func trainingPod(w *plan.Workload, name string, ix int, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: w.Namespace, UID: types.UID(name),
			Labels:            map[string]string{"app": "resnet"},
			Annotations:       map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(ix)},
			Finalizers:        []string{trainingKind.Finalizer},
			OwnerReferences:   []metav1.OwnerReference{trainingKind.NewControllerRef(&metav1.ObjectMeta{Name: w.Name, UID: w.UID})},
			CreationTimestamp: metav1.NewTime(exampleNow.Add(-time.Minute)),
		},
		Status: corev1.PodStatus{Phase: phase},
	}
}

func trainingInput(w *plan.Workload, pods ...*corev1.Pod) plan.Input {
	return plan.Input{
		Workload: w, Pods: pods, Owner: trainingKind,
		ControllerName: "ml.example.com/trainer", ExpectationsSatisfied: true, Now: exampleNow,
	}
}

func TestComputeCustomWorkload(t *testing.T) {
	t.Run("creates the workers with the owner's reference and finalizer", func(t *testing.T) {
		w := trainingWorkload()
		p, err := plan.Compute(trainingInput(w))
		require.NoError(t, err)
		require.Len(t, p.Create, 3, "plan:\n%s", p)
		for i, c := range p.Create {
			assert.Equal(t, i, c.Index)
			pod := c.Pod
			assert.Equal(t, "ml", pod.Namespace)
			assert.Equal(t, fmt.Sprintf("resnet-%d-", i), pod.GenerateName)
			assert.Regexp(t, fmt.Sprintf("^resnet-%d-", i), pod.Name, "the plan names Indexed pods")
			assert.Equal(t, []string{trainingKind.Finalizer}, pod.Finalizers, "only the owner's finalizer")
			ref := metav1.GetControllerOf(pod)
			require.NotNil(t, ref)
			assert.Equal(t, "ml.example.com/v1", ref.APIVersion)
			assert.Equal(t, "TrainingJob", ref.Kind)
			assert.Equal(t, types.UID("tj-1"), ref.UID)
			assert.Equal(t, fmt.Sprint(i), pod.Annotations[batchv1.JobCompletionIndexAnnotation])
			assert.Equal(t, fmt.Sprint(i), pod.Labels[batchv1.JobCompletionIndexAnnotation])
			assert.Equal(t, "resnet", pod.Labels["app"])
			assert.Equal(t, fmt.Sprintf("resnet-%d", i), pod.Spec.Hostname)
			assert.Empty(t, pod.Spec.Subdomain, "no subdomain unless the template sets one")
		}
		assert.Nil(t, w.Spec.Template.Annotations, "the template is not modified")
	})

	t.Run("counts a finished worker through the owner's finalizer", func(t *testing.T) {
		w := trainingWorkload()
		done := trainingPod(w, "w0", 0, corev1.PodSucceeded)
		stranger := trainingPod(w, "w1", 1, corev1.PodSucceeded)
		stranger.Finalizers = []string{batchv1.JobTrackingFinalizer} // not this owner's finalizer: counted already
		running := trainingPod(w, "w2", 2, corev1.PodRunning)
		p, err := plan.Compute(trainingInput(w, done, stranger, running))
		require.NoError(t, err)
		require.NotNil(t, p.RecordStatus, "plan:\n%s", p)
		assert.Equal(t, "0", p.RecordStatus.CompletedIndexes, "recorded before the finalizer goes")
		require.Len(t, p.RemoveFinalizers, 1)
		assert.Equal(t, "w0", p.RemoveFinalizers[0].Pod.Name)
		assert.Equal(t, int32(1), p.Status.Succeeded)
		assert.Equal(t, "0", p.Status.CompletedIndexes, "a pod without the owner's finalizer is not counted again")
	})

	t.Run("a listed exit code fails the run and starts no replacement", func(t *testing.T) {
		w := trainingWorkload()
		failed := trainingPod(w, "w0", 0, corev1.PodFailed)
		failed.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 42}}}}
		running := trainingPod(w, "w1", 1, corev1.PodRunning)
		p, err := plan.Compute(trainingInput(w, failed, running, trainingPod(w, "w2", 2, corev1.PodRunning)))
		require.NoError(t, err)
		assert.Empty(t, p.Create, "no replacement")
		assert.Len(t, p.Delete, 2, "the running workers are stopped")
		require.NotEmpty(t, p.Conditions)
		assert.Equal(t, batchv1.JobFailureTarget, p.Conditions[0].Type)
		assert.Equal(t, batchv1.JobReasonPodFailurePolicy, p.Conditions[0].Reason)
	})

	t.Run("without managedBy, a custom owner is its controller's", func(t *testing.T) {
		w := trainingWorkload()
		w.Spec.ManagedBy = nil
		p, err := plan.Compute(trainingInput(w))
		require.NoError(t, err)
		assert.Empty(t, p.Skip)
		assert.Len(t, p.Create, 3)
	})

	t.Run("another controller's workload is skipped", func(t *testing.T) {
		w := trainingWorkload()
		w.Spec.ManagedBy = ptr.To("someone.else/controller")
		p, err := plan.Compute(trainingInput(w))
		require.NoError(t, err)
		assert.Contains(t, p.Skip, "someone.else/controller")
	})
}

func TestComputeWorkloadErrors(t *testing.T) {
	tests := []struct {
		name string
		in   func() plan.Input
		want string
	}{
		{"no template", func() plan.Input {
			w := trainingWorkload()
			w.Spec.Template = nil
			return trainingInput(w)
		}, "spec.template: required"},
		{"no workload", func() plan.Input { return trainingInput(nil) }, "Input.Workload is nil"},
		{"negative parallelism", func() plan.Input {
			w := trainingWorkload()
			w.Spec.Parallelism = ptr.To[int32](-1)
			return trainingInput(w)
		}, "spec.parallelism: must not be negative, got -1"},
		{"unknown completion mode", func() plan.Input {
			w := trainingWorkload()
			w.Spec.CompletionMode = ptr.To(batchv1.CompletionMode("Sometimes"))
			return trainingInput(w)
		}, `spec.completionMode: unknown value "Sometimes"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := plan.Compute(tc.in())
			require.ErrorIs(t, err, plan.ErrInvalidJob)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// ExampleJobWorkload presents a Job as a Workload; a custom resource's controller
// fills a Workload from its own object the same way.
func ExampleJobWorkload() {
	job := exampleJob(batchv1.IndexedCompletion, 2, 2)
	w := plan.JobWorkload(job)
	p, err := plan.Compute(plan.Input{Workload: w, ControllerName: batchv1.JobControllerName, ExpectationsSatisfied: true, Now: exampleNow})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w.Namespace, w.Name, *w.Spec.Completions, len(p.Create))
	// Output: default pi 2 2
}

// TestCustomKindKeys: an owner kind with keys of its own puts them, and no
// batch.kubernetes.io key, on the pods it creates; the plan reads the index and the
// failure count back from them.
func TestCustomKindKeys(t *testing.T) {
	kind := trainingKind
	kind.KeyPrefix = "ml.example.com/trainingjob-"
	require.NoError(t, kind.Validate())
	w := trainingWorkload()
	w.Spec.Template.Spec.Subdomain = "resnet-workers"
	in := trainingInput(w)
	in.Owner = kind
	p, err := plan.Compute(in)
	require.NoError(t, err)
	require.Len(t, p.Create, 3, "plan:\n%s", p)
	var pods []*corev1.Pod
	for i, c := range p.Create {
		pod := c.Pod.DeepCopy()
		want := fmt.Sprint(i)
		assert.Equal(t, want, pod.Annotations["ml.example.com/trainingjob-completion-index"])
		assert.Equal(t, want, pod.Labels["ml.example.com/trainingjob-completion-index"])
		for k := range pod.Annotations {
			assert.NotContains(t, k, "batch.kubernetes.io", "annotation of pod %d", i)
		}
		for k := range pod.Labels {
			assert.NotContains(t, k, "batch.kubernetes.io", "label of pod %d", i)
		}
		assert.Equal(t, "metadata.labels['ml.example.com/trainingjob-completion-index']", pod.Spec.Containers[0].Env[0].ValueFrom.FieldRef.FieldPath)
		assert.Equal(t, fmt.Sprintf("resnet-%d", i), pod.Spec.Hostname)
		assert.Equal(t, "resnet-workers", pod.Spec.Subdomain, "the template's subdomain")
		pod.UID = types.UID(pod.Name)
		pod.CreationTimestamp = metav1.NewTime(exampleNow.Add(-time.Minute))
		pod.Status.Phase = corev1.PodRunning
		pods = append(pods, pod)
	}
	sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: map[string]string{kind.IndexKey(): "1"}})
	require.NoError(t, err)
	var selected []string
	for _, pod := range pods {
		if sel.Matches(labels.Set(pod.Labels)) {
			selected = append(selected, pod.Name)
		}
	}
	assert.Equal(t, []string{pods[1].Name}, selected, "the index label selects the pod of index 1")

	in.Pods = pods
	p, err = plan.Compute(in)
	require.NoError(t, err)
	assert.Empty(t, p.Create, "every index has its pod: plan:\n%s", p)
	assert.Empty(t, p.Delete, "no pod is a stray: plan:\n%s", p)
	assert.Empty(t, p.Warnings)

	pods[0].Status.Phase = corev1.PodFailed
	p, err = plan.Compute(in)
	require.NoError(t, err)
	require.Len(t, p.Create, 1, "the failed index is replaced: plan:\n%s", p)
	repl := p.Create[0].Pod
	assert.Equal(t, 0, p.Create[0].Index)
	assert.Equal(t, "1", repl.Annotations["ml.example.com/trainingjob-index-failure-count"])
	assert.NotContains(t, repl.Annotations, batchv1.JobIndexFailureCountAnnotation)

	// The replacement fails too: its count reaches backoffLimitPerIndex (1), the
	// index fails, read from the kind's own annotation.
	failedAgain := repl.DeepCopy()
	failedAgain.UID = "again"
	failedAgain.Status.Phase = corev1.PodFailed
	in.Pods = append(pods[1:], failedAgain)
	p, err = plan.Compute(in)
	require.NoError(t, err)
	require.NotNil(t, p.Status.FailedIndexes)
	assert.Equal(t, "0", *p.Status.FailedIndexes, "plan:\n%s", p)
}

// An owner's orphan facts: an unset managedBy is the built-in controller's for a
// batch/v1 Job and any controller's ("") for another kind; finished by its
// conditions.
func TestWorkloadOrphanOwner(t *testing.T) {
	custom := owner.Kind{Group: "example.com", Version: "v1", Kind: "Run", Finalizer: "example.com/tracking"}
	done := batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}
	tests := []struct {
		name          string
		kind          owner.Kind
		managedBy     *string
		status        batchv1.JobStatus
		wantManagedBy string
		wantFinished  bool
	}{
		{name: "a Job, unset", kind: owner.BatchJob, wantManagedBy: batchv1.JobControllerName},
		{name: "a Job, set", kind: owner.BatchJob, managedBy: ptr.To("me"), wantManagedBy: "me"},
		{name: "another kind, unset", kind: custom, wantManagedBy: ""},
		{name: "another kind, set, finished", kind: custom, managedBy: ptr.To("me"), status: done, wantManagedBy: "me", wantFinished: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &plan.Workload{UID: "u", Spec: plan.Spec{ManagedBy: tc.managedBy}, Status: tc.status}
			got := w.OrphanOwner(tc.kind)
			if got.UID != "u" || got.ManagedBy != tc.wantManagedBy || got.Finished != tc.wantFinished || got.Gone {
				t.Errorf("OrphanOwner(%v) = %+v, want managedBy %q finished %v", tc.kind, got, tc.wantManagedBy, tc.wantFinished)
			}
		})
	}
}
