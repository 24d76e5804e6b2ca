package groups_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/groups"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// One sync of a group whose leader failed, with one restart allowed: the state
// is read from the status, the rules decide, and the status is written back.
func ExampleState_Decide() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	rules := []plaingroup.Role{{Name: "leader", Replicas: 1, Parallelism: 1}, {Name: "worker", Replicas: 2, Parallelism: 1}}
	children := []plaingroup.Child{
		{Name: "run-leader-0", Role: "leader", Outcome: plaingroup.Failed, Reason: "BackoffLimitExceeded", FinishedAt: now},
		{Name: "run-worker-0", Role: "worker", Index: 0},
		{Name: "run-worker-1", Role: "worker", Index: 1},
	}
	m, err := plaingroup.Compile(&plaingroup.FailurePolicy{MaxRestarts: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := groups.Read(plaingroup.Counters{}, nil, "", now)
	if err := s.Decide(m, nil, rules, children); err != nil {
		fmt.Println(err)
	}
	fmt.Println("restarts:", s.Counters.Restarts, "finished:", s.Finished() != nil)
	for _, e := range s.Events {
		fmt.Println("event:", e.Type, e.Reason)
	}
	// Output:
	// restarts: 1 finished: false
	// event: Warning RestartJobSetFailurePolicyAction
}

// A finished group, told from its API conditions.
func ExampleFinished() {
	conds := []metav1.Condition{
		{Type: "StartupPolicyCompleted", Status: metav1.ConditionTrue, Reason: "StartupPolicyCompleted"},
		{Type: "Completed", Status: metav1.ConditionTrue, Reason: "AllJobsCompleted"},
	}
	if c := groups.Finished(conds); c != nil {
		fmt.Println(c.Type, c.Reason)
	}
	// Output:
	// Completed AllJobsCompleted
}
