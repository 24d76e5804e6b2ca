package clientgo

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/jobkit/jobkit/reconcile"
)

// StripManagedFields is an informer transform (informers.WithTransform, or
// SharedIndexInformer.SetTransform) that drops metadata.managedFields from every
// object before it is cached. Nothing in the controller reads them, and on a pod
// they are a large part of its size: at 5,000 pods they are megabytes of heap and
// of garbage for every update. A write of an object read so (the Job status
// update) sends no managedFields, which the API server takes as "unchanged".
// Objects without metadata (a tombstone) pass through as they are. It modifies
// obj, which the informer has just decoded and nothing else holds yet.
func StripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// TrimPods is the informer transform of the controller's factory: a pod keeps only
// what the Reconciler reads (reconcile.TrimPod: metadata without managedFields, the
// containers' names and restart policies, the node, the phase, conditions and
// container states), every other object goes through StripManagedFields. At 20,000
// pods the cached pods were 77 of the controller's 85 MB of live heap, most of it
// the spec (images, commands, environment, volumes, tolerations) that no decision
// reads. Every pod write is a patch of its own fields or a delete, so no trimmed
// pod is ever sent back. Share the factory only with code that reads no more of a
// pod than that. Like StripManagedFields it modifies obj, which the informer has
// just decoded.
func TrimPods(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		return reconcile.TrimPod(pod), nil
	}
	return StripManagedFields(obj)
}
