package reconciletest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// testGroup is a group of roles run as child Jobs, as a user's JobSet-like
// custom resource would be.
type testGroup struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Spec      plaingroup.Spec
	Templates []batchv1.JobTemplateSpec
	Status    childjobs.Status
}

func (g *testGroup) DeepCopyObject() runtime.Object {
	out := &testGroup{TypeMeta: g.TypeMeta, Spec: g.Spec, Status: g.Status}
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Templates = make([]batchv1.JobTemplateSpec, len(g.Templates))
	for i := range g.Templates {
		g.Templates[i].DeepCopyInto(&out.Templates[i])
	}
	out.Status.Conditions = append([]metav1.Condition(nil), g.Status.Conditions...)
	out.Status.ReplicatedJobs = append([]plaingroup.RoleStatus(nil), g.Status.ReplicatedJobs...)
	return out
}

var groupKind = owner.Kind{Group: "groups.example.com", Version: "v1", Kind: "Group", Finalizer: "groups.example.com/owns-no-pods"}

var groupType = reconcile.Type[*testGroup]{
	New: func() *testGroup { return &testGroup{} },
	ChildJobs: func(g *testGroup) (*childjobs.Input, error) {
		return &childjobs.Input{
			Name: g.Name, Namespace: g.Namespace, UID: g.UID, Generation: g.Generation,
			ResourceVersion: g.ResourceVersion, Object: g, Owner: groupKind.GroupVersionKind(),
			Deleting: g.DeletionTimestamp != nil, Spec: g.Spec, Templates: g.Templates, Status: g.Status,
		}, nil
	},
	SetChildJobsStatus: func(g *testGroup, st childjobs.Status) error { g.Status = st; return nil },
}

// A group of a leader and two workers, as child Jobs, runs to completion on the
// rig: the group synced by SyncChildJobs, its children by the Store's Job
// controller, every pod counted and no finalizer left.
func TestStoreChildJobs(t *testing.T) {
	tests := []struct {
		name         string
		failFirst    int // pods the kubelet fails before it lets pods succeed
		wantRestarts int32
	}{
		{name: "every pod succeeds"},
		{name: "a worker fails: the group restarts once, its old children deleted (foreground)", failFirst: 1, wantRestarts: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runStoreChildJobs(t, tc.failFirst, tc.wantRestarts) })
	}
}

func runStoreChildJobs(t *testing.T, failFirst int, wantRestarts int32) {
	c, s := NewStore(Options{Owner: groupKind, Seed: 5}, groupType)
	r, err := reconcile.New(reconcile.Config{Name: plaingroup.ControllerName, Owner: groupKind, Clock: c.Clock()}, nil, nil)
	require.NoError(t, err)
	tmpl := func(n int32) batchv1.JobTemplateSpec {
		return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To(n), Parallelism: ptr.To(n), BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "x"}}}}}}
	}
	_, err = s.Create(&testGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "run"},
		Spec: plaingroup.Spec{Roles: []plaingroup.Role{{Name: "leader", Replicas: 1}, {Name: "workers", Replicas: 1}},
			FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: 2}},
		Templates: []batchv1.JobTemplateSpec{tmpl(1), tmpl(2)}})
	require.NoError(t, err)
	if failFirst > 0 {
		c.Kubelet().SetScript(FailFirst(failFirst, 1))
	} else {
		c.Kubelet().SetScript(SucceedPods())
	}
	d := NewDriver(c, r)
	d.SyncFunc, d.DoneFunc = s.SyncFunc(r), s.DoneFunc()
	_, err = d.Run(context.Background(), "ns", "run", 100)
	require.NoError(t, err)
	got, err := s.Get("ns", "run")
	require.NoError(t, err)
	require.Equal(t, plaingroup.ConditionCompleted, got.Status.TerminalState)
	require.Equal(t, wantRestarts, got.Status.Restarts)
	children := 0
	for _, j := range c.Jobs().List() {
		children++
		require.Equal(t, childJobController, ptr.Deref(j.Spec.ManagedBy, ""), "child %s", j.Name)
	}
	require.Equal(t, 2, children)
	succeeded := 0
	for _, p := range c.ListPods("ns") {
		require.False(t, owner.BatchJob.HasFinalizer(p), "pod %s keeps the finalizer", p.Name)
		if p.Status.Phase == corev1.PodSucceeded {
			succeeded++
		}
	}
	require.Equal(t, 3, succeeded, "the pods of the last attempt succeeded")
}
