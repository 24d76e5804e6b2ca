package controllerruntime_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/controllerruntime"
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
		})
	}
	if controllerruntime.IsManagedBy(nil, batchv1.JobControllerName) {
		t.Errorf("IsManagedBy(nil, %q) = true, want false", batchv1.JobControllerName)
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
