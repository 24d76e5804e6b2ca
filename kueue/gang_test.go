package kueue_test

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/kueue"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// Gang is a group whose roles run as child Jobs, JobSet's shape: each role
// runs Replicas child Jobs of its Job template. The examples' JobSet is this
// shape; its module cannot be imported here (docs/kueue.md says why).
type Gang struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GangSpec         `json:"spec,omitempty"`
	Status            childjobs.Status `json:"status,omitempty"`
}

// GangSpec is the spec of a Gang.
type GangSpec struct {
	Suspend   *bool      `json:"suspend,omitempty"`
	ManagedBy *string    `json:"managedBy,omitempty"`
	Roles     []GangRole `json:"roles"`
}

// GangRole is one replicated role of a Gang.
type GangRole struct {
	Name     string                  `json:"name"`
	Replicas int32                   `json:"replicas"`
	Template batchv1.JobTemplateSpec `json:"template"`
}

// DeepCopyObject copies through JSON: a test double's shortcut.
func (g *Gang) DeepCopyObject() runtime.Object {
	out := &Gang{}
	b, _ := json.Marshal(g)
	_ = json.Unmarshal(b, out)
	return out
}

type gangList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gang `json:"items"`
}

func (l *gangList) DeepCopyObject() runtime.Object {
	out := &gangList{}
	b, _ := json.Marshal(l)
	_ = json.Unmarshal(b, out)
	return out
}

var gangKind = owner.Kind{Group: "test.jobkit.dev", Version: "v1", Kind: "Gang"}

// gangType is the Gang's one description: the conversion onto
// childjobs.Input (whose templates are copies) and, for the Kueue
// integration, the same templates as pointers into the Gang.
var gangType = reconcile.Type[*Gang]{
	New: func() *Gang { return &Gang{} },
	ChildJobs: func(g *Gang) (*childjobs.Input, error) {
		in := &childjobs.Input{Name: g.Name, Namespace: g.Namespace, UID: g.UID, Generation: g.Generation,
			ResourceVersion: g.ResourceVersion, Object: g, Owner: gangKind.GroupVersionKind(), Deleting: g.DeletionTimestamp != nil,
			Spec:    plaingroup.Spec{Name: g.Name, ManagedBy: ptr.Deref(g.Spec.ManagedBy, "")},
			Suspend: ptr.Deref(g.Spec.Suspend, false), Status: g.Status, EnableDNSHostnames: ptr.To(false)}
		for _, r := range g.Spec.Roles {
			in.Spec.Roles = append(in.Spec.Roles, plaingroup.Role{Name: r.Name, Replicas: r.Replicas})
			in.Templates = append(in.Templates, r.Template)
		}
		return in, nil
	},
	SetChildJobsStatus: func(g *Gang, s childjobs.Status) error { g.Status = s; return nil },
	ChildJobTemplates: func(g *Gang) []*batchv1.JobTemplateSpec {
		out := make([]*batchv1.JobTemplateSpec, len(g.Spec.Roles))
		for i := range g.Spec.Roles {
			out[i] = &g.Spec.Roles[i].Template
		}
		return out
	},
	ManagedBy:    func(g *Gang) *string { return g.Spec.ManagedBy },
	SetSuspend:   func(g *Gang, suspend bool) { g.Spec.Suspend = &suspend },
	SetManagedBy: func(g *Gang, managedBy *string) { g.Spec.ManagedBy = managedBy },
}

// setupGangs adds to mgr jobkit's Gang controller, whose child Jobs jobkit's
// Job controller runs (added unless batchJobs did), and the Gangs' Kueue
// integration.
func setupGangs(ctx context.Context, t *testing.T, mgr manager.Manager, batchJobs bool) {
	t.Helper()
	gv := gangKind.GroupVersionKind().GroupVersion()
	mgr.GetScheme().AddKnownTypeWithName(gv.WithKind("Gang"), &Gang{})
	mgr.GetScheme().AddKnownTypeWithName(gv.WithKind("GangList"), &gangList{})
	if _, err := jkcr.Setup(mgr, jkcr.Options[*Gang]{Type: gangType, ChildManagedBy: jobControllerName,
		Config: reconcile.Config{Name: controllerName, Owner: gangKind}, SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	if !batchJobs {
		if _, err := jkcr.Setup(mgr, jkcr.Options[*batchv1.Job]{Type: reconcile.JobType,
			Config: reconcile.Config{Name: jobControllerName}, SkipNameValidation: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := kueue.Setup(ctx, mgr, gangType, kueue.Options{ControllerName: controllerName}); err != nil {
		t.Fatal(err)
	}
}

// gang returns a queued, suspended Gang of two roles: workers, replicas
// children of parallelism pods each, and one driver child of one pod; every
// pod asks for one CPU.
func (cl *cluster) gang(name string, replicas, parallelism int32) *Gang {
	role := func(name string, replicas, parallelism int32) GangRole {
		return GangRole{Name: name, Replicas: replicas, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism), CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				NodeSelector: map[string]string{"disk": "ssd"},
				Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}}
	}
	return &Gang{
		ObjectMeta: metav1.ObjectMeta{Namespace: cl.namespace, Name: name, Labels: map[string]string{constants.QueueLabel: "lq"}},
		Spec: GangSpec{Suspend: ptr.To(true), ManagedBy: ptr.To(controllerName),
			Roles: []GangRole{role("workers", replicas, parallelism), role("driver", 1, 1)}},
	}
}

func (cl *cluster) getGang(t *testing.T, name string) *Gang {
	t.Helper()
	var g Gang
	if err := cl.c.Get(context.Background(), client.ObjectKey{Namespace: cl.namespace, Name: name}, &g); err != nil {
		t.Fatalf("reading Gang %s: %v", name, err)
	}
	return &g
}

// children returns the child Jobs of the Gang name, by name.
func (cl *cluster) children(t *testing.T, name string) map[string]*batchv1.Job {
	t.Helper()
	var jobs batchv1.JobList
	if err := cl.c.List(context.Background(), &jobs, client.InNamespace(cl.namespace)); err != nil {
		t.Fatal(err)
	}
	out := map[string]*batchv1.Job{}
	for i := range jobs.Items {
		if ref := metav1.GetControllerOf(&jobs.Items[i]); ref != nil && ref.Kind == "Gang" && ref.Name == name {
			out[jobs.Items[i].Name] = &jobs.Items[i]
		}
	}
	return out
}

// gangPods returns the pods of the children of the Gang name.
func (cl *cluster) gangPods(t *testing.T, name string) int {
	t.Helper()
	n := 0
	for child := range cl.children(t, name) {
		n += cl.pods(t, child)
	}
	return n
}

// childNames are the names of a Gang's children: JobSet's <group>-<role>-<index>.
func childNames(gang string, workers int) []string {
	out := []string{gang + "-driver-0"}
	for i := range workers {
		out = append(out, fmt.Sprintf("%s-workers-%d", gang, i))
	}
	return out
}

// A group of child Jobs is one Workload of a pod set per role, counted
// replicas x parallelism: admitted, its children run with the flavour's node
// selector (merged into the Gang's own templates); a role whose children
// succeeded gives its pods back (reclaimable) and lets a waiting owner in;
// the quota is released when the Gang completes.
func TestGangQueued(t *testing.T) {
	cl := start(t, "5", func(o *options) { o.gangs = true })
	cl.create(t, cl.gang("gang", 2, 2))
	eventually(t, "the Gang admitted and its five pods started", func() bool {
		n := 0
		for _, c := range childNames("gang", 2) {
			n += len(cl.kubelet.selectors(c))
		}
		return conditionTrue(cl.workloadOf(t, "Gang", "gang"), kueueapi.WorkloadAdmitted) && n == 5
	})
	var sets []string
	for _, ps := range cl.workloadOf(t, "Gang", "gang").Spec.PodSets {
		sets = append(sets, fmt.Sprintf("%s=%d", ps.Name, ps.Count))
	}
	if fmt.Sprint(sets) != "[workers=4 driver=1]" {
		t.Fatalf("Workload pod sets = %v, want [workers=4 driver=1]", sets)
	}
	for _, c := range childNames("gang", 2) {
		for _, sel := range cl.kubelet.selectors(c) {
			if sel["pool"] != cl.cq || sel["disk"] != "ssd" {
				t.Fatalf("a pod of child %s started with node selector %v, want pool=%s and disk=ssd", c, sel, cl.cq)
			}
		}
	}
	for _, r := range cl.getGang(t, "gang").Spec.Roles {
		if r.Template.Spec.Template.Spec.NodeSelector["pool"] != cl.cq {
			t.Fatalf("Gang role %s's template node selector %v, want the flavour's pool=%s merged in", r.Name, r.Template.Spec.Template.Spec.NodeSelector, cl.cq)
		}
	}
	cl.create(t, cl.task("small", 1))
	eventually(t, "a Workload for Task small", func() bool { return cl.workload(t, "small") != nil })
	if conditionTrue(cl.workload(t, "small"), kueueapi.WorkloadQuotaReserved) {
		t.Fatal("Task small got quota while the Gang holds it all")
	}
	cl.kubelet.finish("gang-driver-0")
	eventually(t, "the driver's pod reclaimed and Task small admitted while the Gang runs", func() bool {
		wl := cl.workloadOf(t, "Gang", "gang")
		return wl != nil && len(wl.Status.ReclaimablePods) == 1 && wl.Status.ReclaimablePods[0].Name == "driver" &&
			wl.Status.ReclaimablePods[0].Count == 1 && conditionTrue(cl.workload(t, "small"), kueueapi.WorkloadAdmitted) &&
			groups.Finished(cl.getGang(t, "gang").Status.Conditions) == nil
	})
	for _, c := range childNames("gang", 2) {
		cl.kubelet.finish(c)
	}
	cl.kubelet.finish("small")
	eventually(t, "the Gang Completed and its Workload Finished", func() bool {
		c := groups.Finished(cl.getGang(t, "gang").Status.Conditions)
		return c != nil && c.Type == plaingroup.ConditionCompleted && conditionTrue(cl.workloadOf(t, "Gang", "gang"), kueueapi.WorkloadFinished)
	})
	eventually(t, "Task small Complete and the ClusterQueue's reservation released", func() bool {
		return complete(cl.get(t, "small")) && cl.usage(t) == 0
	})
}

// A higher-priority owner preempts a running Gang: the Gang is suspended, its
// children suspended with no pod left, its templates restored (the flavour's
// node selector gone from the Gang); it is admitted again once the quota is
// free and completes.
func TestGangPreempted(t *testing.T) {
	cl := start(t, "3", func(o *options) { o.gangs = true })
	for name, value := range map[string]int32{cl.cq + "-low": 10, cl.cq + "-high": 1000} {
		cl.create(t, &kueueapi.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
	}
	low := cl.gang("low", 1, 2)
	low.Labels[constants.WorkloadPriorityClassLabel] = cl.cq + "-low"
	cl.create(t, low)
	eventually(t, "Gang low running its three pods", func() bool { return cl.gangPods(t, "low") == 3 && len(cl.kubelet.selectors("low-workers-0")) == 2 })
	high := cl.task("high", 2)
	high.Labels[constants.WorkloadPriorityClassLabel] = cl.cq + "-high"
	cl.create(t, high)
	eventually(t, "Gang low evicted and suspended, its children suspended with no pod left", func() bool {
		g := cl.getGang(t, "low")
		if !conditionTrue(cl.workloadOf(t, "Gang", "low"), kueueapi.WorkloadEvicted) || !ptr.Deref(g.Spec.Suspend, false) || cl.gangPods(t, "low") != 0 {
			return false
		}
		for _, c := range cl.children(t, "low") {
			if !ptr.Deref(c.Spec.Suspend, false) {
				return false
			}
		}
		return true
	})
	for _, r := range cl.getGang(t, "low").Spec.Roles {
		if sel := r.Template.Spec.Template.Spec.NodeSelector; sel["pool"] != "" || sel["disk"] != "ssd" {
			t.Fatalf("preempted Gang role %s's template node selector %v, want the flavour's restored away and disk=ssd kept", r.Name, sel)
		}
	}
	eventually(t, "Task high admitted and running", func() bool {
		return conditionTrue(cl.workload(t, "high"), kueueapi.WorkloadAdmitted) && cl.get(t, "high").Status.Active == 2
	})
	cl.kubelet.finish("high")
	eventually(t, "Task high Complete", func() bool { return complete(cl.get(t, "high")) })
	eventually(t, "Gang low admitted again and running", func() bool {
		return conditionTrue(cl.workloadOf(t, "Gang", "low"), kueueapi.WorkloadAdmitted) && !ptr.Deref(cl.getGang(t, "low").Spec.Suspend, true) &&
			cl.gangPods(t, "low") == 3
	})
	for _, c := range childNames("low", 1) {
		cl.kubelet.finish(c)
	}
	eventually(t, "Gang low Completed", func() bool {
		c := groups.Finished(cl.getGang(t, "low").Status.Conditions)
		return c != nil && c.Type == plaingroup.ConditionCompleted
	})
	for name, c := range cl.children(t, "low") {
		want := int32(2)
		if name == "low-driver-0" {
			want = 1
		}
		if c.Status.Succeeded != want || c.Status.Failed != 0 {
			t.Errorf("child %s: succeeded %d, failed %d; want %d, 0 (each completion once, the suspension's pods counted neither way)", name, c.Status.Succeeded, c.Status.Failed, want)
		}
	}
	eventually(t, "the ClusterQueue's reservation released", func() bool { return cl.usage(t) == 0 })
}
