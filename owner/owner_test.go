package owner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	batchv1 "k8s.io/api/batch/v1"
)

var training = owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}

func TestMatches(t *testing.T) {
	tests := []struct {
		name string
		kind owner.Kind
		ref  *metav1.OwnerReference
		want bool
	}{
		{name: "batch/v1 Job", kind: owner.BatchJob, ref: &metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job"}, want: true},
		{name: "another version of the group", kind: owner.BatchJob, ref: &metav1.OwnerReference{APIVersion: "batch/v2", Kind: "Job"}, want: true},
		{name: "a Job of another group", kind: owner.BatchJob, ref: &metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Job"}, want: false},
		{name: "another kind of the group", kind: owner.BatchJob, ref: &metav1.OwnerReference{APIVersion: "batch/v1", Kind: "CronJob"}, want: false},
		{name: "a core kind", kind: owner.BatchJob, ref: &metav1.OwnerReference{APIVersion: "v1", Kind: "Job"}, want: false},
		{name: "nil", kind: owner.BatchJob, ref: nil, want: false},
		{name: "custom resource", kind: training, ref: &metav1.OwnerReference{APIVersion: "ml.example.com/v1beta1", Kind: "TrainingJob"}, want: true},
		{name: "custom resource, kind differs in case", kind: training, ref: &metav1.OwnerReference{APIVersion: "ml.example.com/v1alpha1", Kind: "trainingjob"}, want: false},
		{name: "a core owner", kind: owner.Kind{Version: "v1", Kind: "ReplicationController"}, ref: &metav1.OwnerReference{APIVersion: "v1", Kind: "ReplicationController"}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.kind.Matches(tt.ref); got != tt.want {
				t.Errorf("%v.Matches(%+v) = %v, want %v", tt.kind, tt.ref, got, tt.want)
			}
		})
	}
}

func TestControllerOf(t *testing.T) {
	ref := func(kind string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "batch/v1", Kind: kind, Name: "j", UID: "uid-1", Controller: ptr.To(controller)}
	}
	tests := []struct {
		name    string
		refs    []metav1.OwnerReference
		wantUID types.UID // "" for nil
	}{
		{name: "the Job controls", refs: []metav1.OwnerReference{ref("Job", true)}, wantUID: "uid-1"},
		{name: "a Job owns but does not control", refs: []metav1.OwnerReference{ref("Job", false)}},
		{name: "another kind controls", refs: []metav1.OwnerReference{ref("Job", false), ref("CronJob", true)}},
		{name: "no owner", refs: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: tt.refs}}
			got := owner.BatchJob.ControllerOf(pod)
			if (got == nil) != (tt.wantUID == "") || (got != nil && got.UID != tt.wantUID) {
				t.Errorf("ControllerOf() = %+v, want UID %q", got, tt.wantUID)
			}
			if owner.BatchJob.IsControlledBy(pod, "uid-1") != (tt.wantUID != "") {
				t.Errorf("IsControlledBy(uid-1) = %v, want %v", !(tt.wantUID != ""), tt.wantUID != "")
			}
			if owner.BatchJob.IsControlledBy(pod, "uid-2") {
				t.Error("IsControlledBy(uid-2) = true: ownership is by UID")
			}
		})
	}
}

func TestNewControllerRef(t *testing.T) {
	obj := &metav1.ObjectMeta{Name: "train", UID: "u-7"}
	got := training.NewControllerRef(obj)
	want := metav1.OwnerReference{APIVersion: "ml.example.com/v1alpha1", Kind: "TrainingJob", Name: "train", UID: "u-7",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NewControllerRef (-want +got):\n%s", diff)
	}
	if !training.Matches(&got) {
		t.Error("a reference NewControllerRef built does not match its kind")
	}
	if got := owner.BatchJob.NewControllerRef(obj); got.APIVersion != "batch/v1" || got.Kind != "Job" {
		t.Errorf("BatchJob reference = %s %s, want batch/v1 Job", got.APIVersion, got.Kind)
	}
}

func TestHasFinalizer(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"other/x", "ml.example.com/worker-tracking"}}}
	if !training.HasFinalizer(pod) || owner.BatchJob.HasFinalizer(pod) {
		t.Errorf("HasFinalizer: training %v, batch %v; want true, false", training.HasFinalizer(pod), owner.BatchJob.HasFinalizer(pod))
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		kind   owner.Kind
		fields []string // named in the error, in order
	}{
		{name: "batch Job", kind: owner.BatchJob},
		{name: "custom", kind: training},
		{name: "empty", kind: owner.Kind{}, fields: []string{"Version", "Kind", "Finalizer"}},
		{name: "bad group", kind: owner.Kind{Group: "Not_A_Domain", Version: "v1", Kind: "X", Finalizer: "a.b/c"}, fields: []string{"Group"}},
		{name: "unqualified finalizer", kind: owner.Kind{Group: "g.io", Version: "v1", Kind: "X", Finalizer: "tracking"}, fields: []string{"Finalizer"}},
		{name: "bad finalizer prefix", kind: owner.Kind{Group: "g.io", Version: "v1", Kind: "X", Finalizer: "G_IO/tracking"}, fields: []string{"Finalizer"}},
		{name: "finalizer with two slashes", kind: owner.Kind{Group: "g.io", Version: "v1", Kind: "X", Finalizer: "g.io/a/b"}, fields: []string{"Finalizer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.kind.Validate()
			if len(tt.fields) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, owner.ErrInvalidKind) {
				t.Fatalf("Validate() = %v, want ErrInvalidKind", err)
			}
			for _, f := range tt.fields {
				if !strings.Contains(err.Error(), f+" ") {
					t.Errorf("Validate() = %q does not name %s", err, f)
				}
			}
		})
	}
}

func TestString(t *testing.T) {
	if got := owner.BatchJob.String(); got != "Job.batch" {
		t.Errorf("BatchJob.String() = %q", got)
	}
	if got := (owner.Kind{Version: "v1", Kind: "Pod"}).String(); got != "Pod" {
		t.Errorf("core kind String() = %q", got)
	}
}

func BenchmarkControllerOf(b *testing.B) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "Other", Name: "o", UID: "x"},
		{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "u", Controller: ptr.To(true)},
	}}}
	b.ReportAllocs()
	for b.Loop() {
		if owner.BatchJob.ControllerOf(pod) == nil {
			b.Fatal("no controller")
		}
	}
}

func TestKeys(t *testing.T) {
	tests := []struct {
		name                         string
		kind                         owner.Kind
		wantIndex, wantFail, wantIgn string
	}{
		{name: "batch/v1 Job: the API's keys", kind: owner.BatchJob,
			wantIndex: batchv1.JobCompletionIndexAnnotation, wantFail: batchv1.JobIndexFailureCountAnnotation, wantIgn: batchv1.JobIndexIgnoredFailureCountAnnotation},
		{name: "a custom kind without a prefix gets the batch/v1 keys", kind: training,
			wantIndex: "batch.kubernetes.io/job-completion-index", wantFail: "batch.kubernetes.io/job-index-failure-count", wantIgn: "batch.kubernetes.io/job-index-ignored-failure-count"},
		{name: "a custom prefix", kind: withPrefix(training, "ml.example.com/trainingjob-"),
			wantIndex: "ml.example.com/trainingjob-completion-index", wantFail: "ml.example.com/trainingjob-index-failure-count", wantIgn: "ml.example.com/trainingjob-index-ignored-failure-count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{tt.kind.IndexKey(), tt.kind.FailureCountKey(), tt.kind.IgnoredFailureCountKey()}
			if diff := cmp.Diff([]string{tt.wantIndex, tt.wantFail, tt.wantIgn}, got); diff != "" {
				t.Errorf("keys of %v (-want +got):\n%s", tt.kind, diff)
			}
		})
	}
}

func withPrefix(k owner.Kind, prefix string) owner.Kind {
	k.KeyPrefix = prefix
	return k
}

func TestValidateKeyPrefix(t *testing.T) {
	tests := []struct {
		prefix  string
		wantErr bool
	}{
		{prefix: "ml.example.com/trainingjob-"},
		{prefix: "trainingjob-"},
		{prefix: "Not_A_Domain/x-", wantErr: true},
		{prefix: "ml.example.com/a/b-", wantErr: true},
		{prefix: "ml.example.com/" + strings.Repeat("x", 40), wantErr: true}, // the name part of a key passes 63
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			err := withPrefix(training, tt.prefix).Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() with KeyPrefix %q = %v, want error %v", tt.prefix, err, tt.wantErr)
			}
			if err != nil && (!errors.Is(err, owner.ErrInvalidKind) || !strings.Contains(err.Error(), "KeyPrefix")) {
				t.Errorf("Validate() = %v, want ErrInvalidKind naming KeyPrefix", err)
			}
		})
	}
}
