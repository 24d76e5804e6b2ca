package controller_test

import (
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The controller's suspend and resume patches carry the child's UID
// (metadata.uid in the merge patch) and its deletions a UID precondition: the
// API server refuses both on a newer Job of the same name (the patch as
// Invalid on the immutable metadata.uid, the deletion as a Conflict), the rule
// that keeps a stale cache from touching a child's successor.
func TestUIDGuardsPatchAndDelete(t *testing.T) {
	t.Parallel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "js-uid-"}}
	if err := k8s.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "child"},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i"}},
		}}},
	}
	if err := k8s.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	stale := types.UID("uid-of-an-older-job")
	patch := fmt.Appendf(nil, `{"metadata":{"uid":%q},"spec":{"suspend":false}}`, stale)
	err := k8s.Patch(t.Context(), job.DeepCopy(), client.RawPatch(types.MergePatchType, patch))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.uid") {
		t.Errorf("patch with another UID: error = %v, want Invalid on metadata.uid", err)
	}
	err = k8s.Delete(t.Context(), job.DeepCopy(), client.Preconditions{UID: &stale})
	if !apierrors.IsConflict(err) {
		t.Errorf("delete with another UID: error = %v, want a Conflict", err)
	}
	got := &batchv1.Job{}
	if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(job), got); err != nil || !ptr.Deref(got.Spec.Suspend, false) || got.DeletionTimestamp != nil {
		t.Errorf("the Job after both = %v (suspend %v, deleting %v), want it untouched", err, got.Spec.Suspend, got.DeletionTimestamp)
	}
	patch = fmt.Appendf(nil, `{"metadata":{"uid":%q},"spec":{"suspend":false}}`, job.UID)
	if err := k8s.Patch(t.Context(), job.DeepCopy(), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Errorf("patch with the Job's own UID: %v", err)
	}
}
