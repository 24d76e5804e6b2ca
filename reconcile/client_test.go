package reconcile_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
)

// applySMP applies a strategic merge patch to pod as the API server would.
func applySMP(t *testing.T, pod *corev1.Pod, p finalizers.Patch) *corev1.Pod {
	t.Helper()
	require.Equal(t, types.StrategicMergePatchType, p.Type)
	orig, err := json.Marshal(pod)
	require.NoError(t, err)
	out, err := strategicpatch.StrategicMergePatch(orig, p.Data, corev1.Pod{})
	require.NoError(t, err, "patch %s", p.Data)
	var got corev1.Pod
	require.NoError(t, json.Unmarshal(out, &got))
	return &got
}

func TestAdoptPatch(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pi", UID: "job-uid"}}
	jobRef := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "pi", UID: "job-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm-uid"}
	tests := []struct {
		name           string
		pod            *corev1.Pod
		wantOwners     []metav1.OwnerReference
		wantFinalizers []string
	}{
		{
			name:           "bare orphan",
			pod:            &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "pod-uid"}},
			wantOwners:     []metav1.OwnerReference{jobRef},
			wantFinalizers: []string{finalizers.Name},
		},
		{
			name:           "keeps other owners and finalizers",
			pod:            &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "pod-uid", OwnerReferences: []metav1.OwnerReference{other}, Finalizers: []string{"example.com/keep"}}},
			wantOwners:     []metav1.OwnerReference{other, jobRef},
			wantFinalizers: []string{"example.com/keep", finalizers.Name},
		},
		{
			name:           "finalizer already there is not duplicated",
			pod:            &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "pod-uid", Finalizers: []string{finalizers.Name}}},
			wantOwners:     []metav1.OwnerReference{jobRef},
			wantFinalizers: []string{finalizers.Name},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := applySMP(t, tc.pod, reconcile.AdoptPatch(owner.BatchJob, job, tc.pod))
			assert.ElementsMatch(t, tc.wantOwners, got.OwnerReferences, "owner references")
			assert.ElementsMatch(t, tc.wantFinalizers, got.Finalizers)
			assert.Equal(t, tc.pod.UID, got.UID, "the UID precondition matches")
		})
	}
	// A pod with another UID: the patch would change metadata.uid, which the API
	// server rejects as immutable.
	stale := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "new-uid"}}
	got := applySMP(t, stale, reconcile.AdoptPatch(owner.BatchJob, job, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "old-uid"}}))
	assert.Equal(t, types.UID("old-uid"), got.UID, "the patch carries the UID it was built for")
}

func TestReleasePatch(t *testing.T) {
	jobRef := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "pi", UID: "job-uid", Controller: ptr.To(true)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm-uid"}
	tests := []struct {
		name           string
		pod            *corev1.Pod
		jobUID         types.UID
		wantOwners     []metav1.OwnerReference
		wantFinalizers []string
		wantPatch      string
	}{
		{
			name: "owner reference and tracking finalizer go in one patch, the rest stays",
			pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "pod-uid", ResourceVersion: "42",
				OwnerReferences: []metav1.OwnerReference{other, jobRef}, Finalizers: []string{"example.com/keep", finalizers.Name}}},
			jobUID:         "job-uid",
			wantOwners:     []metav1.OwnerReference{other},
			wantFinalizers: []string{"example.com/keep"},
			wantPatch: `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"job-uid"}],"uid":"pod-uid",` +
				`"$deleteFromPrimitiveList/finalizers":["` + finalizers.Name + `"],"resourceVersion":"42"}}`,
		},
		{
			name:       "a pod without a resourceVersion gets no such precondition",
			pod:        &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "pod-uid", OwnerReferences: []metav1.OwnerReference{jobRef}}},
			jobUID:     "job-uid",
			wantOwners: nil,
			wantPatch:  `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"job-uid"}],"uid":"pod-uid","$deleteFromPrimitiveList/finalizers":["` + finalizers.Name + `"]}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := reconcile.ReleasePatch(owner.BatchJob, tc.jobUID, tc.pod)
			assert.JSONEq(t, tc.wantPatch, string(p.Data), "ReleasePatch(%s, pod)", tc.jobUID)
			got := applySMP(t, tc.pod, p)
			if diff := cmp.Diff(tc.wantOwners, got.OwnerReferences, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("owner references (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFinalizers, got.Finalizers, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsPodGone(t *testing.T) {
	gk := schema.GroupKind{Kind: "Pod"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "NotFound", err: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p"), want: true},
		{name: "Invalid on metadata.uid", err: apierrors.NewInvalid(gk, "p", field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "x", "field is immutable")}), want: true},
		{name: "Invalid elsewhere", err: apierrors.NewInvalid(gk, "p", field.ErrorList{field.Invalid(field.NewPath("metadata", "finalizers"), "x", "no")}), want: false},
		{name: "Conflict", err: apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", assert.AnError), want: false},
		{name: "other", err: assert.AnError, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, reconcile.IsPodGone(tc.err), "IsPodGone(%v)", tc.err)
		})
	}
}
