package controller_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
)

func succeedAll(*corev1.Pod) scenarios.Outcome { return scenarios.Succeed() }

// A leader and two workers of two pods run to completion: every child
// succeeds, the JobSet completes with no restart, and the API writes of the
// run are counted (the README's figures).
func TestLeaderAndWorkersComplete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.setPolicy(succeedAll)
	e.create(e.jobSet("run", role("leader", 1, 1), role("workers", 2, 2)))
	js := e.waitFinished("run")
	if js.Status.TerminalState != v1alpha2.Completed || condition(js, "Completed") == nil || js.Status.Restarts != 0 {
		t.Fatalf("status = %+v, want Completed with no restart", js.Status)
	}
	want := []v1alpha2.ReplicatedJobStatus{{Name: "leader", Succeeded: 1}, {Name: "workers", Succeeded: 2}}
	if got := js.Status.ReplicatedJobsStatus; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("replicatedJobsStatus = %+v, want %+v", got, want)
	}
	for _, ev := range e.events() {
		if ev.attempt != "0" {
			t.Errorf("Job %s of restart attempt %q, want 0", ev.name, ev.attempt)
		}
	}
	e.consistently("no more writes once finished", func() (bool, string) { return true, "" })
	jsWrites, jsTotal := e.jobSetWrites.summary()
	jobWrites, jobTotal := e.jobWrites.summary()
	t.Logf("API writes of one run (a leader and 2 workers of 2 pods; 3 Jobs, 5 pods): JobSet controller %d (%s); Job controller %d (%s)",
		jsTotal, jsWrites, jobTotal, jobWrites)
}
