package owner_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/owner"
)

// An operator whose TrainingJob owns its worker pods: the reference its pods get,
// and whether a pod from the cache is one of them.
func ExampleKind() {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	if err := kind.Validate(); err != nil {
		panic(err)
	}
	run := &metav1.ObjectMeta{Name: "resnet", UID: "6f1c"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:            "resnet-0-x7k2q",
		OwnerReferences: []metav1.OwnerReference{kind.NewControllerRef(run)},
		Finalizers:      []string{kind.Finalizer},
	}}
	ref := kind.ControllerOf(pod)
	fmt.Println(kind, ref.APIVersion, ref.Name)
	fmt.Println("ours:", kind.IsControlledBy(pod, "6f1c"), "tracked:", kind.HasFinalizer(pod))
	fmt.Println("a batch/v1 Job's:", owner.BatchJob.ControllerOf(pod) != nil)
	// Output:
	// TrainingJob.ml.example.com ml.example.com/v1alpha1 resnet
	// ours: true tracked: true
	// a batch/v1 Job's: false
}

// The keys of the label and annotations an owner's pods get: the batch/v1 ones by
// default, the owner's own with a KeyPrefix.
func ExampleKind_IndexKey() {
	fmt.Println(owner.BatchJob.IndexKey(), owner.BatchJob.FailureCountKey())
	kind := owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob",
		Finalizer: "ml.example.com/worker-tracking", KeyPrefix: "ml.example.com/trainingjob-"}
	fmt.Println(kind.IndexKey(), kind.FailureCountKey(), kind.IgnoredFailureCountKey())
	// Output:
	// batch.kubernetes.io/job-completion-index batch.kubernetes.io/job-index-failure-count
	// ml.example.com/trainingjob-completion-index ml.example.com/trainingjob-index-failure-count ml.example.com/trainingjob-index-ignored-failure-count
}
