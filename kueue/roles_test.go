package kueue_test

import (
	"context"
	"encoding/json"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/kueue"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// Duo is an owner of two roles, Workers pods of Worker and one Launcher pod,
// as an operator's custom resource of roles is (a TrainingJob with a
// launcher).
type Duo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DuoSpec          `json:"spec,omitempty"`
	Status            ownedpods.Status `json:"status,omitempty"`
}

// DuoSpec is the spec of a Duo.
type DuoSpec struct {
	Suspend   *bool                  `json:"suspend,omitempty"`
	ManagedBy *string                `json:"managedBy,omitempty"`
	Workers   int32                  `json:"workers"`
	Worker    corev1.PodTemplateSpec `json:"worker"`
	Launcher  corev1.PodTemplateSpec `json:"launcher"`
}

// DeepCopyObject copies through JSON: a test double's shortcut.
func (d *Duo) DeepCopyObject() runtime.Object {
	out := &Duo{}
	b, _ := json.Marshal(d)
	_ = json.Unmarshal(b, out)
	return out
}

type duoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Duo `json:"items"`
}

func (l *duoList) DeepCopyObject() runtime.Object {
	out := &duoList{}
	b, _ := json.Marshal(l)
	_ = json.Unmarshal(b, out)
	return out
}

var duoKind = owner.Kind{Group: "test.jobkit.dev", Version: "v1", Kind: "Duo", Finalizer: "test.jobkit.dev/duo-tracking"}

// duoRoles is the Duo's one description: its two roles, pointing into it.
var duoRoles = reconcile.Type[*Duo]{
	New: func() *Duo { return &Duo{} },
	Roles: func(d *Duo) (*ownedpods.Workload, error) {
		indexed := ptr.To(batchv1.IndexedCompletion)
		return &ownedpods.Workload{
			Namespace: d.Namespace, Name: d.Name, UID: d.UID, Deleting: d.DeletionTimestamp != nil,
			Generation: d.Generation, ResourceVersion: d.ResourceVersion, Object: d,
			ManagedBy: d.Spec.ManagedBy, Suspend: ptr.Deref(d.Spec.Suspend, false), Status: d.Status,
			Roles: []ownedpods.Role{
				{Name: "workers", Spec: plan.Spec{Completions: &d.Spec.Workers, Parallelism: &d.Spec.Workers, CompletionMode: indexed, Template: &d.Spec.Worker}},
				{Name: "launcher", Spec: plan.Spec{Completions: ptr.To[int32](1), CompletionMode: indexed, Template: &d.Spec.Launcher}},
			},
		}, nil
	},
	SetRolesStatus: func(d *Duo, s ownedpods.Status) error { d.Status = s; return nil },
	ManagedBy:      func(d *Duo) *string { return d.Spec.ManagedBy },
	SetSuspend:     func(d *Duo, suspend bool) { d.Spec.Suspend = &suspend },
}

// setupDuos adds jobkit's Duo controller and its Kueue integration to mgr.
func setupDuos(ctx context.Context, t *testing.T, mgr manager.Manager) {
	t.Helper()
	gv := duoKind.GroupVersionKind().GroupVersion()
	mgr.GetScheme().AddKnownTypeWithName(gv.WithKind("Duo"), &Duo{})
	mgr.GetScheme().AddKnownTypeWithName(gv.WithKind("DuoList"), &duoList{})
	if _, err := jkcr.Setup(mgr, jkcr.Options[*Duo]{Type: duoRoles,
		Config: reconcile.Config{Name: controllerName, Owner: duoKind}, SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	if err := kueue.Setup(ctx, mgr, duoRoles, kueue.Options{}); err != nil {
		t.Fatal(err)
	}
}

// An owner of roles is one Workload of a pod set per role: it waits suspended,
// is admitted when the quota holds every role's pods, runs each role with the
// flavour's node selector, and gives the quota back when the group completes.
func TestRolesQueued(t *testing.T) {
	cl := start(t, "4", func(o *options) { o.duos = true })
	pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	duo := &Duo{ObjectMeta: metav1.ObjectMeta{Namespace: cl.namespace, Name: "duo", Labels: map[string]string{constants.QueueLabel: "lq"}},
		Spec: DuoSpec{Suspend: ptr.To(true), ManagedBy: ptr.To(controllerName), Workers: 3, Worker: pod, Launcher: pod}}
	cl.create(t, duo)
	read := func() *Duo {
		var d Duo
		if err := cl.c.Get(context.Background(), client.ObjectKeyFromObject(duo), &d); err != nil {
			t.Fatal(err)
		}
		return &d
	}
	eventually(t, "the Duo admitted and its four pods started", func() bool {
		return conditionTrue(cl.workloadOf(t, "Duo", "duo"), kueueapi.WorkloadAdmitted) && len(cl.kubelet.selectors("duo")) == 4
	})
	wl := cl.workloadOf(t, "Duo", "duo")
	var sets []string
	for _, ps := range wl.Spec.PodSets {
		sets = append(sets, string(ps.Name)+"="+string(rune('0'+ps.Count)))
	}
	if len(sets) != 2 || sets[0] != "workers=3" || sets[1] != "launcher=1" {
		t.Fatalf("Workload pod sets = %v, want [workers=3 launcher=1]", sets)
	}
	for _, sel := range cl.kubelet.selectors("duo") {
		if sel["pool"] != cl.cq {
			t.Fatalf("a pod of the Duo started with node selector %v, want pool=%s", sel, cl.cq)
		}
	}
	eventually(t, "the ClusterQueue's reservation at the Duo's 4 CPUs", func() bool { return cl.usage(t) == 4000 })
	cl.kubelet.finish("duo")
	eventually(t, "the Duo Completed and its Workload Finished", func() bool {
		return groups.Finished(read().Status.Conditions) != nil && conditionTrue(cl.workloadOf(t, "Duo", "duo"), kueueapi.WorkloadFinished)
	})
	eventually(t, "the ClusterQueue's reservation released", func() bool { return cl.usage(t) == 0 })
}
