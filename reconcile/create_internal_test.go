package reconcile

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/owner"
)

// The name choice after a creation refused with AlreadyExists: who holds the name
// (holderOf), and which name comes next (nextName).
func TestRefusedNameChoice(t *testing.T) {
	const jobUID = types.UID("job-uid")
	ref := func(kind owner.Kind, uid types.UID, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: kind.GroupVersionKind().GroupVersion().String(), Kind: kind.Kind, Name: "job", UID: uid, Controller: ptr.To(controller)}
	}
	pod := func(refs ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-1-bcdfg", UID: "pod-uid", OwnerReferences: refs}}
	}
	task := owner.Kind{Group: "example.com", Version: "v1", Kind: "Task", Finalizer: "example.com/task-tracking"}
	first := indexes.PodName("job", string(jobUID), 1, "0")
	second := indexes.NextPodName("job", string(jobUID), 1, first)
	third := indexes.NextPodName("job", string(jobUID), 1, second)
	tests := []struct {
		name     string
		pod      *corev1.Pod
		err      error
		kind     owner.Kind
		taken    []string // names known to be taken besides the refused one
		want     holder
		wantNext string // the name tried next when the holder is not the owner's
	}{
		{name: "our own earlier creation", pod: pod(ref(owner.BatchJob, jobUID, true)), kind: owner.BatchJob, want: holderOurs},
		{name: "our own, with other owner references", pod: pod(ref(owner.BatchJob, "other", false), ref(owner.BatchJob, jobUID, true)), kind: owner.BatchJob, want: holderOurs},
		{name: "released: no controller", pod: pod(), kind: owner.BatchJob, want: holderOther, wantNext: second},
		{name: "released, the next name taken too", pod: pod(), kind: owner.BatchJob, taken: []string{second}, want: holderOther, wantNext: third},
		{name: "an owner reference that is not a controller", pod: pod(ref(owner.BatchJob, jobUID, false)), kind: owner.BatchJob, want: holderOther, wantNext: second},
		{name: "another Job's", pod: pod(ref(owner.BatchJob, "other-uid", true)), kind: owner.BatchJob, want: holderOther, wantNext: second},
		{name: "our UID under another kind", pod: pod(ref(task, jobUID, true)), kind: owner.BatchJob, want: holderOther, wantNext: second},
		{name: "a custom owner's own pod", pod: pod(ref(task, jobUID, true)), kind: task, want: holderOurs},
		{name: "gone since the refusal", err: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "job-1-bcdfg"), kind: owner.BatchJob, want: holderGone},
		{name: "the read failed", err: apierrors.NewServiceUnavailable("down"), kind: owner.BatchJob, want: holderUnknown},
		{name: "a network error", err: errors.New("connection reset"), kind: owner.BatchJob, want: holderUnknown},
		{name: "no pod and no error", kind: owner.BatchJob, want: holderUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := holderOf(tc.pod, tc.err, tc.kind, jobUID)
			assert.Equal(t, tc.want, got, "holderOf(...) = %d, want %d", got, tc.want)
			if tc.want != holderOther {
				return
			}
			taken := sets.New(tc.taken...)
			next := nextName("job", string(jobUID), 1, first, taken.Has)
			assert.Equal(t, tc.wantNext, next, "nextName(%s, taken %v)", first, tc.taken)
			assert.NotEqual(t, first, next, "the refused name is not tried again")
		})
	}
}

// nextName gives up skipping after maxTakenNames names, as the plan does, so a
// corrupt taken set costs a refused creation, never a loop.
func TestNextNameIsBounded(t *testing.T) {
	calls := 0
	nextName("job", "uid", 0, "job-0-bcdfg", func(string) bool { calls++; return true })
	assert.Equal(t, maxTakenNames, calls, "names looked at when every name is taken")
}
