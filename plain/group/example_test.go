package group_test

import (
	"fmt"
	"math"
	"time"

	"github.com/jobkit/jobkit/plain/group"
)

// A worker fails because its pod failure policy matched exit code 42: the
// FailJobSet rule for that message fails the group at once.
func ExampleMatcher_Decide() {
	m, err := group.Compile(&group.FailurePolicy{
		MaxRestarts: 3,
		Rules: []group.Rule{{
			Name:                        "bug",
			Action:                      group.FailJobSet,
			OnJobFailureReasons:         []string{"PodFailurePolicy"},
			OnJobFailureMessagePatterns: []string{`exit code 42\b`},
		}},
	})
	if err != nil {
		panic(err)
	}
	children := []group.Child{
		{Name: "train-leader-0", Role: "leader", Active: 1, Ready: 1},
		{Name: "train-workers-0", Role: "workers", Outcome: group.Failed, Reason: "PodFailurePolicy",
			Message:    "Container main for pod ns/train-workers-0-0-x failed with exit code 42 matching FailJob rule at index 0",
			FinishedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)},
	}
	d, err := m.Decide(children, group.Counters{})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Effect, d.Action, d.RuleName, children[d.Child].Name)
	fmt.Println(d.Condition.Reason)
	fmt.Println(d.Condition.Message)
	// Output:
	// Fail FailJobSet bug train-workers-0
	// FailJobSetFailurePolicyAction
	// applying FailJobSet failure policy action (first failed job: train-workers-0)
}

// Without a matching rule the default RestartJobSet restarts the group while the
// budget lasts; the children of the old attempt then go and new ones are created.
func ExampleMatcher_Decide_restart() {
	m, _ := group.Compile(&group.FailurePolicy{MaxRestarts: 1})
	roles := []group.Role{{Name: "workers", Replicas: 2, Parallelism: 1}}
	children := []group.Child{
		{Name: "train-workers-0", Role: "workers", Index: 0, Active: 1},
		{Name: "train-workers-1", Role: "workers", Index: 1, Outcome: group.Failed, Reason: "BackoffLimitExceeded"},
	}
	d, _ := m.Decide(children, group.Counters{})
	fmt.Println(d.Effect, d.Condition.Type, d.Condition.Reason)
	fmt.Println("restarts:", d.Counters.Restarts, "counted:", d.Counters.RestartsCountTowardsMax)
	fmt.Println("delete:", group.Obsolete(children, d.Counters))
	fmt.Println("create now:", group.Creations(roles, children, d.Counters, group.Recreate, nil))

	again, _ := m.Decide([]group.Child{{Name: "train-workers-0", Role: "workers", Attempt: 1, Outcome: group.Failed}}, d.Counters)
	fmt.Println(again.Effect, again.Condition.Reason)
	// Output:
	// RestartGroup RestartingJobSet DefaultFailurePolicy
	// restarts: 1 counted: 1
	// delete: [0 1]
	// create now: []
	// Fail ReachedMaxRestarts
}

// Success Any on the leader: the group completes when the leader does.
func ExampleSucceed() {
	roles := []group.Role{{Name: "leader", Replicas: 1}, {Name: "workers", Replicas: 4}}
	children := []group.Child{
		{Name: "js-leader-0", Role: "leader", Outcome: group.Succeeded},
		{Name: "js-workers-0", Role: "workers", Active: 1},
	}
	s := group.Succeed(&group.SuccessPolicy{Operator: group.Any, TargetReplicatedJobs: []string{"leader"}}, roles, children, group.Counters{})
	fmt.Println(s.Completed, s.Succeeded, s.Needed, s.Condition.Reason)
	s = group.Succeed(nil, roles, children, group.Counters{})
	fmt.Println(s.Completed, s.Succeeded, s.Needed)
	// Output:
	// true 1 1 AllJobsCompleted
	// false 1 5
}

// Workers depend on the leader being ready: they wait until its status says so.
func ExampleMayStart() {
	roles := []group.Role{
		{Name: "leader", Replicas: 1},
		{Name: "workers", Replicas: 8, DependsOn: []group.Dependency{{Name: "leader", Status: group.DependsOnReady}}},
	}
	fmt.Println(group.MayStart(group.AnyOrder, roles, []group.RoleStatus{{Name: "leader", Active: 1}}).Allowed)
	fmt.Println(group.MayStart(group.AnyOrder, roles, []group.RoleStatus{{Name: "leader", Ready: 1}}).Allowed)
	// Output:
	// [true false]
	// [true true]
}

// The children of a group and their labels: global and group indexes count
// across roles.
func ExampleIdentities() {
	roles := []group.Role{{Name: "driver", Replicas: 1}, {Name: "workers", Replicas: 2}}
	slots := group.Creations(roles, nil, group.Counters{}, group.Recreate, nil)
	for _, id := range group.Identities("js", roles, group.Counters{}, slots) {
		l := id.Labels("js", "uid", "ns", "")
		fmt.Println(id.Name, l["jobset.sigs.k8s.io/job-global-index"]+"/"+l["jobset.sigs.k8s.io/global-replicas"],
			l["jobset.sigs.k8s.io/job-group-index"]+"/"+l["jobset.sigs.k8s.io/group-replicas"])
	}
	// Output:
	// js-driver-0 0/3 0/3
	// js-workers-0 1/3 1/3
	// js-workers-1 2/3 2/3
}

func ExampleCoordinator_Value() {
	c := group.Coordinator{ReplicatedJob: "leader", JobIndex: 0, PodIndex: 0}
	fmt.Println(c.Value("pytorch", ""))
	// Output:
	// pytorch-leader-0-0.pytorch
}

func ExampleStatuses() {
	roles := []group.Role{{Name: "workers", Replicas: 3, Parallelism: 2}}
	children := []group.Child{
		{Role: "workers", Index: 0, Ready: 2, Active: 2},
		{Role: "workers", Index: 1, Ready: 1, Active: 2},
		{Role: "workers", Index: 2, Outcome: group.Succeeded},
	}
	s := group.Statuses(roles, children, group.Counters{})[0]
	fmt.Printf("%s ready=%d active=%d succeeded=%d started=%v\n", s.Name, s.Ready, s.Active, s.Succeeded, s.Started(3))
	// Output:
	// workers ready=1 active=2 succeeded=1 started=false
}

func ExampleSetCondition() {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	conds, changed := group.SetCondition(nil, group.Condition{Type: group.ConditionSuspended, Status: group.False, Reason: "ResumeJobs"}, now)
	fmt.Println(len(conds), changed)
	conds, changed = group.SetCondition(conds, group.Condition{Type: group.ConditionSuspended, Status: group.True, Reason: "SuspendedJobs"}, now)
	fmt.Println(len(conds), changed, conds[0].Status, conds[0].LastTransitionTime.Format(time.Kitchen))
	// Output:
	// 0 false
	// 1 true True 10:00AM
}

func ExampleTTL() {
	finished := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	conds := []group.Condition{{Type: group.ConditionCompleted, Status: group.True, LastTransitionTime: finished}}
	ttl := int32(300)
	e, _ := group.TTL(&ttl, conds, false, finished.Add(time.Minute))
	fmt.Println(e.Expired, e.Left)
	e, _ = group.TTL(&ttl, conds, false, finished.Add(5*time.Minute))
	fmt.Println(e.Expired, e.Left)
	// Output:
	// false 4m0s
	// true 0s
}

func ExampleSuspend() {
	roles := []group.Role{{Name: "workers", Replicas: 2}}
	children := []group.Child{{Role: "workers", Index: 0}, {Role: "workers", Index: 1, Outcome: group.Succeeded}}
	s := group.Suspend(true, roles, children, group.Counters{}, nil)
	fmt.Println(s.Suspend, s.Condition.Reason)
	// Output:
	// [0] SuspendedJobs
}

func ExampleValidate() {
	spec := group.Spec{
		Name:  "js",
		Roles: []group.Role{{Name: "leader", Replicas: 1, Parallelism: 1}},
		FailurePolicy: &group.FailurePolicy{Rules: []group.Rule{
			{Name: "1st", Action: group.RestartJob, OnJobFailureReasons: []string{"OOMKilled"}},
		}},
	}
	for _, e := range group.Validate(&spec) {
		fmt.Println(e)
	}
	// Output:
	// failurePolicy.rules[0].name: Invalid value: "1st": invalid failure policy rule name '1st', a failure policy rule name must start with an alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'
	// failurePolicy.rules[0].onJobFailureReasons[0]: Invalid value: "OOMKilled": invalid job failure reason 'OOMKilled' in failure policy is not a recognized job failure reason
}

func ExampleDefault() {
	s := group.Default(group.Spec{Name: "js", Roles: []group.Role{{Name: "a", Replicas: 1}},
		FailurePolicy: &group.FailurePolicy{Rules: []group.Rule{{Action: group.FailJobSet}}}})
	fmt.Println(s.Roles[0].GroupName, s.SuccessPolicy.Operator, s.StartupOrder, s.FailurePolicy.RestartStrategy, s.FailurePolicy.Rules[0].Name, s.Subdomain)
	// Output:
	// default All AnyOrder Recreate failurePolicyRule0 js
}

// After a restart the children of the old attempt go; with BlockingRecreate
// nothing new is created until the last of them is gone.
func ExampleCreations() {
	roles := []group.Role{{Name: "workers", Replicas: 2}}
	c := group.Counters{Restarts: 1}
	children := []group.Child{{Role: "workers", Index: 0, Attempt: 0, Deleting: true}}
	fmt.Println(group.Obsolete(children, c))
	fmt.Println(group.Creations(roles, children, c, group.Recreate, nil))
	fmt.Println(group.Creations(roles, children, c, group.BlockingRecreate, nil))
	fmt.Println(group.Creations(roles, nil, c, group.BlockingRecreate, nil))
	// Output:
	// [0]
	// [{0 1}]
	// []
	// [{0 0} {0 1}]
}

func ExampleRestartEnded() {
	roles := []group.Role{{Name: "workers", Replicas: 2}}
	conds := []group.Condition{{Type: group.ConditionRestarting, Status: group.True, Reason: "DefaultFailurePolicy"}}
	fmt.Println(group.RestartEnded(conds, roles, []group.RoleStatus{{Name: "workers", Ready: 1}}, false))
	end := group.RestartEnded(conds, roles, []group.RoleStatus{{Name: "workers", Ready: 2}}, false)
	fmt.Println(end.Status, end.Reason, end.Message)
	// Output:
	// <nil>
	// False JobsReady all jobs are ready
}

func ExampleValidateUpdate() {
	old := group.Spec{Name: "js", Roles: []group.Role{{Name: "workers", Replicas: 2, Parallelism: 1}}}
	spec := old
	spec.Roles = []group.Role{{Name: "workers", Replicas: 3, Parallelism: 1}}
	for _, e := range group.ValidateUpdate(&old, &spec) {
		fmt.Println(e)
	}
	// Output:
	// replicatedJobs[0].replicas: Invalid value: 3: field is immutable
}

// An in-place restart of a leader and two workers: one pod has restarted to
// attempt 1, so the others are told to follow (previous 0); once all three
// report attempt 1, the barrier lifts (current 1).
func ExampleInPlaceAttempts_Next() {
	roles := []group.Role{{Name: "leader", Replicas: 1, Parallelism: 1}, {Name: "workers", Replicas: 2, Parallelism: 1}}
	pod := func(attempt string) group.PodAttempt { return group.PodAttempt{Annotation: attempt, Annotated: true} }
	show := func(a group.InPlaceAttempts) string {
		s := func(p *int32) string {
			if p == nil {
				return "unset"
			}
			return fmt.Sprint(*p)
		}
		return "previous " + s(a.Previous) + ", current " + s(a.Current)
	}
	var a group.InPlaceAttempts
	a, _, _ = a.Next(roles, []group.PodAttempt{pod("0"), pod("0"), pod("0")}, 3, group.Counters{})
	fmt.Println(show(a))
	a, _, _ = a.Next(roles, []group.PodAttempt{pod("1"), pod("0"), pod("0")}, 3, group.Counters{})
	fmt.Println(show(a))
	a, _, _ = a.Next(roles, []group.PodAttempt{pod("1"), pod("1"), pod("1")}, 3, group.Counters{})
	fmt.Println(show(a))
	_, d, _ := a.Next(roles, []group.PodAttempt{pod("4"), pod("1"), pod("1")}, 3, group.Counters{})
	fmt.Println(d.Effect, d.Condition.Reason)
	// Output:
	// previous unset, current 0
	// previous 0, current 0
	// previous 0, current 1
	// Fail ReachedMaxRestarts
}

// A role of five workers scaled down to three: its children 4 and 3 go, the
// highest index first.
func ExampleSpec_Surplus() {
	spec := group.Spec{Name: "js", Roles: []group.Role{{Name: "workers", Replicas: 3, Parallelism: 1}}}
	var children []group.Child
	for i := range int32(5) {
		children = append(children, group.Child{Name: fmt.Sprintf("js-workers-%d", i), Role: "workers", Index: i})
	}
	for _, i := range spec.Surplus(children) {
		fmt.Println("delete", children[i].Name)
	}
	// Output:
	// delete js-workers-4
	// delete js-workers-3
}

// An Indexed role of 4 pods per child grown to 8: the running child takes the
// new size in place, the finished one is left alone.
func ExampleSpec_Resized() {
	eight := int32(8)
	four := int32(4)
	spec := group.Spec{Name: "js", Roles: []group.Role{{Name: "workers", Replicas: 2, Parallelism: 8, Completions: &eight}}}
	children := []group.Child{
		{Name: "js-workers-0", Role: "workers", Index: 0, Parallelism: 4, Completions: &four},
		{Name: "js-workers-1", Role: "workers", Index: 1, Parallelism: 4, Completions: &four, Outcome: group.Succeeded},
	}
	for _, i := range spec.Resized(children, group.Counters{}) {
		fmt.Println("resize", children[i].Name)
	}
	// Output:
	// resize js-workers-0
}

// A claim "data" of the group "train", kept when the group goes, and mounted
// by the workers: its claim's name, whether the group owns it, and the roles
// that get its volume.
func ExampleVolumeClaim_ClaimName() {
	spec := group.Spec{Name: "train",
		Roles: []group.Role{
			{Name: "leader", Replicas: 1, Parallelism: 1},
			{Name: "workers", Replicas: 2, Parallelism: 1, VolumeMounts: []string{"data"}},
		},
		VolumeClaims: []group.VolumeClaim{{Name: "data", WhenDeleted: "Retain"}},
	}
	c := &spec.VolumeClaims[0]
	fmt.Println(c.ClaimName(spec.Name), "owned by the group:", c.Owned())
	for r := range spec.Roles {
		fmt.Println(spec.Roles[r].Name, "mounts", len(spec.Claims(r)), "claims")
	}
	fmt.Println("valid:", len(group.Validate(&spec)) == 0)
	// Output:
	// data-train owned by the group: false
	// leader mounts 0 claims
	// workers mounts 1 claims
	// valid: true
}

// One child per rack for the group, one per node pool with the
// node-selector strategy for the role that says so.
func ExampleSpec_Exclusive() {
	spec := group.Spec{Name: "js", ExclusiveTopology: "topology.kubernetes.io/rack",
		Roles: []group.Role{
			{Name: "workers"},
			{Name: "evaluators", ExclusiveTopology: "cloud.google.com/gke-nodepool", NodeSelectorStrategy: true},
		}}
	for r := range spec.Roles {
		topology, nodeSelector := spec.Exclusive(r)
		fmt.Println(spec.Roles[r].Name, topology, nodeSelector)
	}
	// Output:
	// workers topology.kubernetes.io/rack false
	// evaluators cloud.google.com/gke-nodepool true
}

// A spec validated under JobSet's feature gates: with InPlaceRestart off,
// the restart strategy of that name is refused as JobSet's webhook refuses
// it; with no gates, it is accepted.
func ExampleValidate_featureGates() {
	spec := group.Spec{
		Name:          "train",
		Roles:         []group.Role{{Name: "workers", Replicas: 1, Parallelism: 2, Completions: ptr(int32(2)), BackoffLimit: ptr(int32(math.MaxInt32)), PodReplacementPolicy: "Failed"}},
		FailurePolicy: &group.FailurePolicy{RestartStrategy: group.InPlaceRestart},
	}
	fmt.Println(len(group.Validate(&spec)))
	spec.FeatureGates = map[string]bool{"InPlaceRestart": false}
	for _, e := range group.Validate(&spec) {
		fmt.Println(e.Field + ": " + e.Detail)
	}
	// Output:
	// 0
	// failurePolicy.restartStrategy: InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled
}
