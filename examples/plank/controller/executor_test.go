package controller

// Unit tests of the executor against controller-runtime's fake client, whose
// objects have no creationTimestamp: the robust inputs of runplan, end to end.

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
)

func TestExecutorWithFakeClient(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		pendingTime *metav1.Time
		phase       corev1.PodPhase
		wantState   v1alpha1.State
		wantRequeue time.Duration
		wantPod     bool
	}{
		{
			name:        "pod without creationTimestamp, measured from the run's pendingTime: waits",
			pendingTime: &metav1.Time{Time: now.Add(-time.Minute)},
			phase:       corev1.PodPending, wantState: v1alpha1.StatePending, wantRequeue: 4 * time.Minute, wantPod: true,
		},
		{
			name:        "pod without creationTimestamp, pendingTime past the unscheduled timeout: error, pod deleted",
			pendingTime: &metav1.Time{Time: now.Add(-time.Hour)},
			phase:       corev1.PodPending, wantState: v1alpha1.StateError,
		},
		{
			name:  "pod and run without any time: waits and looks again",
			phase: corev1.PodPending, wantState: v1alpha1.StatePending, wantRequeue: 10 * time.Second, wantPod: true,
		},
		{
			name:  "pod without any time that failed: failure, pod kept",
			phase: corev1.PodFailed, wantState: v1alpha1.StateFailure, wantPod: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := clientgoscheme.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			if err := v1alpha1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			rj := &v1alpha1.RunJob{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: "unit-1", UID: "run-1"},
				Spec:       v1alpha1.RunJobSpec{JobName: "unit"},
				Status: v1alpha1.RunJobStatus{State: v1alpha1.StatePending, PodName: "unit-1", PendingTime: tt.pendingTime,
					StartTime: &metav1.Time{Time: now.Add(-2 * time.Hour)}, Description: MessageTriggered},
			}
			pod := newPod(rj)
			pod.Status.Phase = tt.phase
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(rj, pod).WithStatusSubresource(&v1alpha1.RunJob{}).Build()
			r, err := New(c, Config{DefaultTimeouts: ptr.To(plaindl.DefaultTimeouts()), Clock: clocktesting.NewFakePassiveClock(now)})
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ci", Name: "unit-1"}})
			if err != nil {
				t.Fatalf("Reconcile() error = %v", err)
			}
			if res.RequeueAfter != tt.wantRequeue {
				t.Errorf("Reconcile() requeue = %v, want %v", res.RequeueAfter, tt.wantRequeue)
			}
			var got v1alpha1.RunJob
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(rj), &got); err != nil {
				t.Fatal(err)
			}
			if got.Status.State != tt.wantState || (got.Status.CompletionTime != nil) != tt.wantState.Finished() {
				t.Errorf("state %q, completed %v; want %q, %v (description %q)", got.Status.State, got.Status.CompletionTime != nil,
					tt.wantState, tt.wantState.Finished(), got.Status.Description)
			}
			err = c.Get(context.Background(), client.ObjectKeyFromObject(pod), &corev1.Pod{})
			if gotPod := err == nil; gotPod != tt.wantPod || (err != nil && !apierrors.IsNotFound(err)) {
				t.Errorf("pod exists = %v (%v), want %v", gotPod, err, tt.wantPod)
			}
		})
	}
}
