package clientgo_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/jobkit/jobkit/examples/clientgo"
)

func TestStripManagedFields(t *testing.T) {
	fields := []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
	for _, tc := range []struct {
		name string
		obj  any
		meta func(any) *metav1.ObjectMeta
	}{
		{"pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}, ManagedFields: fields}},
			func(o any) *metav1.ObjectMeta { return &o.(*corev1.Pod).ObjectMeta }},
		{"job", &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Labels: map[string]string{"a": "b"}, ManagedFields: fields}},
			func(o any) *metav1.ObjectMeta { return &o.(*batchv1.Job).ObjectMeta }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := clientgo.StripManagedFields(tc.obj)
			require.NoError(t, err)
			m := tc.meta(out)
			assert.Nil(t, m.ManagedFields, "managedFields dropped")
			assert.Equal(t, map[string]string{"a": "b"}, m.Labels, "the rest kept")
		})
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/p"}
	out, err := clientgo.StripManagedFields(tomb)
	require.NoError(t, err)
	assert.Equal(t, tomb, out, "a tombstone passes through")
}

func TestTrimPods(t *testing.T) {
	fields := []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}, ManagedFields: fields},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "main", Image: "busybox", Env: []corev1.EnvVar{{Name: "X", Value: "1"}}}},
			Volumes: []corev1.Volume{{Name: "v"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"},
	}
	out, err := clientgo.TrimPods(pod)
	require.NoError(t, err)
	got := out.(*corev1.Pod)
	assert.Equal(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "main"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}, got, "a pod keeps what the Reconciler reads")

	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", ManagedFields: fields}, Spec: batchv1.JobSpec{Parallelism: new(int32)}}
	out, err = clientgo.TrimPods(job)
	require.NoError(t, err)
	assert.Nil(t, out.(*batchv1.Job).ManagedFields, "another kind loses its managedFields")
	assert.NotNil(t, out.(*batchv1.Job).Spec.Parallelism, "and keeps its spec")

	tomb := cache.DeletedFinalStateUnknown{Key: "ns/p"}
	out, err = clientgo.TrimPods(tomb)
	require.NoError(t, err)
	assert.Equal(t, tomb, out, "a tombstone passes through")
}
