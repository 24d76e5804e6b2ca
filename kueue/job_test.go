package kueue_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/kueue"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

var jobGVK = batchv1.SchemeGroupVersion.WithKind("Job")

func testJob(parallelism, completions *int32) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"}, Spec: batchv1.JobSpec{
		Parallelism: parallelism, Completions: completions, Suspend: ptr.To(true),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
			Spec:       corev1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"}, Containers: []corev1.Container{{Name: "main"}}},
		},
	}}
}

func TestPodSets(t *testing.T) {
	tests := []struct {
		name                     string
		parallelism, completions *int32
		wantCount                int32
	}{
		{name: "defaults", wantCount: 1},
		{name: "parallelism below completions", parallelism: ptr.To[int32](2), completions: ptr.To[int32](5), wantCount: 2},
		{name: "completions below parallelism", parallelism: ptr.To[int32](4), completions: ptr.To[int32](3), wantCount: 3},
		{name: "work queue", parallelism: ptr.To[int32](3), wantCount: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := testJob(tt.parallelism, tt.completions)
			got, err := kueue.NewJob(&reconcile.JobType, jobGVK, job).PodSets(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			want := []kueueapi.PodSet{{Name: kueueapi.DefaultPodSetName, Count: tt.wantCount, Template: job.Spec.Template}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("PodSets() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunAndRestore(t *testing.T) {
	job := testJob(ptr.To[int32](2), nil)
	before := job.Spec.Template.DeepCopy()
	j := kueue.NewJob(&reconcile.JobType, jobGVK, job)
	info := podset.PodSetInfo{Name: kueueapi.DefaultPodSetName, Count: 2,
		NodeSelector: map[string]string{"pool": "a"}, Labels: map[string]string{"flavour": "a"},
		Tolerations: []corev1.Toleration{{Key: "pool", Operator: corev1.TolerationOpEqual, Value: "a", Effect: corev1.TaintEffectNoSchedule}}}
	if err := j.RunWithPodSetsInfo(t.Context(), []podset.PodSetInfo{info}); err != nil {
		t.Fatal(err)
	}
	if j.IsSuspended() {
		t.Error("IsSuspended() = true after RunWithPodSetsInfo, want false")
	}
	wantSel := map[string]string{"disk": "ssd", "pool": "a"}
	if diff := cmp.Diff(wantSel, job.Spec.Template.Spec.NodeSelector); diff != "" {
		t.Errorf("node selector after run (-want +got):\n%s", diff)
	}
	if job.Spec.Template.Labels["flavour"] != "a" || len(job.Spec.Template.Spec.Tolerations) != 1 {
		t.Errorf("template after run = %+v, want the flavour's label and toleration", job.Spec.Template)
	}
	j.Suspend()
	restore := podset.FromPodSet(&kueueapi.PodSet{Name: kueueapi.DefaultPodSetName, Count: 2, Template: *before})
	if !j.RestorePodSetsInfo([]podset.PodSetInfo{restore}) {
		t.Error("RestorePodSetsInfo() = false, want true (the template changed)")
	}
	if diff := cmp.Diff(*before, job.Spec.Template); diff != "" {
		t.Errorf("template after restore (-want +got):\n%s", diff)
	}
	if j.RestorePodSetsInfo([]podset.PodSetInfo{restore}) {
		t.Error("second RestorePodSetsInfo() = true, want false")
	}
	if !j.IsSuspended() {
		t.Error("IsSuspended() = false after Suspend, want true")
	}
}

func TestRunRefused(t *testing.T) {
	conflict := podset.PodSetInfo{Name: kueueapi.DefaultPodSetName, NodeSelector: map[string]string{"disk": "hdd"}}
	copied := reconcile.JobType
	copied.Workload = func(job *batchv1.Job) (*plan.Workload, error) {
		w := plan.JobWorkload(job)
		w.Spec.Template = job.Spec.Template.DeepCopy()
		return w, nil
	}
	tests := []struct {
		name    string
		typ     *reconcile.Type[*batchv1.Job]
		infos   []podset.PodSetInfo
		wantErr string
	}{
		{name: "two infos for one pod set", typ: &reconcile.JobType, infos: []podset.PodSetInfo{{}, {}}, wantErr: "podset"},
		{name: "conflicting node selector", typ: &reconcile.JobType, infos: []podset.PodSetInfo{conflict}, wantErr: "disk"},
		{name: "template copied by the conversion", typ: &copied, infos: []podset.PodSetInfo{{}}, wantErr: `pod set "main"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := testJob(nil, nil)
			j := kueue.NewJob(tt.typ, jobGVK, job)
			err := j.RunWithPodSetsInfo(t.Context(), tt.infos)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("RunWithPodSetsInfo() = %v, want an error containing %q", err, tt.wantErr)
			}
			if !j.IsSuspended() {
				t.Error("the owner was unsuspended although the run was refused")
			}
		})
	}
}

func TestStatus(t *testing.T) {
	cond := func(typ batchv1.JobConditionType, msg string) []batchv1.JobCondition {
		return []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue, Message: msg}}
	}
	tests := []struct {
		name                      string
		status                    batchv1.JobStatus
		wantMessage               string
		wantSuccess, wantFinished bool
		wantActive, wantReady     bool
		wantReclaimable           []kueueapi.ReclaimablePod
	}{
		{name: "running, not all ready", status: batchv1.JobStatus{Active: 3, Ready: ptr.To[int32](2)},
			wantSuccess: true, wantActive: true},
		{name: "running, all ready", status: batchv1.JobStatus{Active: 3, Ready: ptr.To[int32](3)},
			wantSuccess: true, wantActive: true, wantReady: true},
		{name: "ready and succeeded count together", status: batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1), Succeeded: 2},
			wantSuccess: true, wantActive: true, wantReady: true},
		{name: "fewer left than parallelism", status: batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1), Succeeded: 4},
			wantSuccess: true, wantActive: true, wantReady: true,
			wantReclaimable: []kueueapi.ReclaimablePod{{Name: kueueapi.DefaultPodSetName, Count: 2}}},
		{name: "complete", status: batchv1.JobStatus{Succeeded: 5, Conditions: cond(batchv1.JobComplete, "done")},
			wantMessage: "done", wantSuccess: true, wantFinished: true, wantReady: true,
			wantReclaimable: []kueueapi.ReclaimablePod{{Name: kueueapi.DefaultPodSetName, Count: 3}}},
		{name: "failed", status: batchv1.JobStatus{Failed: 7, Conditions: cond(batchv1.JobFailed, "backoff limit")},
			wantMessage: "backoff limit", wantFinished: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := testJob(ptr.To[int32](3), ptr.To[int32](5))
			job.Status = tt.status
			j := kueue.NewJob(&reconcile.JobType, jobGVK, job)
			msg, success, finished := j.Finished(t.Context())
			if msg != tt.wantMessage || success != tt.wantSuccess || finished != tt.wantFinished {
				t.Errorf("Finished() = %q, %v, %v; want %q, %v, %v", msg, success, finished, tt.wantMessage, tt.wantSuccess, tt.wantFinished)
			}
			if got := j.IsActive(); got != tt.wantActive {
				t.Errorf("IsActive() = %v, want %v", got, tt.wantActive)
			}
			if got := j.PodsReady(t.Context()); got != tt.wantReady {
				t.Errorf("PodsReady() = %v, want %v", got, tt.wantReady)
			}
			got, err := j.ReclaimablePods(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantReclaimable, got); diff != "" {
				t.Errorf("ReclaimablePods() (-want +got):\n%s", diff)
			}
		})
	}
}

// duo is an owner of two roles, a launcher and workers, as a test needs one.
type duo struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Suspend           bool
	Workers, Launcher corev1.PodTemplateSpec
	Status            ownedpods.Status
}

func (d *duo) DeepCopyObject() runtime.Object { c := *d; return &c }

var duoType = reconcile.Type[*duo]{
	New: func() *duo { return &duo{} },
	Roles: func(d *duo) (*ownedpods.Workload, error) {
		return &ownedpods.Workload{Namespace: d.Namespace, Name: d.Name, Suspend: d.Suspend, Status: d.Status, Roles: []ownedpods.Role{
			{Name: "workers", Spec: plan.Spec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](4), Template: &d.Workers}},
			{Name: "launcher", Spec: plan.Spec{Template: &d.Launcher}},
		}}, nil
	},
	SetRolesStatus: func(d *duo, s ownedpods.Status) error { d.Status = s; return nil },
	SetSuspend:     func(d *duo, suspend bool) { d.Suspend = suspend },
}

func TestRoles(t *testing.T) {
	d := &duo{Suspend: true}
	j := kueue.NewJob(&duoType, jobGVK.GroupVersion().WithKind("Duo"), d)
	sets, err := j.PodSets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sets {
		got = append(got, string(s.Name)+"="+string(rune('0'+s.Count)))
	}
	if diff := cmp.Diff([]string{"workers=4", "launcher=1"}, got); diff != "" {
		t.Errorf("PodSets() names=counts (-want +got):\n%s", diff)
	}
	infos := []podset.PodSetInfo{{Name: "workers", NodeSelector: map[string]string{"pool": "gpu"}}, {Name: "launcher", NodeSelector: map[string]string{"pool": "cpu"}}}
	if err := j.RunWithPodSetsInfo(t.Context(), infos); err != nil {
		t.Fatal(err)
	}
	if d.Suspend || d.Workers.Spec.NodeSelector["pool"] != "gpu" || d.Launcher.Spec.NodeSelector["pool"] != "cpu" {
		t.Errorf("after run: suspend %v, workers %v, launcher %v; want unsuspended, pool gpu and cpu",
			d.Suspend, d.Workers.Spec.NodeSelector, d.Launcher.Spec.NodeSelector)
	}
	d.Status = ownedpods.Status{Roles: []ownedpods.RoleStatus{
		{Name: "workers", Job: batchv1.JobStatus{Active: 4, Ready: ptr.To[int32](4)}},
		{Name: "launcher", Job: batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](0)}},
	}}
	if !j.IsActive() || j.PodsReady(t.Context()) {
		t.Errorf("launcher not ready: IsActive %v, PodsReady %v; want true, false", j.IsActive(), j.PodsReady(t.Context()))
	}
	d.Status.Roles[1].Job.Ready = ptr.To[int32](1)
	if !j.PodsReady(t.Context()) {
		t.Error("PodsReady() = false with every role's pods ready")
	}
	d.Status.Conditions = []metav1.Condition{{Type: plaingroup.ConditionFailed, Status: metav1.ConditionTrue, Message: "launcher failed"}}
	if msg, success, finished := j.Finished(t.Context()); msg != "launcher failed" || success || !finished {
		t.Errorf("Finished() = %q, %v, %v; want \"launcher failed\", false, true", msg, success, finished)
	}
}

// A group of child Jobs without Type.ChildJobTemplates has nowhere to take
// a flavour: Setup refuses it, and so does RunWithPodSetsInfo, naming the
// field; templates that are copies are refused too.
func TestChildJobsWithoutTemplates(t *testing.T) {
	noTemplates := gangType
	noTemplates.ChildJobTemplates = nil
	if err := kueue.Setup(t.Context(), nil, noTemplates, kueue.Options{}); !errors.Is(err, kueue.ErrUnsupported) {
		t.Errorf("Setup() of a child-Jobs kind without ChildJobTemplates = %v, want ErrUnsupported", err)
	}
	g := testGang()
	info := []podset.PodSetInfo{{Name: "workers"}, {Name: "driver"}}
	if err := kueue.NewJob(&noTemplates, gangGVK, g).RunWithPodSetsInfo(t.Context(), info); !errors.Is(err, kueue.ErrUnsupported) ||
		!strings.Contains(err.Error(), "Type.ChildJobTemplates") {
		t.Errorf("RunWithPodSetsInfo() without ChildJobTemplates = %v, want ErrUnsupported naming Type.ChildJobTemplates", err)
	}
	copies := gangType
	copies.ChildJobTemplates = func(g *Gang) []*batchv1.JobTemplateSpec {
		out := make([]*batchv1.JobTemplateSpec, len(g.Spec.Roles))
		for i := range g.Spec.Roles {
			c := g.Spec.Roles[i].Template
			out[i] = &c
		}
		return out
	}
	if err := kueue.NewJob(&copies, gangGVK, g).RunWithPodSetsInfo(t.Context(), info); err == nil || !strings.Contains(err.Error(), "ChildJobTemplates()[0] is nil or a copy") {
		t.Errorf("RunWithPodSetsInfo() with copied templates = %v, want an error naming ChildJobTemplates()[0]", err)
	}
	if !ptr.Deref(g.Spec.Suspend, false) {
		t.Error("a refused RunWithPodSetsInfo unsuspended the Gang")
	}
}

func TestSetupRefuses(t *testing.T) {
	noSuspend := reconcile.JobType
	noSuspend.SetSuspend = nil
	tests := []struct {
		name    string
		typ     reconcile.Type[*batchv1.Job]
		wantErr string
	}{
		{name: "no SetSuspend", typ: noSuspend, wantErr: "Type.SetSuspend"},
		{name: "invalid Type", typ: reconcile.Type[*batchv1.Job]{}, wantErr: "Type.New"},
		{name: "no manager", typ: reconcile.JobType, wantErr: "manager is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := kueue.Setup(t.Context(), nil, tt.typ, kueue.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Setup() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// BenchmarkJob is what Kueue's reconciler asks of an owner on every reconcile
// of a running one: its pod sets, whether it is suspended, active, ready and
// finished, and its reclaimable pods.
func BenchmarkJob(b *testing.B) {
	job := testJob(ptr.To[int32](100), ptr.To[int32](1000))
	job.Status = batchv1.JobStatus{Active: 100, Ready: ptr.To[int32](100), Succeeded: 950}
	j := kueue.NewJob(&reconcile.JobType, jobGVK, job)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.PodSets(ctx); err != nil {
			b.Fatal(err)
		}
		_ = j.IsSuspended() || j.IsActive() || j.PodsReady(ctx)
		_, _, _ = j.Finished(ctx)
		if _, err := j.ReclaimablePods(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
