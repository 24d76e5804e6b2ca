package clientgo

import "k8s.io/apimachinery/pkg/api/meta"

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
