package kueue_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/jobkit/jobkit/kueue"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

var gangGVK = gangKind.GroupVersionKind()

// testGang is a suspended Gang of 3 worker children of 2 pods and a driver.
func testGang() *Gang {
	cl := &cluster{namespace: "ns"}
	return cl.gang("g", 3, 2)
}

func TestGangPodSets(t *testing.T) {
	tests := []struct {
		name                              string
		replicas, parallelism, completion int32
		wantWorkers                       int32
	}{
		{name: "replicas x parallelism", replicas: 3, parallelism: 2, completion: 2, wantWorkers: 6},
		{name: "completions below parallelism", replicas: 2, parallelism: 4, completion: 3, wantWorkers: 6},
		{name: "no replicas", replicas: 0, parallelism: 2, completion: 2, wantWorkers: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := testGang()
			g.Spec.Roles[0].Replicas = tt.replicas
			g.Spec.Roles[0].Template.Spec.Parallelism = ptr.To(tt.parallelism)
			g.Spec.Roles[0].Template.Spec.Completions = ptr.To(tt.completion)
			got, err := kueue.NewJob(&gangType, gangGVK, g).PodSets(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			want := []kueueapi.PodSet{
				{Name: "workers", Count: tt.wantWorkers, Template: g.Spec.Roles[0].Template.Spec.Template},
				{Name: "driver", Count: 1, Template: g.Spec.Roles[1].Template.Spec.Template},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("PodSets() (-want +got):\n%s", diff)
			}
		})
	}
}

// Admission merges each role's flavour into the Gang's own templates and
// unsuspends it; restoring takes the flavour back out.
func TestGangRunAndRestore(t *testing.T) {
	g := testGang()
	j := kueue.NewJob(&gangType, gangGVK, g)
	infos := []podset.PodSetInfo{
		{Name: "workers", Count: 6, NodeSelector: map[string]string{"pool": "gpu"},
			Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}, Labels: map[string]string{"flavour": "gpu"}},
		{Name: "driver", Count: 1, NodeSelector: map[string]string{"pool": "cpu"}, Annotations: map[string]string{"a": "b"}},
	}
	if err := j.RunWithPodSetsInfo(t.Context(), infos); err != nil {
		t.Fatal(err)
	}
	if j.IsSuspended() {
		t.Error("IsSuspended() = true after RunWithPodSetsInfo")
	}
	workers, driver := &g.Spec.Roles[0].Template.Spec.Template, &g.Spec.Roles[1].Template.Spec.Template
	if diff := cmp.Diff(map[string]string{"disk": "ssd", "pool": "gpu"}, workers.Spec.NodeSelector); diff != "" {
		t.Errorf("workers' node selector (-want +got):\n%s", diff)
	}
	if len(workers.Spec.Tolerations) != 1 || workers.Labels["flavour"] != "gpu" {
		t.Errorf("workers' template = tolerations %v, labels %v; want the flavour's", workers.Spec.Tolerations, workers.Labels)
	}
	if driver.Spec.NodeSelector["pool"] != "cpu" || driver.Annotations["a"] != "b" {
		t.Errorf("driver's template = node selector %v, annotations %v; want pool=cpu, a=b", driver.Spec.NodeSelector, driver.Annotations)
	}
	j.Suspend()
	if !j.RestorePodSetsInfo([]podset.PodSetInfo{{Name: "workers", NodeSelector: map[string]string{"disk": "ssd"}}, {Name: "driver", NodeSelector: map[string]string{"disk": "ssd"}}}) {
		t.Error("RestorePodSetsInfo() = false, want true (templates changed)")
	}
	if diff := cmp.Diff(map[string]string{"disk": "ssd"}, workers.Spec.NodeSelector); diff != "" || !j.IsSuspended() {
		t.Errorf("restored workers' node selector (-want +got):\n%s; suspended %v", diff, j.IsSuspended())
	}
}

// Status read per role: active, ready (every child ready or succeeded),
// reclaimable (the pods of succeeded children) and finished.
func TestGangStatus(t *testing.T) {
	g := testGang()
	g.Spec.Suspend = ptr.To(false)
	j := kueue.NewJob(&gangType, gangGVK, g)
	g.Status.ReplicatedJobs = []plaingroup.RoleStatus{{Name: "workers", Active: 3, Ready: 2}, {Name: "driver", Active: 1, Ready: 1}}
	if !j.IsActive() || j.PodsReady(t.Context()) {
		t.Errorf("two of three workers ready: IsActive %v, PodsReady %v; want true, false", j.IsActive(), j.PodsReady(t.Context()))
	}
	g.Status.ReplicatedJobs[0] = plaingroup.RoleStatus{Name: "workers", Active: 2, Ready: 2, Succeeded: 1}
	if !j.PodsReady(t.Context()) {
		t.Error("PodsReady() = false with two workers ready and one succeeded")
	}
	got, err := j.ReclaimablePods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]kueueapi.ReclaimablePod{{Name: "workers", Count: 2}}, got); diff != "" {
		t.Errorf("ReclaimablePods() (-want +got):\n%s", diff)
	}
	if _, _, finished := j.Finished(t.Context()); finished {
		t.Error("Finished() = true before the group's condition")
	}
	g.Status.Conditions = []metav1.Condition{{Type: plaingroup.ConditionCompleted, Status: metav1.ConditionTrue, Message: "all done"}}
	if msg, success, finished := j.Finished(t.Context()); msg != "all done" || !success || !finished {
		t.Errorf("Finished() = %q, %v, %v; want \"all done\", true, true", msg, success, finished)
	}
}

func TestManagedBy(t *testing.T) {
	tests := []struct {
		name       string
		managedBy  *string
		controller string
		noSetter   bool
		want       bool
	}{
		{name: "unset", want: true},
		{name: "jobkit's controller", managedBy: ptr.To("c"), controller: "c", want: true},
		{name: "another controller", managedBy: ptr.To("other"), controller: "c", want: false},
		{name: "already MultiKueue's", managedBy: ptr.To(kueueapi.MultiKueueControllerName), controller: "c", want: false},
		{name: "no Type.SetManagedBy", noSetter: true, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ := gangType
			if tt.noSetter {
				typ.SetManagedBy = nil
			}
			g := testGang()
			g.Spec.ManagedBy = tt.managedBy
			j := kueue.NewJob(&typ, gangGVK, g)
			if got := kueue.CanDefaultManagedBy(j, tt.controller); got != tt.want {
				t.Errorf("CanDefaultManagedBy() = %v, want %v", got, tt.want)
			}
			j.SetManagedBy(ptr.To(kueueapi.MultiKueueControllerName))
			want := tt.managedBy
			if !tt.noSetter {
				want = ptr.To(kueueapi.MultiKueueControllerName)
			}
			if diff := cmp.Diff(want, j.ManagedBy()); diff != "" {
				t.Errorf("ManagedBy() after SetManagedBy (-want +got):\n%s", diff)
			}
		})
	}
}
