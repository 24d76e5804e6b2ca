package sim_test

import (
	"fmt"

	"github.com/jobkit/jobkit/internal/sim"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// One seed determines a whole run: the Job, the kubelet, the faults and the timing.
func ExampleRun() {
	res, err := sim.Run(sim.Config{Seed: 7, FaultRate: 0.1})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Trace.Describe())
	fmt.Println("violations:", len(res.Violations), "finished:", res.Finished, res.Condition)
	fmt.Println("replay:", sim.ReplayCommand(7, 0.1))
	// Output:
	// Indexed completions=17 parallelism=14 backoffLimitPerIndex=2 maxFailedIndexes=9 podFailurePolicy=1 rules podReplacementPolicy=Failed
	// violations: 0 finished: true Complete
	// replay: go test ./internal/sim -run 'TestSimulation$' -sim.seed=7 -sim.faults=0.1 -v
}

// Config.Owner runs the seed's Job as a custom resource of that kind, with its own
// tracking finalizer, through the same invariants: the run is the Job's, call for
// call.
func ExampleRun_customOwner() {
	res, err := sim.Run(sim.Config{Seed: 7, FaultRate: 0.1, Owner: sim.TaskKind})
	if err != nil {
		panic(err)
	}
	fmt.Println("owner:", res.Trace.Owner, "finalizer:", res.Trace.Owner.Finalizer)
	fmt.Println("violations:", len(res.Violations), "finished:", res.Finished, res.Condition)
	// Output:
	// owner: Task.test.jobkit.dev finalizer: test.jobkit.dev/task-tracking
	// violations: 0 finished: true Complete
}

// A trace replays without the generator. This one syncs a Job of two pods once,
// lets the first pod fail, and leaves the rest to the calm end every replay gets.
func ExampleReplay() {
	tr := &sim.Trace{
		Job: reconciletest.NewJob(sim.Namespace, sim.JobName, 2, 2),
		Actions: []sim.Action{
			{Do: sim.VerbSync},
			{Do: sim.VerbRun, Pod: 1},
			{Do: sim.VerbFail, Pod: 1, N: 3},
			{Do: sim.VerbDeliverDue},
			{Do: sim.VerbSync, Faults: []sim.CallFault{{Call: 2, Kind: sim.FaultTimeout}}},
		},
	}
	res, err := sim.Replay(tr)
	if err != nil {
		panic(err)
	}
	fmt.Println("ok:", res.OK(), res.Condition, "succeeded:", res.Status.Succeeded, "failed:", res.Status.Failed)
	fmt.Println("faults:", res.Faults)
	// Output:
	// ok: true Complete succeeded: 2 failed: 1
	// faults: timeout=1
}

// Minimize keeps the actions a violation needs. Here the violation is an action
// this simulator does not know, which stops the run.
func ExampleMinimize() {
	tr := &sim.Trace{
		Job: reconciletest.NewJob(sim.Namespace, sim.JobName, 1, 1),
		Actions: []sim.Action{
			{Do: sim.VerbSync}, {Do: sim.VerbRun, Pod: 1}, {Do: sim.VerbAdvance, N: 1000},
			{Do: "teleport"}, {Do: sim.VerbSync},
		},
	}
	res, _ := sim.Replay(tr)
	fmt.Println(res.Violations[0].Invariant, "at action", res.Violations[0].Action)
	min := sim.Minimize(tr, sim.InvNotFinished, 0)
	fmt.Println(len(tr.Actions), "actions minimised to", len(min.Actions), min.Actions)
	// Output:
	// not-finished at action 3
	// 5 actions minimised to 1 [teleport]
}

// ReplayLog shows what each sync of a trace saw, planned and called.
func ExampleReplayLog() {
	tr := &sim.Trace{
		Job:     reconciletest.NewJob(sim.Namespace, sim.JobName, 1, 1),
		Actions: []sim.Action{{Do: sim.VerbSync}, {Do: sim.VerbRun, Pod: 1}, {Do: sim.VerbSucceed, Pod: 1}},
	}
	n := 0
	res, _ := sim.ReplayLog(tr, func(msg string) {
		if n < 3 { // the rest is the calm end of the replay
			fmt.Println(msg)
		}
		n++
	})
	fmt.Println(res.Condition)
	// Output:
	// 0 sync (sync 1) cached job rv=1 suspend=false active=0 succeeded=0 failed=0
	//   plan: status: active=1 ready=0 terminating=0 succeeded=0 failed=0 (changed)
	//   plan: create 1: too few active pods
	//   call #1 UpdateJobStatus sim/job
	//   call #2 CreatePod sim/job-rk5qp
	// 1 run pod#1
	// 2 succeed pod#1
	// Complete
}
