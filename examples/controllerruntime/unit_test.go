package controllerruntime_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/reconcile"
)

func TestIsManagedBy(t *testing.T) {
	tests := []struct {
		name      string
		managedBy *string
		ctrl      string
		want      bool
	}{
		{name: "own name", managedBy: ptr.To("jobkit.dev/job-controller"), ctrl: "jobkit.dev/job-controller", want: true},
		{name: "another name", managedBy: ptr.To("example.com/other"), ctrl: "jobkit.dev/job-controller"},
		{name: "unset, custom controller", ctrl: "jobkit.dev/job-controller"},
		{name: "unset, built-in name", ctrl: batchv1.JobControllerName, want: true},
		{name: "built-in name set explicitly", managedBy: ptr.To(batchv1.JobControllerName), ctrl: batchv1.JobControllerName, want: true},
		{name: "empty string is not unset", managedBy: ptr.To(""), ctrl: batchv1.JobControllerName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := &batchv1.Job{Spec: batchv1.JobSpec{ManagedBy: tt.managedBy}}
			if got := controllerruntime.IsManagedBy(job, tt.ctrl); got != tt.want {
				t.Errorf("IsManagedBy(managedBy %v, %q) = %v, want %v", ptr.Deref(tt.managedBy, "<nil>"), tt.ctrl, got, tt.want)
			}
			p := controllerruntime.ManagedBy(tt.ctrl)
			if got := p.Create(event.CreateEvent{Object: job}); got != tt.want {
				t.Errorf("ManagedBy(%q).Create = %v, want %v", tt.ctrl, got, tt.want)
			}
			if got := p.Update(event.UpdateEvent{ObjectOld: job, ObjectNew: job}); got != tt.want {
				t.Errorf("ManagedBy(%q).Update = %v, want %v", tt.ctrl, got, tt.want)
			}
			if got := p.Delete(event.DeleteEvent{Object: job}); got != tt.want {
				t.Errorf("ManagedBy(%q).Delete = %v, want %v", tt.ctrl, got, tt.want)
			}
		})
	}
	if controllerruntime.IsManagedBy(nil, batchv1.JobControllerName) {
		t.Errorf("IsManagedBy(nil, %q) = true, want false", batchv1.JobControllerName)
	}
	if controllerruntime.ManagedBy(batchv1.JobControllerName).Create(event.CreateEvent{Object: &corev1.Pod{}}) {
		t.Errorf("ManagedBy(%q).Create(pod) = true, want false", batchv1.JobControllerName)
	}
}

func TestOwnerUID(t *testing.T) {
	controller := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "job-uid", Controller: ptr.To(true)}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "c", UID: "cm-uid"}
	tests := []struct {
		name string
		refs []metav1.OwnerReference
		want []string
	}{
		{name: "no owner", want: []string{controllerruntime.NoController}},
		{name: "owner that is not a controller", refs: []metav1.OwnerReference{owner}, want: []string{controllerruntime.NoController}},
		{name: "controller among owners", refs: []metav1.OwnerReference{owner, controller}, want: []string{"job-uid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: tt.refs}}
			if diff := cmp.Diff(tt.want, controllerruntime.OwnerUID(pod)); diff != "" {
				t.Errorf("OwnerUID() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLeaseName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"jobkit.dev/job-controller", "jobkit.dev-job-controller"},
		{"Example.COM/Jobs_v2", "example.com-jobs-v2"},
		{"kubernetes.io/job-controller", "kubernetes.io-job-controller"},
		{"/odd/", "odd"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := controllerruntime.LeaseName(tt.in); got != tt.want {
				t.Errorf("LeaseName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// fakeEvents records what an events.k8s.io/v1 recorder is given.
type fakeEvents struct{ got []string }

func (f *fakeEvents) Eventf(_ runtime.Object, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	f.got = append(f.got, eventtype+" "+reason+" "+action+" "+note)
}

func TestEventRecorder(t *testing.T) {
	tests := []struct {
		reason     string
		wantAction string
	}{
		{reconcile.ReasonSuccessfulCreate, controllerruntime.ActionCreatePod},
		{reconcile.ReasonFailedCreate, controllerruntime.ActionCreatePod},
		{reconcile.ReasonSuccessfulDelete, controllerruntime.ActionDeletePod},
		{reconcile.ReasonFailedDelete, controllerruntime.ActionDeletePod},
		{"Completed", controllerruntime.ActionSyncJob},
		{"BackoffLimitExceeded", controllerruntime.ActionSyncJob},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			f := &fakeEvents{}
			controllerruntime.NewEventRecorder(f).Eventf(&batchv1.Job{}, corev1.EventTypeNormal, tt.reason, "pod %s", "p")
			want := []string{"Normal " + tt.reason + " " + tt.wantAction + " pod %s"}
			if diff := cmp.Diff(want, f.got); diff != "" {
				t.Errorf("recorded events (-want +got):\n%s", diff)
			}
		})
	}
}
