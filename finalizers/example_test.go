package finalizers_test

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plain/ledger"
)

func examplePod(name string, fins ...string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: name, UID: types.UID("uid-" + name), Finalizers: fins,
	}}
}

func Example_hasFinalizer() {
	pod := examplePod("pi-x7k2p", "example.com/keep", finalizers.Name)
	fmt.Println(owner.BatchJob.HasFinalizer(pod))
	fmt.Println(owner.BatchJob.HasFinalizer(examplePod("pi-q9w4t")))
	// Output:
	// true
	// false
}

func ExampleEnsureOnPod() {
	// A pod the controller is about to create or adopt: its own copy, never the
	// informer's object.
	pod := examplePod("pi-x7k2p", "example.com/keep")
	fmt.Println(finalizers.EnsureOnPod(&pod.ObjectMeta, finalizers.Name))
	fmt.Println(finalizers.EnsureOnPod(&pod.ObjectMeta, finalizers.Name)) // idempotent
	fmt.Println(pod.Finalizers)
	// Output:
	// true
	// false
	// [example.com/keep batch.kubernetes.io/job-tracking]
}

func ExampleRemovalPatch() {
	pod := examplePod("pi-x7k2p", finalizers.Name)
	if owner.BatchJob.HasFinalizer(pod) {
		p := finalizers.RemovalPatch(pod, finalizers.Name)
		// With client-go:
		// client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, p.Type, p.Data, metav1.PatchOptions{})
		fmt.Println(p.Type)
		fmt.Println(string(p.Data))
	}
	// Output:
	// application/strategic-merge-patch+json
	// {"metadata":{"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"],"uid":"uid-pi-x7k2p"}}
}

func ExampleRecord() {
	status := batchv1.JobStatus{
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Failed: []types.UID{"uid-b"}},
	}
	finished := []finalizers.FinishedPod{
		{Pod: examplePod("a", finalizers.Name), Outcome: ledger.Succeeded},
		{Pod: examplePod("b", finalizers.Name), Outcome: ledger.Failed},     // recorded by an earlier sync
		{Pod: examplePod("c", finalizers.Name), Outcome: ledger.NotCounted}, // matched an Ignore rule
		{Pod: examplePod("d", finalizers.Name), Outcome: ledger.Failed},     // removal already in flight
	}
	pending := sets.New[types.UID]("uid-d")

	r, err := finalizers.Record(finalizers.Name, status.UncountedTerminatedPods, finished, pending, 0)
	if err != nil {
		fmt.Println("bad input:", err)
	}
	fmt.Println("succeeded:", r.Uncounted.Succeeded, "failed:", r.Uncounted.Failed)
	fmt.Println("write status first:", r.Changed)
	for _, p := range r.RemoveFinalizer {
		fmt.Println("then remove the finalizer of", p.Name)
	}
	// Output:
	// succeeded: [uid-a] failed: [uid-b]
	// write status first: true
	// then remove the finalizer of a
	// then remove the finalizer of b
	// then remove the finalizer of c
}

func ExampleSettle() {
	status := batchv1.JobStatus{
		Succeeded: 10,
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{
			Succeeded: []types.UID{"uid-a", "uid-gone"},
			Failed:    []types.UID{"uid-b"},
		},
	}
	pods := []*corev1.Pod{
		examplePod("a"),                  // finalizer removed
		examplePod("b", finalizers.Name), // removal failed: still carries it
	}
	s, err := finalizers.Settle(finalizers.Name, status.UncountedTerminatedPods, pods, nil)
	if err != nil {
		fmt.Println("bad input:", err)
	}
	s.ApplyTo(&status)
	fmt.Println("counted now:", s.SucceededUIDs, s.FailedUIDs)
	fmt.Println("succeeded:", status.Succeeded, "failed:", status.Failed)
	fmt.Println("still uncounted:", status.UncountedTerminatedPods.Succeeded, status.UncountedTerminatedPods.Failed)
	// Output:
	// counted now: [uid-a uid-gone] []
	// succeeded: 12 failed: 0
	// still uncounted: [] [uid-b]
}

func ExampleDecideOrphan() {
	pod := examplePod("pi-x7k2p", finalizers.Name)
	pod.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "batch/v1", Kind: "Job", Name: "pi", UID: "uid-job-pi", Controller: ptr.To(true),
	}}
	const me = "example.com/batch-operator"

	// The Job was deleted (the lookup by name found nothing).
	fmt.Printf("%+v\n", finalizers.DecideOrphan(owner.BatchJob, pod, nil, me))

	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "uid-job-pi"}}
	job.Spec.ManagedBy = ptr.To(me)
	fmt.Printf("%+v\n", finalizers.DecideOrphan(owner.BatchJob, pod, finalizers.JobOwner(job), me))

	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	fmt.Printf("%+v\n", finalizers.DecideOrphan(owner.BatchJob, pod, finalizers.JobOwner(job), me))
	// Output:
	// {Remove:true Reason:controlling Job no longer exists Message:controlling Job no longer exists}
	// {Remove:false Reason:controlling Job is live and unfinished Message:controlling Job is live and unfinished}
	// {Remove:true Reason:controlling Job has finished Message:controlling Job has finished}
}
