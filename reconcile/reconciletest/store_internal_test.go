package reconciletest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

var storeKind = owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/tracking"}

// taskType is a Job-shaped reconcile.Type over the rig's Task, as a user's
// custom resource in Job terms would have; refuse makes its conversion fail.
func taskType(refuse bool) reconcile.Type[*Task] {
	return reconcile.Type[*Task]{
		New: func() *Task { return &Task{} },
		Workload: func(t *Task) (*plan.Workload, error) {
			if refuse {
				return nil, errors.New("spec.completions: refused")
			}
			return t.Workload(), nil
		},
		SetStatus: func(t *Task, st batchv1.JobStatus) { t.Status = st },
		ManagedBy: func(t *Task) *string { return t.Spec.ManagedBy },
	}
}

// The rig presents every owner state as production does: the facts the Store
// gives the Cluster and the Driver (stored and cached, and in its owner events)
// are reconcile.Type.OrphanOwner's, which controllerruntime.Setup reads. A rig that presented a state otherwise (a
// finished owner of roles as finished, an unset managedBy as the Job
// controller's) fails here.
func TestStoreFactsAreProductions(t *testing.T) {
	done := batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}
	finished := ownedpods.Status{TerminalState: plaingroup.ConditionCompleted,
		Conditions: []metav1.Condition{{Type: plaingroup.ConditionCompleted, Status: metav1.ConditionTrue, Reason: "AllJobsCompleted"}}}
	tests := []struct {
		name string
		run  func(t *testing.T) (got, want any)
	}{
		{name: "Job-shaped, running, no managedBy", run: func(t *testing.T) (any, any) {
			return taskFacts(t, taskType(false), nil, batchv1.JobStatus{})
		}},
		{name: "Job-shaped, finished", run: func(t *testing.T) (any, any) {
			return taskFacts(t, taskType(false), ptr.To("me"), done)
		}},
		{name: "Job-shaped, refused by its conversion", run: func(t *testing.T) (any, any) {
			return taskFacts(t, taskType(true), ptr.To("me"), done)
		}},
		{name: "roles, running", run: func(t *testing.T) (any, any) { return runFacts(t, ownedpods.Status{}) }},
		{name: "roles, finished with pods still stopping", run: func(t *testing.T) (any, any) { return runFacts(t, finished) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, want := tc.run(t)
			require.Equal(t, want, got)
		})
	}
}

func taskFacts(t *testing.T, typ reconcile.Type[*Task], managedBy *string, st batchv1.JobStatus) (any, any) {
	c, s := NewStore(Options{Owner: storeKind}, typ)
	job := NewJob("ns", "train", 2, 2)
	task := &Task{ObjectMeta: job.ObjectMeta, Spec: job.Spec, Status: st}
	task.Spec.ManagedBy = managedBy
	stored, err := s.Create(task)
	require.NoError(t, err)
	return clusterFacts(t, c), typ.OrphanOwner(stored, storeKind)
}

// clusterFacts returns the facts the Cluster's readers (a Driver's pod events
// and orphan cleanup) get of ns/train: the same from the Store and, once the
// watch events are delivered, from the Cache, and in the owner events.
func clusterFacts(t *testing.T, c *Cluster) *finalizers.OrphanOwner {
	t.Helper()
	var events []reconcile.OwnerEvent
	c.mu.Lock()
	c.owners().onEventLocked(func(ev reconcile.OwnerEvent) { events = append(events, ev) })
	c.mu.Unlock()
	live := c.owners().liveFacts("ns", "train")
	require.Nil(t, c.owners().cachedFacts("ns", "train"), "nothing delivered yet")
	c.Cache().DeliverAll()
	require.Equal(t, live, c.owners().cachedFacts("ns", "train"), "the cached facts are the stored ones")
	require.Len(t, events, 1)
	require.Equal(t, live, withUID(events[0].New.OrphanOwner(storeKind), events[0].New.Object), "the owner event presents the owner alike")
	return live
}

// withUID sets the UID of f to obj's, as reconcile.Type.OrphanOwner does.
func withUID(f *finalizers.OrphanOwner, obj any) *finalizers.OrphanOwner {
	f.UID = obj.(interface{ GetUID() types.UID }).GetUID()
	return f
}

func runFacts(t *testing.T, st ownedpods.Status) (any, any) {
	c, s := NewStore(Options{Owner: storeKind}, RunType)
	stored, err := s.Create(&Run{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train"},
		Spec: ownedpods.Workload{ManagedBy: ptr.To("me"), Roles: []ownedpods.Role{{Name: "worker"}}}, Status: st})
	require.NoError(t, err)
	got := clusterFacts(t, c)
	require.False(t, got.Finished, "an owner of roles is never finished to its readers")
	return got, RunType.OrphanOwner(stored, storeKind)
}

// A Job-shaped owner of the test's own type runs to completion through the
// Store: SyncFunc syncs it with Reconciler.Sync and the Store is its
// StatusWriter, with the API server's status rules.
func TestStoreJobShaped(t *testing.T) {
	const name = "ml.example.com/controller"
	c, s := NewStore(Options{Owner: storeKind, Seed: 1}, taskType(false))
	r, err := reconcile.New(reconcile.Config{Name: name, Owner: storeKind, Clock: c.Clock()}, c, s)
	require.NoError(t, err)
	job := NewJob("ns", "train", 3, 2)
	task := &Task{ObjectMeta: job.ObjectMeta, Spec: job.Spec}
	task.Spec.ManagedBy = ptr.To(name)
	_, err = s.Create(task)
	require.NoError(t, err)
	c.Kubelet().SetScript(SucceedPods())
	d := NewDriver(c, r)
	d.SyncFunc, d.DoneFunc = s.SyncFunc(r), s.DoneFunc()
	_, err = d.Run(context.Background(), "ns", "train", 100)
	require.NoError(t, err)
	got, err := s.Get("ns", "train")
	require.NoError(t, err)
	require.Equal(t, int32(3), got.Status.Succeeded)
	require.NotNil(t, got.Status.CompletionTime)
	for _, p := range c.ListPods("ns") {
		require.False(t, storeKind.HasFinalizer(p), "pod %s keeps the finalizer", p.Name)
	}
	writes := 0
	for _, call := range c.Calls() {
		if call.Op == OpUpdateStatus {
			writes++
		}
	}
	require.Positive(t, writes, "the status went through the Store's subresource")
}

// A status write the API server's rules refuse (a counter going down) is
// Invalid, and nothing is stored.
func TestStoreWriteStatusValidates(t *testing.T) {
	_, s := NewStore(Options{Owner: storeKind}, taskType(false))
	job := NewJob("ns", "train", 3, 2)
	stored, err := s.Create(&Task{ObjectMeta: job.ObjectMeta, Spec: job.Spec, Status: batchv1.JobStatus{Succeeded: 2}})
	require.NoError(t, err)
	_, err = s.WriteStatus(t.Context(), stored.Workload(), batchv1.JobStatus{Succeeded: 1})
	require.Error(t, err)
	require.Contains(t, err.Error(), "status.succeeded")
	again, err := s.Get("ns", "train")
	require.NoError(t, err)
	require.Equal(t, int32(2), again.Status.Succeeded)
}
