package explain_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

// A Job with two completions, one pod running: the controller creates the second.
const exampleInput = `apiVersion: batch/v1
kind: Job
metadata: {name: hello, namespace: default, uid: "1"}
spec:
  completions: 2
  parallelism: 2
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: "1"}}
  template:
    metadata: {labels: {batch.kubernetes.io/controller-uid: "1"}}
    spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}
status: {active: 1, ready: 0, terminating: 0, startTime: "2026-03-01T10:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata:
  name: hello-a
  namespace: default
  uid: "2"
  labels: {batch.kubernetes.io/controller-uid: "1"}
  finalizers: [batch.kubernetes.io/job-tracking]
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: hello, uid: "1", controller: true}]
status: {phase: Running}
`

func ExampleExplain() {
	var objs explain.Objects
	if err := explain.ReadObjects("example.yaml", strings.NewReader(exampleInput), &objs); err != nil {
		fmt.Println(err)
		return
	}
	job, err := objs.Pick("", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := explain.Explain(plan.JobWorkload(job), objs.Pods, explain.Options{Now: time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = r.Text(os.Stdout)
	// Output:
	// Job default/hello (NonIndexed, completions 2, parallelism 2)
	// planned as controller "kubernetes.io/job-controller" (spec.managedBy unset) at 2026-03-01T10:01:00Z
	//
	// Pods (1):
	//   active (1):
	//     hello-a
	//
	// Decisions (in execution order):
	//   create a pod: too few active pods
	//
	// Status changes:
	//   status.active: 1 -> 2
	//
	// Next sync: on the next change of the Job or its pods
}

func ExampleParseAssumption() {
	a, err := explain.ParseAssumption("index=3:fail:exit=42")
	fmt.Println(a.Selector, a.N, a.Outcome, a.Exit, err)
	_, err = explain.ParseAssumption("index=3:explode")
	fmt.Println(err)
	// Output:
	// index 3 fail 42 <nil>
	// bad --assume "index=3:explode": unknown outcome "explode" (want succeed, fail, ready or delete)
}

func ExampleSteps() {
	var objs explain.Objects
	if err := explain.ReadObjects("example.yaml", strings.NewReader(exampleInput), &objs); err != nil {
		fmt.Println(err)
		return
	}
	job, _ := objs.Pick("", "hello")
	steps, err := explain.Steps(context.Background(), plan.JobWorkload(job), objs.Pods,
		explain.Options{Now: time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)},
		explain.StepOptions{Steps: 10, Kubelet: explain.KubeletSucceed})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = explain.WriteSteps(os.Stdout, steps)
	// Output:
	// step 1 at 2026-03-01T10:01:00Z:
	//   UpdateJobStatus hello: active=2 ready=0 terminating=0 succeeded=0 failed=0
	//   CreatePod hello-rk5qp
	//   after the sync and a kubelet step: status active=2 ready=0 terminating=0 succeeded=0 failed=0; pods Running=1 Succeeded=1
	// step 2 at 2026-03-01T10:01:10Z:
	//   UpdateJobStatus hello: active=1 ready=1 terminating=0 succeeded=0 failed=0 uncounted=1
	//   PatchPod hello-a: remove the tracking finalizer
	//   UpdateJobStatus hello: active=1 ready=1 terminating=0 succeeded=1 failed=0
	//   after the sync and a kubelet step: status active=1 ready=1 terminating=0 succeeded=1 failed=0; pods Succeeded=2
	// step 3 at 2026-03-01T10:01:20Z:
	//   UpdateJobStatus hello: active=0 ready=0 terminating=0 succeeded=1 failed=0 uncounted=1 conditions=SuccessCriteriaMet
	//   PatchPod hello-rk5qp: remove the tracking finalizer
	//   UpdateJobStatus hello: active=0 ready=0 terminating=0 succeeded=2 failed=0 conditions=SuccessCriteriaMet,Complete
	//   after the sync and a kubelet step: status active=0 ready=0 terminating=0 succeeded=2 failed=0 conditions=SuccessCriteriaMet,Complete; pods Succeeded=2
	//   finished: Complete (CompletionsReached)
}

func ExampleControllerFor() {
	job := &batchv1.Job{}
	fmt.Println(explain.ControllerFor(job))
	job.Spec.ManagedBy = ptr.To("example.com/batch")
	fmt.Println(explain.ControllerFor(job))
	// Output:
	// kubernetes.io/job-controller
	// example.com/batch
}

// A custom resource whose spec names its fields otherwise than a Job (Workers for
// completions) is explained through its controller's own conversion onto a
// plan.Workload, with its kind and tracking finalizer as Options.Owner.
func ExampleExplain_ownerOfAnotherKind() {
	type trainingSpec struct{ Workers int32 }
	type trainingJob struct {
		metav1.ObjectMeta
		Spec trainingSpec
	}
	kind := owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	// The conversion the TrainingJob controller uses.
	toWorkload := func(t *trainingJob) plan.Workload {
		return plan.Workload{
			Namespace: t.Namespace, Name: t.Name, UID: t.UID, Deleting: t.DeletionTimestamp != nil,
			Spec: plan.Spec{
				Completions:    ptr.To(t.Spec.Workers),
				Parallelism:    ptr.To(t.Spec.Workers),
				CompletionMode: ptr.To(batchv1.IndexedCompletion),
				ManagedBy:      ptr.To("ml.example.com/trainer"),
				Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "worker", Image: "trainer"}}}},
			},
			Status: batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0),
				StartTime: &metav1.Time{Time: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}},
		}
	}
	run := &trainingJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "resnet", UID: "7"}, Spec: trainingSpec{Workers: 2}}
	worker := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ml", Name: "resnet-0-x", UID: "8",
		Annotations:     map[string]string{batchv1.JobCompletionIndexAnnotation: "0"},
		OwnerReferences: []metav1.OwnerReference{kind.NewControllerRef(run)},
		Finalizers:      []string{kind.Finalizer},
	}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}

	w := toWorkload(run)
	r, err := explain.Explain(&w, []*corev1.Pod{worker},
		explain.Options{Owner: kind, Now: time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = r.Text(os.Stdout)
	// Output:
	// TrainingJob ml/resnet (Indexed, completions 2, parallelism 2)
	// owner kind ml.example.com/v1alpha1 TrainingJob, pods tracked by finalizer ml.example.com/worker-tracking
	// planned as controller "ml.example.com/trainer" (spec.managedBy ml.example.com/trainer) at 2026-03-01T10:01:00Z
	//
	// Pods (1):
	//   active (1):
	//     resnet-0-x (index 0)
	//
	// Decisions (in execution order):
	//   create a pod for index 1: index pending
	//
	// Status changes:
	//   status.active: 1 -> 2
	//
	// Next sync: on the next change of the TrainingJob or its pods
}

// An owner of another kind is stepped as an object of that kind on the in-memory
// cluster: the pods it creates carry the kind's controller reference and
// finalizer, and its status writes name the kind.
func ExampleSteps_ownerOfAnotherKind() {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	w := plan.Workload{
		Namespace: "ml", Name: "resnet", UID: "7",
		Spec: plan.Spec{
			Completions:    ptr.To[int32](2),
			Parallelism:    ptr.To[int32](2),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			ManagedBy:      ptr.To("ml.example.com/trainer"),
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "worker", Image: "trainer"}}}},
		},
		Status: batchv1.JobStatus{Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0)},
	}
	steps, err := explain.Steps(context.Background(), &w, nil,
		explain.Options{Owner: kind, Now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)},
		explain.StepOptions{Steps: 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = explain.WriteSteps(os.Stdout, steps)
	// Output:
	// step 1 at 2026-03-01T10:00:00Z:
	//   UpdateStatus TrainingJob resnet: active=2 ready=0 terminating=0 succeeded=0 failed=0
	//   CreatePod resnet-0-p2rxn (index 0)
	//   CreatePod resnet-1-qkqvc (index 1)
	//   after the sync and a kubelet step: status active=2 ready=0 terminating=0 succeeded=0 failed=0; pods Running=2
	// step 2 at 2026-03-01T10:00:10Z:
	//   UpdateStatus TrainingJob resnet: active=2 ready=2 terminating=0 succeeded=0 failed=0
	//   after the sync and a kubelet step: status active=2 ready=2 terminating=0 succeeded=0 failed=0; pods Succeeded=2
	// step 3 at 2026-03-01T10:00:20Z:
	//   UpdateStatus TrainingJob resnet: active=0 ready=0 terminating=0 succeeded=2 failed=0 completedIndexes="0,1" conditions=SuccessCriteriaMet
	//   PatchPod resnet-0-p2rxn: remove the tracking finalizer
	//   PatchPod resnet-1-qkqvc: remove the tracking finalizer
	//   UpdateStatus TrainingJob resnet: active=0 ready=0 terminating=0 succeeded=2 failed=0 completedIndexes="0,1" conditions=SuccessCriteriaMet,Complete
	//   after the sync and a kubelet step: status active=0 ready=0 terminating=0 succeeded=2 failed=0 completedIndexes="0,1" conditions=SuccessCriteriaMet,Complete; pods Succeeded=2
	//   finished: Complete (CompletionsReached)
}

// WorkloadOf reads an object by a Job's field names, as `jobkit explain
// --owner-kind` does: a field of the wrong type is an error naming it.
func ExampleWorkloadOf() {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ml.example.com/v1alpha1", "kind": "TrainingJob",
		"metadata": map[string]any{"namespace": "ml", "name": "resnet"},
		"spec":     map[string]any{"completions": int64(4), "parallelism": int64(2), "framework": "pytorch"},
	}}
	w, err := explain.WorkloadOf(obj, nil)
	fmt.Println(w.Name, *w.Spec.Completions, *w.Spec.Parallelism, err)
	obj.Object["spec"] = map[string]any{"completions": "four"}
	_, err = explain.WorkloadOf(obj, nil)
	fmt.Println(err)
	// Output:
	// resnet 4 2 <nil>
	// TrainingJob ml/resnet: bad owner object: spec.completions: want int32, got string ("four")
}

// A custom resource that calls completions workers, read through a mapping: its
// workers become completions, its mode is always Indexed, and its own retry delay
// becomes the owner's backoff.
func ExampleWorkloadOf_mapping() {
	run := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ml.example.com/v1", "kind": "Run",
		"metadata": map[string]any{"name": "resnet", "namespace": "default"},
		"spec":     map[string]any{"workers": int64(8), "retryDelay": "30s"},
	}}
	w, err := explain.WorkloadOf(run, explain.Mapping{
		"spec.completions":    "spec.workers",
		"spec.parallelism":    "spec.parallelism|spec.workers",
		"spec.completionMode": "=Indexed",
		"backoff.base":        "spec.retryDelay",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(*w.Spec.Completions, *w.Spec.Parallelism, *w.Spec.CompletionMode, w.Backoff.Base)

	_, err = explain.WorkloadOf(run, explain.Mapping{"spec.completions": "spec.retryDelay"})
	fmt.Println(err)
	// Output:
	// 8 8 Indexed 30s
	// Run default/resnet: bad owner object: spec.retryDelay (read as spec.completions): want int32, got string ("30s")
}
