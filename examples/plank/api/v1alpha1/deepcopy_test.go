package v1alpha1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func full() *RunJob {
	at := metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return &RunJob{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ci", Labels: map[string]string{"a": "b"}},
		Spec: RunJobSpec{
			JobName: "unit", QueueName: "q", MaxConcurrency: 2, ErrorOnEviction: true, MaxRevivals: ptr.To[int32](1), DedupeKey: "pr-1",
			Timeouts: &PodTimeouts{Unscheduled: &metav1.Duration{Duration: time.Minute}, Pending: &metav1.Duration{Duration: 2 * time.Minute}, Running: &metav1.Duration{Duration: time.Hour}},
			PodSpec:  corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x", Command: []string{"true"}}}},
		},
		Status: RunJobStatus{State: StatePending, Description: "d", PodName: "r", StartTime: &at, PendingTime: &at, CompletionTime: &at, Revivals: 1, RevivedPodUID: "u"},
	}
}

// TestDeepCopy checks that a copy is equal and shares nothing: changing every
// pointer and slice of the copy leaves the original as it was.
func TestDeepCopy(t *testing.T) {
	orig := full()
	cp := orig.DeepCopy()
	if diff := cmp.Diff(orig, cp); diff != "" {
		t.Fatalf("DeepCopy (-orig +copy):\n%s", diff)
	}
	later := metav1.NewTime(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	cp.Labels["a"] = "changed"
	*cp.Spec.MaxRevivals = 9
	cp.Spec.Timeouts.Unscheduled.Duration = 0
	cp.Spec.Timeouts.Pending.Duration = 0
	cp.Spec.Timeouts.Running.Duration = 0
	cp.Spec.PodSpec.Containers[0].Command[0] = "false"
	*cp.Status.StartTime = later
	*cp.Status.PendingTime = later
	*cp.Status.CompletionTime = later
	if diff := cmp.Diff(full(), orig); diff != "" {
		t.Errorf("changing the copy changed the original (-want +got):\n%s", diff)
	}

	list := &RunJobList{Items: []RunJob{*full()}}
	lc := list.DeepCopyObject().(*RunJobList)
	lc.Items[0].Spec.PodSpec.Containers[0].Name = "other"
	if list.Items[0].Spec.PodSpec.Containers[0].Name != "c" {
		t.Error("changing a copied list changed the original")
	}
	var _ runtime.Object = orig.DeepCopyObject()
	if (*RunJob)(nil).DeepCopy() != nil || (*RunJobList)(nil).DeepCopy() != nil || (*PodTimeouts)(nil).DeepCopy() != nil {
		t.Error("DeepCopy of nil is not nil")
	}
}

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"RunJob", "RunJobList"} {
		if !s.Recognizes(SchemeGroupVersion.WithKind(kind)) {
			t.Errorf("scheme does not recognise %s", kind)
		}
	}
}

func TestStateFinished(t *testing.T) {
	for s, want := range map[State]bool{"": false, StateTriggered: false, StatePending: false,
		StateSuccess: true, StateFailure: true, StateError: true, StateAborted: true, "other": false} {
		if got := s.Finished(); got != want {
			t.Errorf("State(%q).Finished() = %v, want %v", s, got, want)
		}
	}
}
