package reconciletest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

var rolesKind = owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/tracking"}

// newRolesStore returns a Store of Runs holding one owner of roles, as stored and
// converted.
func newRolesStore(t *testing.T) (*reconciletest.Cluster, *reconciletest.Store[*reconciletest.Run], *ownedpods.Workload) {
	t.Helper()
	c, s := reconciletest.NewStore(reconciletest.Options{Owner: rolesKind}, reconciletest.RunType)
	w, err := s.Create(runOf(&ownedpods.Workload{
		Namespace: "ns", Name: "train", ManagedBy: ptr.To("test"),
		Roles:  []ownedpods.Role{{Name: "launcher"}, {Name: "worker"}},
		Status: ownedpods.Status{Roles: []ownedpods.RoleStatus{{Name: "launcher"}, {Name: "worker", Succeeded: 2, Failed: 1, Attempt: 1}}, Restarts: 1},
	}))
	require.NoError(t, err)
	g, err := reconciletest.RunType.Roles(w)
	require.NoError(t, err)
	return c, s, g
}

// Create gives an owner its identity and an object of the cluster's kind; Get and
// Delete find it by name; a second owner under the name is refused.
func TestStoreCreateGetDelete(t *testing.T) {
	_, s, w := newRolesStore(t)
	assert.NotEmpty(t, w.UID)
	assert.NotEmpty(t, w.ResourceVersion)
	assert.Equal(t, int64(1), w.Generation)
	obj, ok := w.Object.(*reconciletest.Run)
	require.True(t, ok, "Object is a %T", w.Object)
	assert.Equal(t, "TrainingJob", obj.Kind)
	assert.Equal(t, "ml.example.com/v1", obj.APIVersion)
	assert.Equal(t, w.UID, obj.UID)

	got, err := s.Get("ns", "train")
	require.NoError(t, err)
	assert.Equal(t, obj, got)
	got.Status.Roles[1].Succeeded = 100
	again, err := s.Get("ns", "train")
	require.NoError(t, err)
	assert.Equal(t, int32(2), again.Status.Roles[1].Succeeded, "Get hands out copies")

	_, err = s.Create(runOf(&ownedpods.Workload{Namespace: "ns", Name: "train"}))
	assert.True(t, apierrors.IsAlreadyExists(err), "second create: %v", err)
	_, err = s.Create(runOf(&ownedpods.Workload{Namespace: "ns"}))
	assert.True(t, apierrors.IsInvalid(err), "no name: %v", err)

	require.NoError(t, s.Delete("ns", "train"))
	_, err = s.Get("ns", "train")
	assert.True(t, apierrors.IsNotFound(err), "get after delete: %v", err)
	assert.True(t, apierrors.IsNotFound(s.Delete("ns", "train")))
}

// Update changes the spec, keeps identity and status, and bumps the
// resourceVersion and generation; an owner not stored is NotFound.
func TestStoreUpdate(t *testing.T) {
	_, s, w := newRolesStore(t)
	out, err := s.Update("ns", "train", func(u *reconciletest.Run) {
		u.Spec.Suspend = true
		u.UID, u.Name = "other", "renamed"
		u.Status.Restarts = 9
	})
	require.NoError(t, err)
	assert.True(t, out.Spec.Suspend)
	assert.Equal(t, w.UID, out.UID)
	assert.Equal(t, "train", out.Name)
	assert.Equal(t, w.Status, out.Status, "status is kept")
	assert.Equal(t, int64(2), out.Generation)
	assert.NotEqual(t, w.ResourceVersion, out.ResourceVersion)
	stored, err := s.Get("ns", "train")
	require.NoError(t, err)
	assert.Equal(t, out, stored)
	_, err = s.RolesWriter().WriteStatus(t.Context(), w, w.Status)
	assert.True(t, apierrors.IsConflict(err), "a status write with the old resourceVersion: %v", err)
	_, err = s.Update("ns", "nope", func(*reconciletest.Run) {})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}

// WriteStatus is a status subresource: preconditions, the rules of such a status,
// the call log, faults, and no new resourceVersion for a write that changes nothing.
func TestStoreRolesWriter(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(w *ownedpods.Workload, st *ownedpods.Status)
		fault     bool
		wantErr   func(error) bool
		wantField string
		wantNewRV bool
	}{
		{name: "accepted", mutate: func(_ *ownedpods.Workload, st *ownedpods.Status) { st.Roles[1].Succeeded = 3 }, wantNewRV: true},
		{name: "unchanged", mutate: func(*ownedpods.Workload, *ownedpods.Status) {}},
		{name: "stale resourceVersion", mutate: func(w *ownedpods.Workload, _ *ownedpods.Status) { w.ResourceVersion = "0" }, wantErr: apierrors.IsConflict},
		{name: "another UID", mutate: func(w *ownedpods.Workload, _ *ownedpods.Status) { w.UID = "other" }, wantErr: apierrors.IsConflict},
		{name: "restarts decrease", mutate: func(_ *ownedpods.Workload, st *ownedpods.Status) { st.Restarts = 0 }, wantErr: apierrors.IsInvalid, wantField: "status.restarts"},
		{name: "towards max exceeds restarts", mutate: func(_ *ownedpods.Workload, st *ownedpods.Status) { st.RestartsCountTowardsMax = 2 }, wantErr: apierrors.IsInvalid, wantField: "status.restartsCountTowardsMax"},
		{name: "role total decreases", mutate: func(_ *ownedpods.Workload, st *ownedpods.Status) { st.Roles[1].Failed = 0 }, wantErr: apierrors.IsInvalid, wantField: "status.roles[1].failed"},
		{name: "attempt decreases", mutate: func(_ *ownedpods.Workload, st *ownedpods.Status) { st.Roles[1].Attempt = 0 }, wantErr: apierrors.IsInvalid, wantField: "status.roles[1].attempt"},
		{name: "fault", mutate: func(_ *ownedpods.Workload, st *ownedpods.Status) { st.Roles[1].Succeeded = 3 }, fault: true, wantErr: apierrors.IsInternalError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, s, w := newRolesStore(t)
			if tc.fault {
				c.InjectFault(reconciletest.Fault{Op: reconciletest.OpUpdateStatus, Err: reconciletest.ServerError()})
			}
			st := w.Status
			st.Roles = append([]ownedpods.RoleStatus(nil), st.Roles...)
			in := *w
			tc.mutate(&in, &st)
			out, err := s.RolesWriter().WriteStatus(t.Context(), &in, st)
			calls := c.Calls()
			require.Len(t, calls, 1)
			assert.Equal(t, reconciletest.OpUpdateStatus, calls[0].Op)
			stored, gerr := s.Get("ns", "train")
			require.NoError(t, gerr)
			if tc.wantErr != nil {
				require.Error(t, err)
				assert.True(t, tc.wantErr(err), "error %v", err)
				assert.Contains(t, err.Error(), tc.wantField)
				assert.Equal(t, w.Object, stored, "nothing stored")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantNewRV, out.ResourceVersion != w.ResourceVersion, "new resourceVersion %q (was %q)", out.ResourceVersion, w.ResourceVersion)
			assert.Equal(t, st, stored.Status)
			assert.Equal(t, out.Object, stored)
		})
	}
}

// A finished owner with no tracked or running pod left is done; the Store's owners let
// CollectGarbage keep the pods of a stored owner and delete those of a deleted one.
func TestStoreDoneAndGarbage(t *testing.T) {
	c, s, w := newRolesStore(t)
	ref := rolesKind.NewControllerRef(&metav1.ObjectMeta{Name: w.Name, UID: w.UID})
	_, err := c.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "train-worker-0", OwnerReferences: []metav1.OwnerReference{ref}, Finalizers: []string{rolesKind.Finalizer},
	}})
	require.NoError(t, err)
	done := s.DoneFunc()
	d, exists := done("ns", "train")
	assert.True(t, exists)
	assert.False(t, d, "not finished")

	st := w.Status
	st.TerminalState = "Completed"
	_, err = s.RolesWriter().WriteStatus(t.Context(), w, st)
	require.NoError(t, err)
	d, _ = done("ns", "train")
	assert.False(t, d, "finished, a pod still tracked")
	require.NoError(t, c.Kubelet().Run("ns", "train-worker-0"))
	_, err = c.PatchPodAs("ns", "train-worker-0", []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["`+rolesKind.Finalizer+`"]}}`))
	require.NoError(t, err)
	d, _ = done("ns", "train")
	assert.False(t, d, "finished, nothing tracked, a pod still runs (its deletion failed)")
	require.NoError(t, c.Kubelet().Succeed("ns", "train-worker-0"))
	d, _ = done("ns", "train")
	assert.True(t, d, "finished, nothing tracked, nothing runs")

	assert.Equal(t, 0, c.CollectGarbage(), "the owner is stored")
	require.NoError(t, s.Delete("ns", "train"))
	_, exists = done("ns", "train")
	assert.False(t, exists)
	assert.Equal(t, 1, c.CollectGarbage(), "the owner is gone")
}

// An owner of several roles in a Store of Runs: its status subresource checks
// the resourceVersion, as the Reconciler's SyncRoles relies on.
func ExampleNewStore() {
	ctx := context.Background()
	kind := owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/tracking"}
	c, owners := reconciletest.NewStore(reconciletest.Options{Owner: kind}, reconciletest.RunType)
	run, _ := owners.Create(&reconciletest.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train"},
		Spec: ownedpods.Workload{Roles: []ownedpods.Role{{Name: "launcher"}, {Name: "worker"}}}})
	w, _ := reconciletest.RunType.Roles(run)

	st := ownedpods.Status{Roles: []ownedpods.RoleStatus{{Name: "launcher"}, {Name: "worker", Succeeded: 1}}}
	out, err := owners.RolesWriter().WriteStatus(ctx, w, st)
	fmt.Println("written:", err == nil, out.ResourceVersion != w.ResourceVersion)
	_, err = owners.RolesWriter().WriteStatus(ctx, w, st) // w is stale now
	fmt.Println("stale write is a conflict:", apierrors.IsConflict(err))
	fmt.Println("calls:", len(c.Calls()), c.Calls()[0].Op)
	// Output:
	// written: true true
	// stale write is a conflict: true
	// calls: 2 UpdateStatus
}

// runOf is w as a Run: its identity in the metadata, the roles and rules in the
// spec.
func runOf(w *ownedpods.Workload) *reconciletest.Run {
	return &reconciletest.Run{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}, Spec: *w, Status: w.Status}
}
