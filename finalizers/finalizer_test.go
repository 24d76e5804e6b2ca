package finalizers_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
)

const other = "example.com/other"

// newPod returns a pod named name with UID "uid-<name>" carrying the given
// finalizers.
func newPod(name string, fins ...string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:  "ns",
		Name:       name,
		UID:        types.UID("uid-" + name),
		Finalizers: fins,
	}}
}

// tracked returns a pod that carries the tracking finalizer after another one.
func tracked(name string) *corev1.Pod { return newPod(name, other, finalizers.Name) }

func TestHasFinalizer(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{name: "no finalizers", pod: newPod("a"), want: false},
		{name: "other finalizer only", pod: newPod("a", other), want: false},
		{name: "tracking finalizer only", pod: newPod("a", finalizers.Name), want: true},
		{name: "tracking finalizer among others", pod: newPod("a", other, finalizers.Name, "x/y"), want: true},
		{name: "similar name is not it", pod: newPod("a", finalizers.Name+"-x", "batch.kubernetes.io/job"), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := owner.BatchJob.HasFinalizer(tc.pod); got != tc.want {
				t.Errorf("HasFinalizer(%v) = %v, want %v", tc.pod, got, tc.want)
			}
		})
	}
}

func TestEnsureOnPod(t *testing.T) {
	tests := []struct {
		name        string
		finalizers  []string
		wantChanged bool
		want        []string
	}{
		{name: "nil list", finalizers: nil, wantChanged: true, want: []string{finalizers.Name}},
		{name: "other finalizer kept first", finalizers: []string{other}, wantChanged: true, want: []string{other, finalizers.Name}},
		{name: "already there", finalizers: []string{finalizers.Name}, wantChanged: false, want: []string{finalizers.Name}},
		{name: "already there among others", finalizers: []string{other, finalizers.Name, "x/y"}, wantChanged: false, want: []string{other, finalizers.Name, "x/y"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			meta := metav1.ObjectMeta{Finalizers: tc.finalizers}
			changed := finalizers.EnsureOnPod(&meta, finalizers.Name)
			assert.Equal(t, tc.wantChanged, changed, "EnsureOnPod changed")
			if diff := cmp.Diff(tc.want, meta.Finalizers); diff != "" {
				t.Errorf("EnsureOnPod finalizers (-want +got):\n%s", diff)
			}
			again := finalizers.EnsureOnPod(&meta, finalizers.Name)
			assert.False(t, again, "second EnsureOnPod must not change anything")
			if diff := cmp.Diff(tc.want, meta.Finalizers); diff != "" {
				t.Errorf("second EnsureOnPod finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

// A shallow copy of a cached pod shares its Finalizers slice; adding must not write
// into the shared backing array.
func TestEnsureOnPodDoesNotWriteIntoSharedSlice(t *testing.T) {
	backing := make([]string, 1, 4)
	backing[0] = other
	cached := metav1.ObjectMeta{Finalizers: backing}
	own := cached // shallow copy, as `*pod` copies do
	require.True(t, finalizers.EnsureOnPod(&own, finalizers.Name))
	assert.Equal(t, []string{other, finalizers.Name}, own.Finalizers)
	assert.Equal(t, []string{other}, cached.Finalizers)
	assert.Equal(t, "", backing[:2][1], "the cached backing array was written")
}

func TestRemovalPatchBytes(t *testing.T) {
	tests := []struct {
		name     string
		pod      *corev1.Pod
		wantData string
	}{
		{
			name:     "with UID precondition",
			pod:      tracked("a"),
			wantData: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"],"uid":"uid-a"}}`,
		},
		{
			name:     "pod without UID gets the bare patch",
			pod:      &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Finalizers: []string{finalizers.Name}}},
			wantData: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"]}}`,
		},
		{
			name:     "nil pod gets the bare patch",
			pod:      nil,
			wantData: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"]}}`,
		},
		{
			name:     "UID with characters JSON must escape",
			pod:      &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: `a"b\c<`}},
			wantData: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"],"uid":"a\"b\\c\u003c"}}`,
		},
		{
			name:     "typical server UID",
			pod:      &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "0c5b2f8e-3a1d-4b7e-9f10-2d3c4b5a6e7f"}},
			wantData: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"],"uid":"0c5b2f8e-3a1d-4b7e-9f10-2d3c4b5a6e7f"}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := finalizers.RemovalPatch(tc.pod, finalizers.Name)
			assert.Equal(t, types.StrategicMergePatchType, got.Type)
			assert.Equal(t, tc.wantData, string(got.Data))
			assert.True(t, json.Valid(got.Data), "RemovalPatch(%v).Data is not valid JSON: %s", tc.pod, got.Data)
		})
	}
}

func TestRemovalPatchReturnsFreshBytes(t *testing.T) {
	a := finalizers.RemovalPatch(nil, finalizers.Name)
	a.Data[0] = 'X'
	b := finalizers.RemovalPatch(nil, finalizers.Name)
	assert.Equal(t, byte('{'), b.Data[0], "a caller's edit leaked into the next patch")
}

// TestRemovalPatchApplies applies the patch with apimachinery's strategic merge
// patch implementation, as the API server does, to prove that it removes only the
// tracking finalizer and that the UID field acts as a precondition.
func TestRemovalPatchApplies(t *testing.T) {
	tests := []struct {
		name           string
		podUID         types.UID
		patchUID       types.UID
		finalizers     []string
		wantFinalizers []string
		wantUIDChange  bool
	}{
		{
			name:           "between other finalizers",
			podUID:         "u1",
			patchUID:       "u1",
			finalizers:     []string{"a/x", finalizers.Name, "b/y"},
			wantFinalizers: []string{"a/x", "b/y"},
		},
		{
			name:           "only finalizer",
			podUID:         "u1",
			patchUID:       "u1",
			finalizers:     []string{finalizers.Name},
			wantFinalizers: nil,
		},
		{
			name:           "absent: no-op",
			podUID:         "u1",
			patchUID:       "u1",
			finalizers:     []string{"a/x"},
			wantFinalizers: []string{"a/x"},
		},
		{
			name:           "listed twice: all copies go",
			podUID:         "u1",
			patchUID:       "u1",
			finalizers:     []string{finalizers.Name, "a/x", finalizers.Name},
			wantFinalizers: []string{"a/x"},
		},
		{
			// The patched object would carry another UID; metadata.uid is immutable,
			// so the API server rejects the update and the new pod keeps its finalizer.
			name:           "recreated pod: UID precondition trips",
			podUID:         "u2",
			patchUID:       "u1",
			finalizers:     []string{finalizers.Name},
			wantFinalizers: nil,
			wantUIDChange:  true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: tc.podUID, Finalizers: tc.finalizers},
				Status:     corev1.PodStatus{Phase: corev1.PodSucceeded},
			}
			origJSON, err := json.Marshal(&orig)
			require.NoError(t, err)
			patch := finalizers.RemovalPatch(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: tc.patchUID}}, finalizers.Name)

			out, err := strategicpatch.StrategicMergePatch(origJSON, patch.Data, corev1.Pod{})
			require.NoError(t, err, "StrategicMergePatch rejected %s", patch.Data)
			var got corev1.Pod
			require.NoError(t, json.Unmarshal(out, &got))

			if diff := cmp.Diff(tc.wantFinalizers, got.Finalizers, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("finalizers after patch (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantUIDChange, got.UID != orig.UID, "UID after patch = %q, pod UID %q", got.UID, orig.UID)
			// Nothing else moved.
			got.Finalizers, orig.Finalizers = nil, nil
			got.UID, orig.UID = "", ""
			if diff := cmp.Diff(orig, got); diff != "" {
				t.Errorf("patch changed more than finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

// The functions take the finalizer name: another owner kind's finalizer is worked on
// and the batch one left alone; the name is escaped as JSON.
func TestOtherFinalizerName(t *testing.T) {
	const mine = "ml.example.com/worker-tracking"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", Finalizers: []string{finalizers.Name}}}
	assert.False(t, owner.Kind{Finalizer: mine}.HasFinalizer(pod))
	assert.True(t, owner.Kind{Finalizer: finalizers.Name}.HasFinalizer(pod))

	meta := pod.ObjectMeta.DeepCopy()
	require.True(t, finalizers.EnsureOnPod(meta, mine))
	assert.False(t, finalizers.EnsureOnPod(meta, mine), "added once")
	assert.Equal(t, []string{finalizers.Name, mine}, meta.Finalizers)
	assert.Equal(t, []string{finalizers.Name}, pod.Finalizers, "the original slice is not written")

	for _, tc := range []struct{ name, want string }{
		{mine, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["ml.example.com/worker-tracking"],"uid":"u1"}}`},
		{`a.io/"q"`, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a.io/\"q\""],"uid":"u1"}}`},
		{finalizers.Name, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"],"uid":"u1"}}`},
	} {
		got := finalizers.RemovalPatch(pod, tc.name)
		assert.Equal(t, tc.want, string(got.Data), "RemovalPatch(pod, %q)", tc.name)
		assert.Equal(t, types.StrategicMergePatchType, got.Type)
	}
	patched := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", Finalizers: []string{"a/x", mine, finalizers.Name}}}
	before, err := json.Marshal(patched)
	require.NoError(t, err)
	after, err := strategicpatch.StrategicMergePatch(before, finalizers.RemovalPatch(patched, mine).Data, &corev1.Pod{})
	require.NoError(t, err)
	var out corev1.Pod
	require.NoError(t, json.Unmarshal(after, &out))
	assert.Equal(t, []string{"a/x", finalizers.Name}, out.Finalizers, "only the named finalizer goes")
}
