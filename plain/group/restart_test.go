package group_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"

	"github.com/jobkit/jobkit/plain/group"
)

// The cases cite jobset-behaviour.md, "Rules: Restart counting": children whose
// restart-attempt is below status.restarts (or job-restart-attempt below
// jobRestarts[i]) are deleted, then recreated.
func TestObsolete(t *testing.T) {
	c := group.Counters{Restarts: 2, Jobs: map[string]group.RoleRestarts{"w": {Restarts: []int32{0, 1}}}}
	children := []group.Child{
		{Name: "l0", Role: "l", Attempt: 2},           // current
		{Name: "l0-old", Role: "l", Attempt: 1},       // old group attempt
		{Name: "w1", Role: "w", Index: 1, Attempt: 2}, // old index attempt
		{Name: "w1-new", Role: "w", Index: 1, Attempt: 2, JobAttempt: 1},
		{Name: "ahead", Role: "w", Attempt: 3}, // above the counters: not old
	}
	assert.Equal(t, []int{1, 2}, group.Obsolete(children, c))
	assert.Nil(t, group.Obsolete(children[3:], c))
}

func TestCreations(t *testing.T) {
	roles := []group.Role{{Name: "l", Replicas: 1}, {Name: "w", Replicas: 3}}
	c := group.Counters{Restarts: 1}
	cases := []struct {
		name     string
		children []group.Child
		strategy group.RestartStrategy
		allowed  []bool
		want     []group.Slot
	}{
		{name: "nothing yet: every index of every role", want: []group.Slot{{0, 0}, {1, 0}, {1, 1}, {1, 2}}},
		{name: "existing children keep their index", children: []group.Child{
			{Role: "w", Index: 1, Attempt: 1}, {Role: "l", Index: 0, Attempt: 1, Outcome: group.Succeeded}},
			want: []group.Slot{{1, 0}, {1, 2}}},
		{name: "Recreate: an index waits for its old child to be gone", children: []group.Child{
			{Role: "w", Index: 0, Attempt: 0, Deleting: true}, {Role: "l", Index: 0, Attempt: 1}},
			want: []group.Slot{{1, 1}, {1, 2}}},
		{name: "BlockingRecreate: nothing while any old child exists", strategy: group.BlockingRecreate, children: []group.Child{
			{Role: "w", Index: 0, Attempt: 0, Deleting: true}},
			want: nil},
		{name: "BlockingRecreate: an old child of an unknown role blocks too", strategy: group.BlockingRecreate, children: []group.Child{
			{Role: "gone", Index: 0, Attempt: 0}},
			want: nil},
		{name: "BlockingRecreate once the old children are gone", strategy: group.BlockingRecreate, children: []group.Child{
			{Role: "w", Index: 0, Attempt: 1}},
			want: []group.Slot{{0, 0}, {1, 1}, {1, 2}}},
		{name: "only the roles that may start", allowed: []bool{true, false}, want: []group.Slot{{0, 0}}},
		{name: "out of range and unknown children block nothing", children: []group.Child{
			{Role: "w", Index: 7, Attempt: 1}, {Role: "zz", Index: 0, Attempt: 1}},
			want: []group.Slot{{0, 0}, {1, 0}, {1, 1}, {1, 2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := group.Creations(roles, tc.children, c, tc.strategy, tc.allowed)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Creations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIdentities(t *testing.T) {
	roles := []group.Role{
		{Name: "driver", GroupName: "ctl", Replicas: 1},
		{Name: "w", Replicas: 2},
		{Name: "ps", GroupName: "ctl", Replicas: 2},
		{Name: "eval", Replicas: 1},
	}
	c := group.Counters{Restarts: 3, Jobs: map[string]group.RoleRestarts{"ps": {Restarts: []int32{0, 5}}}}
	got := group.Identities("js", roles, c, []group.Slot{{0, 0}, {1, 1}, {2, 1}, {3, 0}})
	want := []group.Identity{
		{Name: "js-driver-0", Role: "driver", RoleReplicas: 1, Index: 0, GlobalIndex: 0, GlobalReplicas: 6, GroupName: "ctl", GroupIndex: 0, GroupReplicas: 3, Attempt: 3},
		{Name: "js-w-1", Role: "w", RoleReplicas: 2, Index: 1, GlobalIndex: 2, GlobalReplicas: 6, GroupName: "default", GroupIndex: 1, GroupReplicas: 3, Attempt: 3},
		{Name: "js-ps-1", Role: "ps", RoleReplicas: 2, Index: 1, GlobalIndex: 4, GlobalReplicas: 6, GroupName: "ctl", GroupIndex: 2, GroupReplicas: 3, Attempt: 3, JobAttempt: 5},
		{Name: "js-eval-0", Role: "eval", RoleReplicas: 1, Index: 0, GlobalIndex: 5, GlobalReplicas: 6, GroupName: "default", GroupIndex: 2, GroupReplicas: 3, Attempt: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Identities (-want +got):\n%s", diff)
	}
}

func TestLabels(t *testing.T) {
	id := group.Identity{Name: "js-workers-1", Role: "workers", RoleReplicas: 3, Index: 1, GlobalIndex: 2, GlobalReplicas: 4,
		GroupName: "default", GroupIndex: 2, GroupReplicas: 4, Attempt: 1, JobAttempt: 0}
	coord := (&group.Coordinator{ReplicatedJob: "leader"}).Value("js", "")
	got := id.Labels("js", "uid-1", "default", coord)
	want := map[string]string{
		"jobset.sigs.k8s.io/jobset-name":            "js",
		"jobset.sigs.k8s.io/jobset-uid":             "uid-1",
		"jobset.sigs.k8s.io/replicatedjob-name":     "workers",
		"jobset.sigs.k8s.io/replicatedjob-replicas": "3",
		"jobset.sigs.k8s.io/job-index":              "1",
		"jobset.sigs.k8s.io/job-global-index":       "2",
		"jobset.sigs.k8s.io/global-replicas":        "4",
		"jobset.sigs.k8s.io/group-name":             "default",
		"jobset.sigs.k8s.io/group-replicas":         "4",
		"jobset.sigs.k8s.io/job-group-index":        "2",
		"jobset.sigs.k8s.io/restart-attempt":        "1",
		"jobset.sigs.k8s.io/job-restart-attempt":    "0",
		// sha1("default/js-workers-1"), computed independently.
		"jobset.sigs.k8s.io/job-key":     "20dc345bc2e84bd8edbf2a3c1e402ea64730add9",
		"jobset.sigs.k8s.io/coordinator": "js-leader-0-0.js",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
	_, has := id.Labels("js", "uid-1", "default", "")["jobset.sigs.k8s.io/coordinator"]
	assert.False(t, has, "no coordinator label without a coordinator")
}

func TestCoordinatorValue(t *testing.T) {
	c := group.Coordinator{ReplicatedJob: "leader", JobIndex: 2, PodIndex: 7}
	assert.Equal(t, "pytorch-leader-2-7.net", c.Value("pytorch", "net"))
	assert.Equal(t, "pytorch-leader-2-7.pytorch", c.Value("pytorch", ""))
}
