package controllerruntime

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

func TestCacheOptionsTrimPods(t *testing.T) {
	o := cacheOptions()
	var podTransform toolscache.TransformFunc
	for obj, by := range o.ByObject {
		if _, ok := obj.(*corev1.Pod); ok {
			podTransform = by.Transform
		}
	}
	if podTransform == nil || o.DefaultTransform == nil {
		t.Fatalf("cache options without a pod transform and a default one: %+v", o)
	}
	fields := []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Finalizers: []string{batchv1.JobTrackingFinalizer}, ManagedFields: fields},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "main", Image: "busybox"}}, Volumes: []corev1.Volume{{Name: "v"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodFailed, PodIP: "10.0.0.1"},
	}
	out, err := podTransform(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.ManagedFields != nil || got.Spec.Volumes != nil || got.Spec.Containers[0].Image != "" || got.Status.PodIP != "" {
		t.Errorf("the pod transform kept what no decision reads: %+v", got)
	}
	if got.Name != "p" || len(got.Finalizers) != 1 || got.Spec.NodeName != "n1" || got.Spec.Containers[0].Name != "main" || got.Status.Phase != corev1.PodFailed {
		t.Errorf("the pod transform dropped what the decisions read: %+v", got)
	}
	tomb := toolscache.DeletedFinalStateUnknown{Key: "ns/p"}
	if out, err := podTransform(tomb); err != nil || out != tomb {
		t.Errorf("a tombstone = %v, %v; want it as it was", out, err)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", ManagedFields: fields}, Spec: batchv1.JobSpec{Parallelism: new(int32)}}
	out, err = o.DefaultTransform(job)
	if err != nil || out.(*batchv1.Job).ManagedFields != nil || out.(*batchv1.Job).Spec.Parallelism == nil {
		t.Errorf("a Job = %+v, %v; want it whole without managedFields", out, err)
	}
}
