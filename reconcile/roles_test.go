package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// The tests of SyncRoles execute hand-built ownedpods.Plans (reconcile.SetComputeRoles)
// against a reconciletest Cluster for the pods and a store of their own for the
// owner, a custom resource with a ownedpods.Status.

var groupKind = owner.Kind{Group: "groups.example.com", Version: "v1", Kind: "Group", Finalizer: "groups.example.com/tracking"}

// group is an owner of two roles, launcher and worker.
type group struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Status ownedpods.Status
}

func (g *group) DeepCopyObject() runtime.Object {
	out := *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status = copyStatus(g.Status)
	return &out
}

func copyStatus(st ownedpods.Status) ownedpods.Status {
	out := st
	out.Conditions = nil
	for _, c := range st.Conditions {
		out.Conditions = append(out.Conditions, *c.DeepCopy())
	}
	out.Roles = nil
	for _, r := range st.Roles {
		r.Job = *r.Job.DeepCopy()
		out.Roles = append(out.Roles, r)
	}
	return out
}

// workload is what the group's controller gives SyncRoles.
func (g *group) workload() *ownedpods.Workload {
	spec := func(n int32) plan.Spec {
		return plan.Spec{Completions: ptr.To(n), Parallelism: ptr.To(n), CompletionMode: ptr.To(batchv1.IndexedCompletion)}
	}
	c := g.DeepCopyObject().(*group)
	return &ownedpods.Workload{
		Namespace: c.Namespace, Name: c.Name, UID: c.UID,
		Generation: c.Generation, ResourceVersion: c.ResourceVersion, Object: c,
		ManagedBy: ptr.To(testName),
		Roles:     []ownedpods.Role{{Name: "launcher", Spec: spec(1)}, {Name: "worker", Spec: spec(2)}},
		Status:    c.Status,
	}
}

// groupStore holds one group and writes its status with the resourceVersion
// precondition. It records, for each write that reached it, how many calls the
// Cluster had logged before it: the order of the status against the pod calls.
type groupStore struct {
	c           *reconciletest.Cluster
	mu          sync.Mutex
	stored      *group
	callsBefore []int
	// fail holds the errors of the next writes, in order.
	fail []error
}

var _ ownedpods.StatusWriter = (*groupStore)(nil)

func (s *groupStore) WriteStatus(_ context.Context, w *ownedpods.Workload, st ownedpods.Status) (*ownedpods.Workload, error) {
	calls := len(s.c.Calls())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.callsBefore = append(s.callsBefore, calls)
	if len(s.fail) > 0 {
		err := s.fail[0]
		s.fail = s.fail[1:]
		return nil, err
	}
	if w.UID != s.stored.UID || w.ResourceVersion != s.stored.ResourceVersion {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: groupKind.Group, Resource: "groups"}, w.Name, errors.New("stale resourceVersion"))
	}
	next := s.stored.DeepCopyObject().(*group)
	next.Status = copyStatus(st)
	rv, _ := strconv.Atoi(next.ResourceVersion)
	next.ResourceVersion = strconv.Itoa(rv + 1)
	s.stored = next
	return next.workload(), nil
}

func (s *groupStore) workload() *ownedpods.Workload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored.workload()
}

func (s *groupStore) writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.callsBefore)
}

// rolesEnv wires a Cluster, a group store, a Reconciler of groups and the planner
// that stands in for ownedpods.Compute.
type rolesEnv struct {
	c       *reconciletest.Cluster
	r       *reconcile.Reconciler
	cfg     reconcile.Config // r's, with the defaults filled in (its stores)
	store   *groupStore
	events  *reconciletest.Recorder
	metrics *reconciletest.Recorder
	planner func(in ownedpods.Input) (*ownedpods.Plan, error)
	inputs  []ownedpods.Input
}

func newRolesEnv(t *testing.T, planner func(in ownedpods.Input) (*ownedpods.Plan, error)) *rolesEnv {
	t.Helper()
	c := reconciletest.NewCluster(reconciletest.Options{Seed: 5})
	e := &rolesEnv{
		c:       c,
		store:   &groupStore{c: c, stored: newGroup("g-1")},
		events:  &reconciletest.Recorder{},
		metrics: &reconciletest.Recorder{},
		planner: planner,
	}
	cfg, err := reconcile.Config{
		Name: testName, Owner: groupKind, Clock: c.Clock(), Events: e.events, Metrics: e.metrics,
		FinalizerRemovalParallelism: 1,
	}.WithDefaults()
	require.NoError(t, err)
	r, err := reconcile.New(cfg, c, reconcile.StatusWriterFunc(func(context.Context, *plan.Workload, batchv1.JobStatus) (*plan.Workload, error) {
		return nil, errors.New("no Job status is written in these tests")
	}))
	require.NoError(t, err)
	e.r, e.cfg = r, cfg
	t.Cleanup(reconcile.SetComputeRoles(func(in ownedpods.Input) (*ownedpods.Plan, error) {
		e.inputs = append(e.inputs, in)
		return e.planner(in)
	}))
	return e
}

func newGroup(uid types.UID) *group {
	return &group{
		TypeMeta:   metav1.TypeMeta{APIVersion: "groups.example.com/v1", Kind: "Group"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", UID: uid, ResourceVersion: "1", Generation: 1},
	}
}

// list lists the group's pods from the Cluster itself: a cache that has caught up.
func (e *rolesEnv) list(w *ownedpods.Workload) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, p := range e.c.ListPods(w.Namespace) {
		if groupKind.IsControlledBy(p, string(w.UID)) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (e *rolesEnv) sync(t *testing.T) (reconcile.Result, error) {
	t.Helper()
	return e.r.SyncRoles(t.Context(), e.store.workload(), e.list, e.store)
}

func (e *rolesEnv) ops() []reconciletest.Op {
	var out []reconciletest.Op
	for _, c := range e.c.Calls() {
		out = append(out, c.Op)
	}
	return out
}

// rolePod is a pod of the group's role as ownedpods.Compute would create it.
func rolePod(g *group, role, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name,
			Labels:          map[string]string{plaingroup.LabelRoleName: role, plaingroup.LabelRestartAttempt: "0"},
			Finalizers:      []string{groupKind.Finalizer},
			OwnerReferences: []metav1.OwnerReference{groupKind.NewControllerRef(g)},
		},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "main"}}},
	}
}

// addPod stores a pod of the group, as an earlier sync would have created it.
func (e *rolesEnv) addPod(t *testing.T, role, name string) *corev1.Pod {
	t.Helper()
	p, err := e.c.AddPod(rolePod(e.store.stored, role, name))
	require.NoError(t, err)
	return p
}

// statusWith returns st with the worker role's totals moved on by n succeeded pods.
func statusWith(st ownedpods.Status, n int32) ownedpods.Status {
	out := copyStatus(st)
	if len(out.Roles) == 0 {
		out.Roles = []ownedpods.RoleStatus{{Name: "launcher"}, {Name: "worker"}}
	}
	out.Roles[1].Succeeded += n
	out.Roles[1].Job.Succeeded += n
	return out
}

// A plan with a status write, a removal, a deletion and creations is executed in
// ownedpods.Plan's order: the status first, in one write before any pod call, then the
// removal, then the deletion, then the creations.
func TestSyncRolesOrder(t *testing.T) {
	e := newRolesEnv(t, nil)
	done := e.addPod(t, "worker", "g-worker-0-aaaaa")
	require.NoError(t, e.c.Kubelet().Run(ns, done.Name))
	require.NoError(t, e.c.Kubelet().Succeed(ns, done.Name))
	done, err := e.c.GetPod(t.Context(), ns, done.Name)
	require.NoError(t, err)
	extra := e.addPod(t, "worker", "g-worker-2-aaaaa")
	g := e.store.stored
	e.planner = func(in ownedpods.Input) (*ownedpods.Plan, error) {
		return &ownedpods.Plan{
			Status:           statusWith(in.Workload.Status, 0),
			StatusChanged:    true,
			RemoveFinalizers: []plan.PodAction{{Pod: done, Reason: "finished"}},
			Delete:           []plan.Deletion{{Pod: extra, RemoveFinalizerFirst: true, Reason: "scale down"}},
			Create: []plan.Creation{
				{Pod: rolePod(g, "launcher", "g-launcher-0-bbbbb"), Index: 0, Reason: "new"},
				{Pod: rolePod(g, "worker", "g-worker-1-bbbbb"), Index: 1, Reason: "new"},
			},
			Events: []plan.Event{{Type: corev1.EventTypeNormal, Reason: "Planned", Message: "planned"}},
		}, nil
	}
	res, err := e.sync(t)
	require.NoError(t, err)
	assert.Equal(t, 1, res.StatusWrites)
	assert.Equal(t, []int{0}, e.store.callsBefore, "the status is written before any pod call")
	assert.Equal(t, []reconciletest.Op{
		reconciletest.OpPatchPod,                            // the finished pod's finalizer
		reconciletest.OpPatchPod, reconciletest.OpDeletePod, // the extra pod: finalizer first, then the deletion
		reconciletest.OpCreatePod, reconciletest.OpCreatePod,
	}, e.ops())
	assert.Equal(t, 2, res.FinalizersRemoved)
	assert.Equal(t, 1, res.Deleted)
	assert.Equal(t, 2, res.Created)
	assert.Empty(t, res.Retry)
	assert.Nil(t, res.Plan, "Report.Plan is a Job's plan")
	assert.Equal(t, []string{"Planned", reconcile.ReasonSuccessfulDelete, reconcile.ReasonSuccessfulCreate, reconcile.ReasonSuccessfulCreate}, e.events.Reasons())
	assert.Equal(t, 1, e.metrics.Get("job_syncs_total{Roles,success,pods_created}"))
	assert.Equal(t, 2, e.metrics.Get("job_pods_creation_total{new,succeeded}"))
	for _, p := range e.c.ListPods(ns) {
		if p.Name == done.Name {
			assert.False(t, groupKind.HasFinalizer(p), "finalizer of %s", p.Name)
		}
	}
}

// The status write decides whether the pod calls go: a conflict stops the sync
// with Retry and nothing else done, another error stops it with the error, an
// unchanged status is not written and the pod calls go. An owner the planner
// refuses or skips gets no call at all.
func TestSyncRolesStatusStep(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: groupKind.Group, Resource: "groups"}, "g", errors.New("changed"))
	tests := []struct {
		name          string
		unchanged     bool
		writeErr      error
		planErr       error
		skip          string
		wantOps       []reconciletest.Op
		wantWrites    int
		wantErr       bool
		wantRetry     bool
		wantSkipped   string
		wantEvents    []string
		wantSyncLabel string
	}{
		{
			name:          "written, then the pod calls",
			wantOps:       []reconciletest.Op{reconciletest.OpPatchPod, reconciletest.OpDeletePod, reconciletest.OpCreatePod},
			wantWrites:    1,
			wantEvents:    []string{"Planned", reconcile.ReasonSuccessfulDelete, reconcile.ReasonSuccessfulCreate},
			wantSyncLabel: "job_syncs_total{Roles,success,pods_created}",
		},
		{
			name:          "unchanged: no write, the pod calls go",
			unchanged:     true,
			wantOps:       []reconciletest.Op{reconciletest.OpPatchPod, reconciletest.OpDeletePod, reconciletest.OpCreatePod},
			wantEvents:    []string{"Planned", reconcile.ReasonSuccessfulDelete, reconcile.ReasonSuccessfulCreate},
			wantSyncLabel: "job_syncs_total{Roles,success,pods_created}",
		},
		{
			name:          "conflict: retry, nothing else done",
			writeErr:      conflict,
			wantRetry:     true,
			wantSyncLabel: "job_syncs_total{Roles,success,pods_created}",
		},
		{
			name:          "failed write: the error, no removal",
			writeErr:      reconciletest.ServerError(),
			wantErr:       true,
			wantSyncLabel: "job_syncs_total{Roles,error,pods_created}",
		},
		{
			name:          "invalid owner: InvalidJob, skipped",
			planErr:       fmt.Errorf("%w: roles[1].name: \"Worker\": not a DNS label", plan.ErrInvalidJob),
			wantSkipped:   `roles[1].name: "Worker"`,
			wantEvents:    []string{reconcile.ReasonInvalidJob},
			wantSyncLabel: "job_syncs_total{Roles,success,reconciling}",
		},
		{
			name:          "plan error: returned",
			planErr:       errors.New("boom"),
			wantErr:       true,
			wantSyncLabel: "job_syncs_total{Roles,error,reconciling}",
		},
		{
			name:          "skipped by the plan",
			skip:          "managed by another controller",
			wantSkipped:   "managed by another controller",
			wantSyncLabel: "job_syncs_total{Roles,success,reconciling}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newRolesEnv(t, nil)
			done := e.addPod(t, "worker", "g-worker-0-aaaaa")
			extra := e.addPod(t, "worker", "g-worker-2-aaaaa")
			g := e.store.stored
			e.planner = func(in ownedpods.Input) (*ownedpods.Plan, error) {
				if tc.planErr != nil {
					return nil, tc.planErr
				}
				if tc.skip != "" {
					return &ownedpods.Plan{Skip: tc.skip}, nil
				}
				return &ownedpods.Plan{
					Status:           statusWith(in.Workload.Status, 1),
					StatusChanged:    !tc.unchanged,
					RemoveFinalizers: []plan.PodAction{{Pod: done}},
					Delete:           []plan.Deletion{{Pod: extra}},
					Create:           []plan.Creation{{Pod: rolePod(g, "worker", "g-worker-1-bbbbb"), Index: 1}},
					Events:           []plan.Event{{Type: corev1.EventTypeNormal, Reason: "Planned", Message: "planned"}},
				}, nil
			}
			if tc.writeErr != nil {
				e.store.fail = []error{tc.writeErr}
			}
			res, err := e.sync(t)
			if tc.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantOps, e.ops(), "pod calls")
			assert.Equal(t, tc.wantWrites, res.StatusWrites, "Report.StatusWrites")
			assert.Equal(t, tc.wantRetry, res.Retry != "", "Report.Retry = %q", res.Retry)
			if tc.wantRetry {
				assert.Positive(t, res.RequeueAfter)
				assert.LessOrEqual(t, res.RequeueAfter, e.cfg.ConflictRequeue)
			}
			if tc.wantSkipped == "" {
				assert.Empty(t, res.Skipped)
			} else {
				assert.Contains(t, res.Skipped, tc.wantSkipped)
			}
			if len(tc.wantEvents) == 0 {
				assert.Empty(t, e.events.Reasons(), "events")
			} else {
				assert.Equal(t, tc.wantEvents, e.events.Reasons(), "events")
			}
			assert.Equal(t, 1, e.metrics.Get(tc.wantSyncLabel), "metrics %v", e.metrics.All())
			if tc.writeErr != nil {
				assert.False(t, e.cfg.FinalizerRemovals.Has(reconcile.Key(ns, "g"), done.UID), "no removal recorded")
				assert.True(t, e.cfg.Expectations.Get(reconcile.Key(ns, "g")).Satisfied, "nothing expected")
			}
		})
	}
}

// Over many syncs, some with a changed status and some without, each sync writes
// the status at most once, before its pod calls, and each plan is computed from
// the owner as last written.
func TestSyncRolesOneWritePerSync(t *testing.T) {
	e := newRolesEnv(t, nil)
	g := e.store.stored
	sync := 0
	e.planner = func(in ownedpods.Input) (*ownedpods.Plan, error) {
		p := &ownedpods.Plan{
			Status:        statusWith(in.Workload.Status, 1),
			StatusChanged: sync%3 != 2,
			Create:        []plan.Creation{{Pod: rolePod(g, "worker", fmt.Sprintf("g-worker-%d-ccccc", sync)), Index: sync}},
		}
		return p, nil
	}
	wantWrites := 0
	for sync = range 12 {
		before := len(e.c.Calls())
		rv := e.store.workload().ResourceVersion
		res, err := e.sync(t)
		require.NoError(t, err, "sync %d", sync)
		require.LessOrEqual(t, res.StatusWrites, 1, "sync %d", sync)
		assert.Equal(t, rv, e.inputs[len(e.inputs)-1].Workload.ResourceVersion, "sync %d plans from the owner as written", sync)
		if sync%3 != 2 {
			wantWrites++
			assert.Equal(t, 1, res.StatusWrites, "sync %d", sync)
			assert.Equal(t, before, e.store.callsBefore[len(e.store.callsBefore)-1], "sync %d writes before its pod calls", sync)
		}
		assert.Equal(t, 1, res.Created, "sync %d", sync)
	}
	assert.Equal(t, wantWrites, e.store.writes())
	assert.Equal(t, int32(wantWrites), e.store.workload().Status.Roles[1].Succeeded)
}

// Every pod call is expected before it is made: the creation in the expectations,
// the deletion by UID, the finalizer removal as pending; the next sync sees the
// creations expected until their events arrive.
func TestSyncRolesExpectedBeforeCalls(t *testing.T) {
	e := newRolesEnv(t, nil)
	key := reconcile.Key(ns, "g")
	done := e.addPod(t, "worker", "g-worker-0-aaaaa")
	extra := e.addPod(t, "worker", "g-worker-9-aaaaa")
	g := e.store.stored
	e.planner = func(in ownedpods.Input) (*ownedpods.Plan, error) {
		p := &ownedpods.Plan{
			RemoveFinalizers: []plan.PodAction{{Pod: done}},
			Delete:           []plan.Deletion{{Pod: extra}},
		}
		for i := range 3 {
			p.Create = append(p.Create, plan.Creation{Pod: rolePod(g, "worker", fmt.Sprintf("g-worker-%d-ddddd", i+1)), Index: i + 1})
		}
		return p, nil
	}
	cfg := e.cfg
	var seen []string
	e.c.SetInterceptor(func(c reconciletest.Call) reconciletest.Outcome {
		switch c.Op {
		case reconciletest.OpCreatePod:
			seen = append(seen, fmt.Sprintf("create %s expected %d", c.Pod.Name, cfg.Expectations.Get(key).Creations))
		case reconciletest.OpDeletePod:
			seen = append(seen, fmt.Sprintf("delete %s expected %v", c.Name, cfg.Expectations.PendingDeletionUIDs(key).Has(c.UID)))
		case reconciletest.OpPatchPod:
			seen = append(seen, fmt.Sprintf("patch %s pending %v", c.Name, cfg.FinalizerRemovals.Has(key, done.UID)))
		}
		return reconciletest.Outcome{}
	})
	res, err := e.sync(t)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"patch g-worker-0-aaaaa pending true",
		"delete g-worker-9-aaaaa expected true",
		"create g-worker-1-ddddd expected 1",
		"create g-worker-2-ddddd expected 2",
		"create g-worker-3-ddddd expected 3",
	}, seen)
	assert.Equal(t, 3, res.Created)
	e.planner = func(ownedpods.Input) (*ownedpods.Plan, error) { return &ownedpods.Plan{}, nil }
	_, err = e.sync(t)
	require.NoError(t, err)
	assert.False(t, e.inputs[1].ExpectationsSatisfied, "the creations are expected until their events")
	assert.True(t, e.inputs[1].PendingFinalizerRemovals.Has(done.UID), "the removal is pending until the cache shows it")
}

// A named pod refused with AlreadyExists is read back as Sync does: the owner's own
// pod (an earlier request's) is not created again and stays expected; a pod that
// is not the owner's gives its name up and the pod is created under the next name
// of its index's sequence, derived from "<owner>-<role>".
func TestSyncRolesNamedPodAlreadyExists(t *testing.T) {
	const name = "g-worker-1-eeeee"
	tests := []struct {
		name        string
		ours        bool
		wantCreated int
		wantName    string
	}{
		{name: "the owner's own pod", ours: true, wantCreated: 0, wantName: name},
		{name: "a pod that is not the owner's", wantCreated: 1, wantName: indexes.NextPodName("g-worker", "g-1", 1, name)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newRolesEnv(t, nil)
			g := e.store.stored
			holder := rolePod(g, "worker", name)
			if !tc.ours {
				holder.OwnerReferences, holder.Finalizers = nil, nil
			}
			_, err := e.c.AddPod(holder)
			require.NoError(t, err)
			e.planner = func(in ownedpods.Input) (*ownedpods.Plan, error) {
				return &ownedpods.Plan{Create: []plan.Creation{{Pod: rolePod(g, "worker", name), Index: 1}}}, nil
			}
			res, err := e.sync(t)
			require.NoError(t, err)
			assert.Equal(t, tc.wantCreated, res.Created)
			var ours []string
			for _, p := range e.c.ListPods(ns) {
				if groupKind.IsControlledBy(p, "g-1") {
					ours = append(ours, p.Name)
				}
			}
			assert.Equal(t, []string{tc.wantName}, ours, "the group's pods")
			exp := e.cfg.Expectations.Get(reconcile.Key(ns, "g"))
			assert.Equal(t, 1, exp.Creations, "the group's pod stays expected until its event")
			if tc.ours {
				assert.Positive(t, res.RequeueAfter)
				assert.LessOrEqual(t, res.RequeueAfter, e.cfg.UncertainCreationTimeout)
			}
		})
	}
}

// A cached owner older than the last status write is synced as written; once the
// cache shows the write, the cached owner is used again.
func TestSyncRolesStaleCache(t *testing.T) {
	e := newRolesEnv(t, func(in ownedpods.Input) (*ownedpods.Plan, error) {
		return &ownedpods.Plan{Status: statusWith(in.Workload.Status, 1), StatusChanged: true}, nil
	})
	cached := e.store.workload()
	_, err := e.sync(t)
	require.NoError(t, err)
	written := e.store.workload()
	require.NotEqual(t, cached.ResourceVersion, written.ResourceVersion)

	e.planner = func(ownedpods.Input) (*ownedpods.Plan, error) { return &ownedpods.Plan{}, nil }
	res, err := e.r.SyncRoles(t.Context(), cached, e.list, e.store)
	require.NoError(t, err)
	assert.Empty(t, res.Skipped)
	got := e.inputs[len(e.inputs)-1].Workload
	assert.Equal(t, written.ResourceVersion, got.ResourceVersion, "synced as written")
	assert.Equal(t, written.Status, got.Status)

	_, err = e.r.SyncRoles(t.Context(), written, e.list, e.store)
	require.NoError(t, err)
	assert.Same(t, written, e.inputs[len(e.inputs)-1].Workload, "the cached owner once it shows the write")
}

// An owner recreated under the same name (a new UID) starts afresh: what the old
// one expected is forgotten, and the cache's view of the new one is trusted.
func TestSyncRolesNewUID(t *testing.T) {
	e := newRolesEnv(t, nil)
	g := e.store.stored
	e.planner = func(in ownedpods.Input) (*ownedpods.Plan, error) {
		return &ownedpods.Plan{
			Status: statusWith(in.Workload.Status, 1), StatusChanged: true,
			Create: []plan.Creation{{Pod: rolePod(g, "worker", "g-worker-0-fffff"), Index: 0}},
		}, nil
	}
	_, err := e.sync(t)
	require.NoError(t, err)
	key := reconcile.Key(ns, "g")
	require.False(t, e.cfg.Expectations.Get(key).Satisfied)

	// The group is deleted and created again, at a lower resourceVersion than the
	// old one's write would allow for the same UID.
	e.store.mu.Lock()
	e.store.stored = newGroup("g-2")
	e.store.mu.Unlock()
	e.planner = func(ownedpods.Input) (*ownedpods.Plan, error) { return &ownedpods.Plan{}, nil }
	res, err := e.sync(t)
	require.NoError(t, err)
	assert.Empty(t, res.Skipped, "not taken for a stale cache")
	in := e.inputs[len(e.inputs)-1]
	assert.True(t, in.ExpectationsSatisfied, "the old group's expectations are forgotten")
	assert.Equal(t, types.UID("g-2"), in.Workload.UID)
}

// The metrics: pods finished from the increase of the roles' totals, the group
// finished once, when its terminal condition is written.
func TestSyncRolesMetrics(t *testing.T) {
	e := newRolesEnv(t, nil)
	e.planner = func(in ownedpods.Input) (*ownedpods.Plan, error) {
		st := copyStatus(in.Workload.Status)
		st.Roles = []ownedpods.RoleStatus{{Name: "launcher", Succeeded: 1}, {Name: "worker", Succeeded: 2, Failed: 1}}
		st.TerminalState = "Completed"
		st.Conditions = []metav1.Condition{{Type: "Completed", Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "done"}}
		changed := len(in.Workload.Status.Conditions) == 0
		return &ownedpods.Plan{Status: st, StatusChanged: changed}, nil
	}
	for range 3 {
		_, err := e.sync(t)
		require.NoError(t, err)
	}
	assert.Equal(t, map[string]int{
		"job_syncs_total{Roles,success,tracking}":               1,
		"job_syncs_total{Roles,success,reconciling}":            2,
		"job_pods_finished_total{Roles,succeeded}":              3,
		"job_pods_finished_total{Roles,failed}":                 1,
		"jobs_finished_total{Roles,succeeded,AllJobsCompleted}": 1,
	}, e.metrics.All())
}

// Bad arguments are refused with ErrInvalidArgument, naming what is missing.
func TestSyncRolesInvalidArguments(t *testing.T) {
	e := newRolesEnv(t, func(ownedpods.Input) (*ownedpods.Plan, error) { return &ownedpods.Plan{}, nil })
	noObject := e.store.workload()
	noObject.Object = nil
	tests := []struct {
		name   string
		w      *ownedpods.Workload
		list   func(*ownedpods.Workload) ([]*corev1.Pod, error)
		status ownedpods.StatusWriter
		want   string
	}{
		{name: "nil workload", list: e.list, status: e.store, want: "workload is nil"},
		{name: "nil object", w: noObject, list: e.list, status: e.store, want: "Workload.Object is nil"},
		{name: "nil list", w: e.store.workload(), status: e.store, want: "list is nil"},
		{name: "nil status writer", w: e.store.workload(), list: e.list, want: "status writer is nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.r.SyncRoles(t.Context(), tc.w, tc.list, tc.status)
			require.ErrorIs(t, err, reconcile.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Empty(t, e.inputs, "nothing planned")
}

// protocolPlanner stands in for ownedpods.Compute with the one-write protocol for a
// single role "worker" of n pods: a finished pod is recorded in the role's ledger,
// its finalizer removed by the next sync, and it is counted by the write after its
// removal; the owner completes once n pods are counted.
func protocolPlanner(n int) func(in ownedpods.Input) (*ownedpods.Plan, error) {
	return func(in ownedpods.Input) (*ownedpods.Plan, error) {
		w := in.Workload
		st := copyStatus(w.Status)
		if len(st.Roles) == 0 {
			st.Roles = []ownedpods.RoleStatus{{Name: "worker"}}
		}
		role := &st.Roles[0]
		p := &ownedpods.Plan{}
		uncounted := map[types.UID]bool{}
		if u := role.Job.UncountedTerminatedPods; u != nil {
			for _, uid := range u.Succeeded {
				uncounted[uid] = true
			}
		}
		tracked := map[types.UID]bool{}
		for _, pod := range in.Pods {
			if !groupKind.HasFinalizer(pod) || in.PendingFinalizerRemovals.Has(pod.UID) {
				continue
			}
			tracked[pod.UID] = true
			switch {
			case pod.Status.Phase != corev1.PodSucceeded:
			case uncounted[pod.UID]:
				p.RemoveFinalizers = append(p.RemoveFinalizers, plan.PodAction{Pod: pod, Reason: "recorded"})
			default:
				if role.Job.UncountedTerminatedPods == nil {
					role.Job.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
				}
				role.Job.UncountedTerminatedPods.Succeeded = append(role.Job.UncountedTerminatedPods.Succeeded, pod.UID)
			}
		}
		if u := role.Job.UncountedTerminatedPods; u != nil {
			var left []types.UID
			for _, uid := range u.Succeeded {
				if tracked[uid] {
					left = append(left, uid)
					continue
				}
				role.Job.Succeeded++
				role.Succeeded++
			}
			u.Succeeded = left
			if len(left) == 0 {
				role.Job.UncountedTerminatedPods = nil
			}
		}
		if len(in.Pods) == 0 && role.Job.Succeeded == 0 && in.ExpectationsSatisfied {
			g := w.Object.(metav1.Object)
			for i := range n {
				pod := rolePod(&group{ObjectMeta: metav1.ObjectMeta{Name: g.GetName(), UID: g.GetUID()}}, "worker", fmt.Sprintf("%s-worker-%d-xxxxx", w.Name, i))
				pod.OwnerReferences = []metav1.OwnerReference{groupKind.NewControllerRef(g)}
				p.Create = append(p.Create, plan.Creation{Pod: pod, Index: i, Reason: "new"})
			}
		}
		if int(role.Job.Succeeded) == n && st.TerminalState == "" {
			st.TerminalState = "Completed"
			st.Conditions = []metav1.Condition{{Type: "Completed", Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "done", LastTransitionTime: metav1.NewTime(in.Now)}}
			p.Events = append(p.Events, plan.Event{Type: corev1.EventTypeNormal, Reason: "Completed", Message: "done"})
		}
		p.Status = st
		p.StatusChanged = !apiequality.Semantic.DeepEqual(st, w.Status)
		return p, nil
	}
}

// An owner of several roles runs to completion through reconciletest's Store of Runs
// and Driver (pods from the Cache, events delivered each step, a kubelet that runs
// and succeeds every pod): at most one status write per step, every pod counted
// once, no finalizer left.
func TestSyncRolesDriverRun(t *testing.T) {
	c, owners := reconciletest.NewStore(reconciletest.Options{Owner: groupKind, Seed: 2}, reconciletest.RunType)
	metrics, events := &reconciletest.Recorder{}, &reconciletest.Recorder{}
	r, err := reconcile.New(reconcile.Config{Name: testName, Owner: groupKind, Clock: c.Clock(), Metrics: metrics, Events: events, FinalizerRemovalParallelism: 1}, c, c)
	require.NoError(t, err)
	t.Cleanup(reconcile.SetComputeRoles(protocolPlanner(3)))
	_, err = owners.Create(runOf(&ownedpods.Workload{Namespace: ns, Name: "train", ManagedBy: ptr.To(testName), Roles: []ownedpods.Role{{Name: "worker"}}}))
	require.NoError(t, err)
	c.Kubelet().SetScript(reconciletest.SucceedPods())
	d := reconciletest.NewDriver(c, r)
	d.SyncFunc, d.DoneFunc = owners.SyncFunc(r), owners.DoneFunc()
	seen := 0
	d.OnStep = func(sr reconciletest.StepResult) {
		assert.NoError(t, sr.Err, "step %d", sr.Step)
		assert.LessOrEqual(t, sr.Result.StatusWrites, 1, "step %d", sr.Step)
		calls := c.Calls()
		var ops []reconciletest.Op
		for _, call := range calls[seen:] {
			ops = append(ops, call.Op)
		}
		seen = len(calls)
		for i, op := range ops {
			if op == reconciletest.OpUpdateStatus {
				assert.Zero(t, i, "step %d: the status write comes first: %v", sr.Step, ops)
			}
		}
	}
	rr, err := d.Run(t.Context(), ns, "train", 50)
	require.NoError(t, err)
	w, err := owners.Get(ns, "train")
	require.NoError(t, err)
	assert.Equal(t, "Completed", w.Status.TerminalState)
	assert.Equal(t, int32(3), w.Status.Roles[0].Succeeded)
	assert.Nil(t, w.Status.Roles[0].Job.UncountedTerminatedPods)
	for _, p := range c.ListPods(ns) {
		assert.False(t, groupKind.HasFinalizer(p), "pod %s keeps its finalizer", p.Name)
	}
	assert.Equal(t, 3, metrics.Get("job_pods_finished_total{Roles,succeeded}"))
	assert.Equal(t, 1, metrics.Get("jobs_finished_total{Roles,succeeded,AllJobsCompleted}"))
	assert.Equal(t, 1, events.Count("Completed"))
	assert.Equal(t, 3, events.Count(reconcile.ReasonSuccessfulCreate))
	t.Logf("completed in %d steps", rr.Steps)
}

// A failed pod call does not stop the others: the removal fails, the deletion and
// the creation are still made, and the error names the owner by its kind.
func TestSyncRolesPodCallErrors(t *testing.T) {
	e := newRolesEnv(t, nil)
	done := e.addPod(t, "worker", "g-worker-0-aaaaa")
	extra := e.addPod(t, "worker", "g-worker-2-aaaaa")
	g := e.store.stored
	e.planner = func(in ownedpods.Input) (*ownedpods.Plan, error) {
		return &ownedpods.Plan{
			Status: statusWith(in.Workload.Status, 1), StatusChanged: true,
			RemoveFinalizers: []plan.PodAction{{Pod: done}},
			Delete:           []plan.Deletion{{Pod: extra}},
			Create:           []plan.Creation{{Pod: rolePod(g, "worker", "g-worker-1-bbbbb"), Index: 1}},
		}, nil
	}
	e.c.FailNth(reconciletest.OpPatchPod, 1, reconciletest.ServerError())
	res, err := e.sync(t)
	require.Error(t, err)
	assert.True(t, apierrors.IsInternalError(err), "the API error is kept: %v", err)
	assert.Contains(t, err.Error(), "sync group ns/g")
	assert.Contains(t, err.Error(), "g-worker-0-aaaaa")
	assert.Equal(t, []reconciletest.Op{reconciletest.OpPatchPod, reconciletest.OpDeletePod, reconciletest.OpCreatePod}, e.ops())
	assert.Equal(t, 1, res.StatusWrites)
	assert.Equal(t, 0, res.FinalizersRemoved)
	assert.Equal(t, 1, res.Deleted)
	assert.Equal(t, 1, res.Created)
	assert.False(t, e.cfg.FinalizerRemovals.Has(reconcile.Key(ns, "g"), done.UID), "a failed removal is not pending")
	assert.Equal(t, 1, e.metrics.Get("job_syncs_total{Roles,error,pods_created}"))
}

// BenchmarkSyncRolesSteady: one SyncRoles of an owner of 1 launcher and n-1
// workers, all running, listed from the cache, with a plan that has nothing to do
// (a stand-in for ownedpods.Compute): the cost of the door itself, its stores and the
// list, without the decision.
func BenchmarkSyncRolesSteady(b *testing.B) {
	for _, n := range []int{65, 1001} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			c, owners := reconciletest.NewStore(reconciletest.Options{Owner: groupKind}, reconciletest.RunType)
			r, err := reconcile.New(reconcile.Config{Name: testName, Owner: groupKind, Clock: c.Clock()}, c, c)
			require.NoError(b, err)
			b.Cleanup(reconcile.SetComputeRoles(func(in ownedpods.Input) (*ownedpods.Plan, error) {
				if len(in.Pods) != n {
					return nil, fmt.Errorf("listed %d pods, want %d", len(in.Pods), n)
				}
				return &ownedpods.Plan{}, nil
			}))
			w, err := owners.Create(runOf(&ownedpods.Workload{Namespace: ns, Name: "train", ManagedBy: ptr.To(testName), Roles: []ownedpods.Role{{Name: "launcher"}, {Name: "worker"}}}))
			require.NoError(b, err)
			g := &group{ObjectMeta: metav1.ObjectMeta{Name: w.Name, UID: w.UID}}
			for i := range n {
				role := "worker"
				if i == 0 {
					role = "launcher"
				}
				p, err := c.AddPod(rolePod(g, role, fmt.Sprintf("train-%s-%d", role, i)))
				require.NoError(b, err)
				require.NoError(b, c.Kubelet().Run(ns, p.Name))
			}
			c.Cache().DeliverAll()
			sync := owners.SyncFunc(r)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := sync(b.Context(), ns, "train"); err != nil {
					b.Fatal(err)
				}
			}
			if calls := c.Calls(); len(calls) != 0 {
				b.Fatalf("steady sync made calls: %v", calls[0])
			}
		})
	}
}
