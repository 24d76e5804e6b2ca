package controllerruntime

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// The child-Jobs client's calls of elastic groups, claims and budgets:
// ScaleJob patches parallelism and completions with the child's UID in the
// patch; CreateClaim and CreateDisruptionBudget create, and a second
// creation is AlreadyExists.
func TestChildJobsClientElastic(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g-w-0", UID: "w0-uid"},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2), Completions: ptr.To[int32](2)}}
	var patches []string
	ctl, c, _ := newGroupController(t, now, interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			data, err := p.Data(obj)
			if err != nil {
				return err
			}
			patches = append(patches, string(data))
			return cl.Patch(ctx, obj, p, opts...)
		},
	}, job)
	a := childJobsAPI[*testGroup]{c: ctl.o.client, typ: groupType}

	resized := job.DeepCopy()
	resized.Spec.Parallelism, resized.Spec.Completions = ptr.To[int32](4), ptr.To[int32](4)
	if err := a.ScaleJob(t.Context(), resized); err != nil {
		t.Fatalf("ScaleJob() = %v", err)
	}
	if want := `{"metadata":{"uid":"w0-uid"},"spec":{"completions":4,"parallelism":4}}`; len(patches) != 1 || patches[0] != want {
		t.Errorf("patches = %q, want %q", patches, want)
	}
	got := &batchv1.Job{}
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: "ns", Name: "g-w-0"}, got); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(got.Spec.Parallelism, 0) != 4 || ptr.Deref(got.Spec.Completions, 0) != 4 {
		t.Errorf("Job spec = %d/%d, want 4/4", ptr.Deref(got.Spec.Parallelism, 0), ptr.Deref(got.Spec.Completions, 0))
	}

	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-g"}}
	if err := a.CreateClaim(t.Context(), pvc.DeepCopy()); err != nil {
		t.Fatalf("CreateClaim() = %v", err)
	}
	if err := a.CreateClaim(t.Context(), pvc.DeepCopy()); !apierrors.IsAlreadyExists(err) {
		t.Errorf("CreateClaim() again = %v, want AlreadyExists", err)
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))}}
	if err := a.CreateDisruptionBudget(t.Context(), pdb.DeepCopy()); err != nil {
		t.Fatalf("CreateDisruptionBudget() = %v", err)
	}
	if err := a.CreateDisruptionBudget(t.Context(), pdb.DeepCopy()); !apierrors.IsAlreadyExists(err) {
		t.Errorf("CreateDisruptionBudget() again = %v, want AlreadyExists", err)
	}
}
