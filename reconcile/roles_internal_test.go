package reconcile

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// noPods is a PodClient that must not be called.
type noPods struct{ t *testing.T }

func (n noPods) CreatePod(context.Context, *corev1.Pod) (*corev1.Pod, error) {
	n.t.Fatal("CreatePod called")
	return nil, nil
}

func (n noPods) DeletePod(context.Context, string, string, types.UID) error {
	n.t.Fatal("DeletePod called")
	return nil
}

func (n noPods) PatchPod(context.Context, string, string, types.PatchType, []byte) (*corev1.Pod, error) {
	n.t.Fatal("PatchPod called")
	return nil, nil
}

func (n noPods) GetPod(context.Context, string, string) (*corev1.Pod, error) {
	n.t.Fatal("GetPod called")
	return nil, nil
}

// A cached roles owner older than a status write whose returned owner is not a
// roles owner (the key's last write was a Job's) is not synced from it: the sync
// waits for the cache, as Sync does for an unknown written owner.
func TestSyncRolesStaleOfAnotherKind(t *testing.T) {
	r, err := New(Config{Name: "test"}, noPods{t}, StatusWriterFunc(func(context.Context, *plan.Workload, batchv1.JobStatus) (*plan.Workload, error) {
		t.Fatal("Job status written")
		return nil, nil
	}))
	require.NoError(t, err)
	saved := computeRoles
	t.Cleanup(func() { computeRoles = saved })
	computeRoles = func(ownedpods.Input) (*ownedpods.Plan, error) {
		t.Fatal("planned from a stale cache")
		return nil, nil
	}
	key := Key("ns", "g")
	r.noteUID(key, "u")
	r.recordWrite(key, "3", "5", written{job: &plan.Workload{Namespace: "ns", Name: "g", UID: "u", ResourceVersion: "5"}})
	w := &ownedpods.Workload{Namespace: "ns", Name: "g", UID: "u", ResourceVersion: "4", Object: &metav1.PartialObjectMetadata{}}
	res, err := r.SyncRoles(t.Context(), w, func(*ownedpods.Workload) ([]*corev1.Pod, error) {
		t.Fatal("pods listed")
		return nil, nil
	}, rolesWriterFunc(func(context.Context, *ownedpods.Workload, ownedpods.Status) (*ownedpods.Workload, error) {
		t.Fatal("status written")
		return nil, nil
	}))
	require.NoError(t, err)
	assert.Equal(t, "cache older than the last status write", res.Skipped)
	assert.Equal(t, r.cfg.StaleCacheRequeue, res.RequeueAfter)
}

type rolesWriterFunc func(context.Context, *ownedpods.Workload, ownedpods.Status) (*ownedpods.Workload, error)

func (f rolesWriterFunc) WriteStatus(ctx context.Context, w *ownedpods.Workload, st ownedpods.Status) (*ownedpods.Workload, error) {
	return f(ctx, w, st)
}

// The pod names of a role's index derive from "<owner>-<role>", and its creations
// are labelled by the role's own failures and pod replacement policy.
func TestRoleBaseAndCreationReason(t *testing.T) {
	w := &ownedpods.Workload{
		Name: "train",
		Roles: []ownedpods.Role{
			{Name: "launcher"},
			{Name: "worker", Spec: plan.Spec{PodReplacementPolicy: ptr.To(batchv1.Failed)}},
		},
		Status: ownedpods.Status{Roles: []ownedpods.RoleStatus{
			{Name: "launcher", Job: batchv1.JobStatus{Failed: 2}},
			{Name: "worker", Job: batchv1.JobStatus{Failed: 1}},
		}},
	}
	creation := func(role string) plan.Creation {
		labels := map[string]string{}
		if role != "" {
			labels[plaingroup.LabelRoleName] = role
		}
		return plan.Creation{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}
	}
	tests := []struct {
		role       string
		wantBase   string
		wantReason string
	}{
		{role: "launcher", wantBase: "train-launcher", wantReason: labelRecreateTerminatingOrFailed},
		{role: "worker", wantBase: "train-worker", wantReason: labelRecreateFailed},
		{role: "", wantBase: "train", wantReason: labelCreationNew},
		{role: "unknown", wantBase: "train", wantReason: labelCreationNew},
	}
	for _, tc := range tests {
		t.Run(tc.role, func(t *testing.T) {
			assert.Equal(t, tc.wantBase, roleBase(w, creation(tc.role)))
			assert.Equal(t, tc.wantReason, roleCreationReason(w, creation(tc.role)))
		})
	}
	fresh := *w
	fresh.Status = ownedpods.Status{}
	assert.Equal(t, labelCreationNew, roleCreationReason(&fresh, creation("worker")), "a role without a status entry")
}
