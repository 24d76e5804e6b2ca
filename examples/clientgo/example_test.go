package clientgo_test

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/clientgo"
	"github.com/jobkit/jobkit/reconcile"
)

// A Controller wired to client-go's fake clientset: it takes the Job whose managedBy
// names it and creates its pods. Against a cluster, use kubernetes.NewForConfig; see
// cmd/jobkit-clientgo.
func ExampleNew() {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pi", UID: "job-uid"},
		Spec: batchv1.JobSpec{
			ManagedBy:   ptr.To(clientgo.DefaultName),
			Parallelism: ptr.To[int32](2),
			Completions: ptr.To[int32](4),
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "job-uid"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{batchv1.ControllerUidLabel: "job-uid", batchv1.JobNameLabel: "pi"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "pi", Image: "perl"}},
				},
			},
		},
	}
	cs := newFakeClientset(job)
	factory := informers.NewSharedInformerFactory(cs, 0)
	ctrl, err := clientgo.New(cs, factory, reconcile.Config{}, clientgo.Options{}) // Name: clientgo.DefaultName
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- ctrl.Run(ctx, 1) }()

	for range 500 { // until both pods exist
		pods, _ := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if len(pods.Items) == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	fmt.Println("Run:", <-done)
	factory.Shutdown()

	pods, _ := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	for _, p := range pods.Items {
		fmt.Println(p.Name, metav1.IsControlledBy(&p, job), p.Finalizers)
	}
	got, _ := cs.BatchV1().Jobs("default").Get(context.Background(), "pi", metav1.GetOptions{})
	fmt.Println("active:", got.Status.Active, "started:", got.Status.StartTime != nil)
	// Output:
	// Run: <nil>
	// pi-00001 true [batch.kubernetes.io/job-tracking]
	// pi-00002 true [batch.kubernetes.io/job-tracking]
	// active: 2 started: true
}

// NewClient is the reconcile.Client of the controller, usable on its own: here it
// removes the tracking finalizer of a pod, with the pod's UID as a precondition.
func ExampleNewClient() {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "worker", UID: "pod-uid",
		Finalizers: []string{batchv1.JobTrackingFinalizer, "example.com/keep"},
	}}
	client := clientgo.NewClient(newFakeClientset(pod))
	patch := []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"],"uid":"pod-uid"}}`)
	got, err := client.PatchPod(context.Background(), "default", "worker", types.StrategicMergePatchType, patch)
	fmt.Println(got.Finalizers, err)
	// Output:
	// [example.com/keep] <nil>
}
