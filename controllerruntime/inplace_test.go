package controllerruntime

import (
	"math"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// With Options.InPlaceRestart a group under that strategy is given its pods:
// once every pod of its three children reports attempt 0, the status says
// current 0; without the option the pods are not read. groupOfPod maps a pod
// to its group.
func TestInPlaceRestartReadsPods(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	inPlace := groupType
	inPlace.ChildJobs = func(g *testGroup) (*childjobs.Input, error) {
		in, err := groupType.ChildJobs(g)
		if err == nil {
			in.Spec.FailurePolicy = &plaingroup.FailurePolicy{MaxRestarts: 3, RestartStrategy: plaingroup.InPlaceRestart}
			for i := range in.Templates { // the template rules of an in-place restart
				in.Templates[i].Spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
				in.Templates[i].Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
			}
		}
		return in, err
	}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			Labels:      map[string]string{plaingroup.LabelJobSetName: "g"},
			Annotations: map[string]string{plaingroup.AnnotationInPlaceRestartAttempt: "0"}}}
	}
	for _, on := range []bool{true, false} {
		g := newGroup("ns", "g", groupController)
		g.UID = "g-uid"
		c := fake.NewClientBuilder().WithScheme(groupScheme(t)).WithObjects(g, pod("a"), pod("b"), pod("c")).
			WithStatusSubresource(&testGroup{}).WithIndex(&batchv1.Job{}, OwnerUIDIndex, OwnerUID).Build()
		ctl, err := NewController(c, c, Options[*testGroup]{Type: inPlace, InPlaceRestart: on,
			Config: reconcile.Config{Name: groupController, Clock: clocktesting.NewFakePassiveClock(now), Events: &eventLog{}, Logger: logr.Discard()}})
		if err != nil {
			t.Fatal(err)
		}
		req := crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "g"}}
		if _, err := ctl.Reconcile(t.Context(), req); err != nil {
			t.Fatalf("Reconcile() error = %v", err)
		}
		got := &testGroup{}
		if err := c.Get(t.Context(), req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		var want *int32
		if on {
			want = ptr.To[int32](0)
		}
		if !ptr.Equal(got.Status.CurrentInPlaceRestartAttempt, want) {
			t.Errorf("InPlaceRestart %t: currentInPlaceRestartAttempt = %v, want %v", on, got.Status.CurrentInPlaceRestartAttempt, want)
		}
	}
	if got := groupOfPod(t.Context(), pod("a")); len(got) != 1 || got[0].Name != "g" || got[0].Namespace != "ns" {
		t.Errorf("groupOfPod = %v, want ns/g", got)
	}
	if got := groupOfPod(t.Context(), &corev1.Pod{}); got != nil {
		t.Errorf("groupOfPod(unlabelled) = %v, want none", got)
	}
}
