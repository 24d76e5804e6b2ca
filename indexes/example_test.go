package indexes_test

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/owner"
)

func ExamplePodIndex() {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:   "default",
		Name:        "job-3-abcde",
		Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "3"},
	}}
	fmt.Println(indexes.PodIndex(owner.BatchJob, pod))

	pod.Annotations[batchv1.JobCompletionIndexAnnotation] = "three"
	fmt.Println(indexes.PodIndex(owner.BatchJob, pod))
	// Output:
	// 3 <nil>
	// -1 pod default/job-3-abcde: annotation batch.kubernetes.io/job-completion-index="three": not a non-negative 32-bit integer
}

func indexedPod(name, index string, ready bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if index != "" {
		p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: index}
	}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	return p
}

func ExampleStrays() {
	active := []*corev1.Pod{
		indexedPod("a", "0", true),
		indexedPod("b", "1", true),
		indexedPod("c", "1", false), // a duplicate that is not ready yet
		indexedPod("d", "5", true),  // the job was scaled down to 3 completions
		indexedPod("e", "", true),   // no index at all
	}
	res := indexes.Strays(owner.BatchJob, active, 3)
	for _, s := range res.Remove {
		fmt.Println("remove", s.Pod.Name, s.Reason)
	}
	fmt.Println("active indexes:", res.Active)
	// Output:
	// remove e NoIndex
	// remove c Duplicate
	// remove d OutOfRange
	// active indexes: 0,1
}

func ExampleShapePod() {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "train"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker"}}},
		}},
	}
	// Always shape a copy: the template belongs to the Job from the informer.
	pod := &corev1.Pod{
		ObjectMeta: *job.Spec.Template.ObjectMeta.DeepCopy(),
		Spec:       *job.Spec.Template.Spec.DeepCopy(),
	}
	changed := indexes.ShapePod(owner.BatchJob, pod, job.Name, 2)
	fmt.Println(changed, pod.GenerateName, pod.Spec.Hostname)
	fmt.Println(pod.Annotations[batchv1.JobCompletionIndexAnnotation], pod.Labels[batchv1.JobCompletionIndexAnnotation])
	env := pod.Spec.Containers[0].Env[0]
	fmt.Println(env.Name, env.ValueFrom.FieldRef.FieldPath)
	fmt.Println(len(job.Spec.Template.Spec.Containers[0].Env))
	// Output:
	// true train-2- train-2
	// 2 2
	// JOB_COMPLETION_INDEX metadata.labels['batch.kubernetes.io/job-completion-index']
	// 0
}

func ExampleReplacementFailureCount() {
	failed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		batchv1.JobIndexFailureCountAnnotation: "1",
	}}}
	// The replacement of a failure that counts (not matched by an Ignore rule).
	next, _ := indexes.ReplacementFailureCount(owner.BatchJob, failed, false)

	replacement := &corev1.Pod{}
	indexes.SetFailureCountAnnotations(owner.BatchJob, replacement, next)
	fmt.Println(next, replacement.Annotations)
	fmt.Println("a failure of the replacement fails the index at backoffLimitPerIndex=2:", next.Exhausts(2))
	// Output:
	// {2 0} map[batch.kubernetes.io/job-index-failure-count:2]
	// a failure of the replacement fails the index at backoffLimitPerIndex=2: true
}

// A pod name decided by the controller: the same creation decision gives the same
// name, so a create that timed out can be sent again without risking a second pod.
func ExamplePodName() {
	first := indexes.PodName("train", "0b8f5c1e", 3, "attempt-1")
	again := indexes.PodName("train", "0b8f5c1e", 3, "attempt-1")
	next := indexes.PodName("train", "0b8f5c1e", 3, "attempt-2")
	fmt.Println(first[:len("train-3-")], len(first), first == again, first == next)
	// Output: train-3- 13 true false
}

// A name held by a pod that is not the Job's (one it released) is given up for the
// next of the index's sequence, which anyone who knows the taken name derives alike.
func ExampleNextPodName() {
	taken := indexes.PodName("train", "0b8f5c1e", 3, "0")
	next := indexes.NextPodName("train", "0b8f5c1e", 3, taken)
	fmt.Println(next[:len("train-3-")], next != taken, next == indexes.NextPodName("train", "0b8f5c1e", 3, taken))
	// Output: train-3- true true
}

// An owner of another kind with keys of its own domain: its pods carry no
// batch.kubernetes.io key, and its index is read back from its own annotation.
func ExampleShapePod_customKind() {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob",
		Finalizer: "ml.example.com/worker-tracking", KeyPrefix: "ml.example.com/trainingjob-"}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Subdomain:  "resnet-workers", // a headless Service: resnet-1.resnet-workers reaches index 1
		Containers: []corev1.Container{{Name: "worker"}},
	}}
	indexes.ShapePod(kind, pod, "resnet", 1)
	fmt.Println(pod.Annotations, pod.Labels)
	fmt.Println(pod.Spec.Hostname, pod.Spec.Subdomain)
	fmt.Println(pod.Spec.Containers[0].Env[0].ValueFrom.FieldRef.FieldPath)
	ix, err := indexes.PodIndex(kind, pod)
	fmt.Println(ix, err)
	_, err = indexes.PodIndex(owner.BatchJob, pod)
	fmt.Println(err)
	// Output:
	// map[ml.example.com/trainingjob-completion-index:1] map[ml.example.com/trainingjob-completion-index:1]
	// resnet-1 resnet-workers
	// metadata.labels['ml.example.com/trainingjob-completion-index']
	// 1 <nil>
	// pod /: annotation batch.kubernetes.io/job-completion-index="": missing
}
