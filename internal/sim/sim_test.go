package sim_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobkit/jobkit/internal/sim"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

var (
	flagSeeds    = flag.Int("sim.seeds", 0, "number of seeds TestSimulation runs (0: 300; 50 with -short; 10 with -race)")
	flagFirst    = flag.Uint64("sim.first", 0, "first seed of TestSimulation")
	flagSeed     = flag.Int64("sim.seed", -1, "run only this seed, with its summary and, on failure, its minimised trace")
	flagFaults   = flag.Float64("sim.faults", 0.1, "probability that an API call fails; it also scales the other faults")
	flagMaxPods  = flag.Int("sim.maxpods", 0, "largest completions or parallelism (0: 300)")
	flagReport   = flag.Bool("sim.report", false, "print seeds per minute, faults by kind and violations")
	flagMinimize = flag.String("sim.minimize", "", "directory where the minimised trace of each failing seed is written")
	flagOwner    = flag.String("sim.owner", "mixed", "owner of the simulated pods: job (batch/v1 Job), task (sim.TaskKind, a custom resource with its own finalizer) or mixed (every fourth seed, those equal to 3 modulo 4, runs as a task)")
)

// ownerFor returns the owner kind seed runs with under -sim.owner; the zero Kind
// means a batch/v1 Job.
func ownerFor(t testing.TB, seed uint64) owner.Kind {
	switch *flagOwner {
	case "job":
		return owner.Kind{}
	case "task":
		return sim.TaskKind
	case "mixed":
		if seed%4 == 3 {
			return sim.TaskKind
		}
		return owner.Kind{}
	}
	t.Fatalf("-sim.owner=%q: want job, task or mixed", *flagOwner)
	return owner.Kind{}
}

// replayCommand is sim.ReplayCommand with the -sim.owner flag when it is not the
// default.
func replayCommand(seed uint64, faultRate float64) string {
	cmd := sim.ReplayCommand(seed, faultRate)
	if *flagOwner != "mixed" {
		cmd += " -sim.owner=" + *flagOwner
	}
	return cmd
}

// TestSimulation runs the deterministic simulation for many seeds: random Jobs,
// a random kubelet and random faults, with every invariant checked after every
// step. A failing seed prints the command that replays it.
func TestSimulation(t *testing.T) {
	ownerFor(t, 0) // checks -sim.owner here, on the test's goroutine
	cfg := sim.Config{FaultRate: *flagFaults, MaxPods: *flagMaxPods}
	if simulateRoleSeed(t, cfg.FaultRate) || simulateGroupSeed(t, cfg.FaultRate) {
		return
	}
	if *flagSeed >= 0 {
		cfg.Seed = uint64(*flagSeed)
		cfg.Owner = ownerFor(t, cfg.Seed)
		res, err := sim.Run(cfg)
		require.NoError(t, err)
		t.Logf("seed %d: %s", cfg.Seed, res.Trace.Describe())
		t.Logf("seed %d: %s", cfg.Seed, res.Summary())
		if !res.OK() {
			min := sim.Minimize(res.Trace, res.Violations[0].Invariant, 0)
			path := writeTrace(t, min, cfg.Seed, true)
			t.Log("the minimised trace, replayed:")
			_, _ = sim.ReplayLog(min, func(line string) { t.Log(line) })
			t.Errorf("seed %d: %v\nminimised to %d actions: %s\nreplay: %s", cfg.Seed, res.Violations[0], len(min.Actions), path, replayCommand(cfg.Seed, cfg.FaultRate))
		}
		return
	}

	n := *flagSeeds
	if n == 0 {
		switch {
		case raceEnabled:
			n = 10 // the race detector slows a run tenfold; CI runs the seeds without it
		case testing.Short():
			n = 50
		default:
			n = 300
		}
	}
	start := time.Now()
	stats := runSeeds(t, *flagFirst, n, cfg)
	elapsed := time.Since(start)
	defer simulateChildJobs(t, *flagFirst, n, cfg.FaultRate, *flagReport)
	defer simulateRoles(t, *flagFirst, n, cfg.FaultRate, *flagReport)
	perMinute := float64(n) / elapsed.Minutes()
	summary := fmt.Sprintf("simulation: %d seeds from %d in %v (%.0f seeds/min, %d workers), fault rate %g\n"+
		"  syncs %d, pods %d, jobs complete %d, failed %d; %d seeds with the custom owner %v\n"+
		"  owners deleted %d (%d Jobs, %d Tasks); orphans %d, adopted %d, released %d (in %d seeds)\n"+
		"  faults injected (%d): %s\n"+
		"  violations: %d",
		n, *flagFirst, elapsed.Round(time.Millisecond), perMinute, runtime.GOMAXPROCS(0), cfg.FaultRate,
		stats.syncs, stats.pods, stats.complete, stats.failed, stats.custom, sim.TaskKind,
		stats.deletedJobs+stats.deletedTasks, stats.deletedJobs, stats.deletedTasks, stats.orphans, stats.adopted, stats.released, stats.orphanSeeds,
		stats.faults.Total(), stats.faults, len(stats.bad))
	for _, inv := range sortedKeys(stats.byInvariant) {
		summary += fmt.Sprintf("\n    %s: %d", inv, stats.byInvariant[inv])
	}
	if *flagReport {
		fmt.Println(summary)
	} else {
		t.Log(summary)
	}
	for _, b := range stats.bad {
		t.Errorf("seed %d: %s\nreplay: %s", b.seed, b.res.Violations[0], replayCommand(b.seed, cfg.FaultRate))
		if *flagMinimize != "" {
			min := sim.Minimize(b.res.Trace, b.res.Violations[0].Invariant, 0)
			t.Logf("seed %d minimised to %d actions: %s", b.seed, len(min.Actions), writeTrace(t, min, b.seed, false))
		}
	}
}

type failure struct {
	seed uint64
	res  *sim.Result
}

type seedStats struct {
	syncs, pods, complete, failed int
	custom                        int // seeds run with the custom owner
	deletedJobs, deletedTasks     int // seeds whose owner was deleted, by kind
	orphans, adopted, released    int // pods, over all seeds
	orphanSeeds                   int // seeds with an orphan or a release
	faults                        sim.Counts
	byInvariant                   map[string]int
	bad                           []failure
}

// runSeeds runs seeds first..first+n-1 on one worker per CPU. Each run is
// independent and deterministic; only the order of completion varies.
func runSeeds(t *testing.T, first uint64, n int, cfg sim.Config) seedStats {
	stats := seedStats{faults: sim.Counts{}, byInvariant: map[string]int{}}
	var mu sync.Mutex
	seeds := make(chan uint64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for seed := range seeds {
				c := cfg
				c.Seed = seed
				c.Owner = ownerFor(t, seed)
				res, err := sim.Run(c)
				mu.Lock()
				if err != nil {
					t.Errorf("seed %d: %v", seed, err)
					mu.Unlock()
					continue
				}
				stats.syncs += res.Syncs
				stats.pods += res.Pods
				stats.faults.Add(res.Faults)
				if res.Trace.Owner != nil {
					stats.custom++
				}
				switch {
				case res.OwnerDeleted && res.Trace.Owner != nil:
					stats.deletedTasks++
				case res.OwnerDeleted:
					stats.deletedJobs++
				}
				stats.orphans += res.Orphans
				stats.adopted += res.Adopted
				stats.released += res.Released
				if res.Orphans+res.Released > 0 {
					stats.orphanSeeds++
				}
				switch {
				case !res.OK():
					stats.byInvariant[string(res.Violations[0].Invariant)]++
					stats.bad = append(stats.bad, failure{seed, res})
				case res.Condition == batchv1.JobComplete:
					stats.complete++
				case res.Condition == batchv1.JobFailed:
					stats.failed++
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		seeds <- first + uint64(i)
	}
	close(seeds)
	wg.Wait()
	sort.Slice(stats.bad, func(i, j int) bool { return stats.bad[i].seed < stats.bad[j].seed })
	return stats
}

func writeTrace(t *testing.T, tr *sim.Trace, seed uint64, toTemp bool) string {
	dir := *flagMinimize
	if dir == "" {
		if !toTemp {
			return ""
		}
		dir = os.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("seed-%d.json", seed))
	if err := sim.WriteTrace(path, tr); err != nil {
		t.Errorf("write trace: %v", err)
	}
	return path
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// The 300 seeds of the default run delete owners of both kinds mid-run, and give
// Jobs orphans that the controller adopts and relabelled pods that it releases,
// without breaking an invariant; each such run finishes (a deleted owner's pods
// all gone).
func TestSimulationCoversOwnersAndOrphans(t *testing.T) {
	n := uint64(300)
	if raceEnabled {
		n = 40
	}
	var deletedJobs, deletedTasks, orphans, adopted, released int
	for seed := range n {
		cfg := sim.Config{Seed: seed, FaultRate: 0.1}
		if seed%4 == 3 {
			cfg.Owner = sim.TaskKind
		}
		res, err := sim.Run(cfg)
		require.NoError(t, err)
		require.True(t, res.OK(), "seed %d: %v", seed, res.Violations)
		require.True(t, res.Finished, "seed %d: %s", seed, res.Summary())
		switch {
		case res.OwnerDeleted && cfg.Owner == sim.TaskKind:
			deletedTasks++
		case res.OwnerDeleted:
			deletedJobs++
		}
		if res.OwnerDeleted {
			require.Empty(t, res.Condition, "seed %d: a deleted owner has no terminal condition", seed)
		}
		if cfg.Owner == sim.TaskKind {
			require.Zero(t, res.Orphans+res.Adopted+res.Released, "seed %d: a Task has no selector: no orphans", seed)
		}
		orphans += res.Orphans
		adopted += res.Adopted
		released += res.Released
	}
	t.Logf("%d seeds: owners deleted %d Jobs, %d Tasks; orphans %d, adopted %d, released %d", n, deletedJobs, deletedTasks, orphans, adopted, released)
	if raceEnabled {
		return // too few seeds to promise every kind
	}
	require.Positive(t, deletedJobs, "Jobs deleted mid-run")
	require.Positive(t, deletedTasks, "Tasks deleted mid-run")
	require.Positive(t, orphans, "orphans created")
	require.Positive(t, adopted, "orphans adopted")
	require.Positive(t, released, "pods released")
}

// TestRegressions replays the minimised traces of the bugs the simulator found
// (testdata/regressions): each broke an invariant before its fix, and must now run
// to the end with none broken.
func TestRegressions(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "regressions", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths, "no regression traces")
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			tr, err := sim.ReadTrace(path)
			require.NoError(t, err)
			require.NotEmpty(t, tr.Note, "a regression trace says what it found")
			res, err := sim.Replay(tr)
			require.NoError(t, err)
			require.Truef(t, res.OK(), "Replay(%s) = %v\n%s", path, res.Violations, tr.Note)
			require.True(t, res.Finished, "Replay(%s) did not finish: %s", path, res.Summary())
		})
	}
}

// A seed gives the same run every time, and replaying its trace gives the same run
// again, call for call.
func TestRunIsDeterministic(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 20, 88, 467} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			cfg := sim.Config{Seed: seed, FaultRate: 0.2}
			a, err := sim.Run(cfg)
			require.NoError(t, err)
			b, err := sim.Run(cfg)
			require.NoError(t, err)
			ja, err := sim.MarshalTrace(a.Trace)
			require.NoError(t, err)
			jb, err := sim.MarshalTrace(b.Trace)
			require.NoError(t, err)
			require.Equal(t, string(ja), string(jb), "two runs of seed %d", seed)
			require.Equal(t, a.Summary(), b.Summary())

			r, err := sim.Replay(a.Trace)
			require.NoError(t, err)
			jr, err := sim.MarshalTrace(r.Trace)
			require.NoError(t, err)
			require.Equal(t, string(ja), string(jr), "the replay of seed %d", seed)
			require.Equal(t, a.Summary(), r.Summary())
		})
	}
}

func TestTraceRoundTrip(t *testing.T) {
	res, err := sim.Run(sim.Config{Seed: 5, FaultRate: 0.3})
	require.NoError(t, err)
	res.Trace.Note = "a note with \"quotes\"\nand a newline"
	path := filepath.Join(t.TempDir(), "trace.json")
	require.NoError(t, sim.WriteTrace(path, res.Trace))
	back, err := sim.ReadTrace(path)
	require.NoError(t, err)
	want, err := sim.MarshalTrace(res.Trace)
	require.NoError(t, err)
	got, err := sim.MarshalTrace(back)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))

	_, err = sim.ReadTrace(filepath.Join(t.TempDir(), "missing.json"))
	require.Error(t, err)
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"actions": []}`), 0o644))
	_, err = sim.ReadTrace(bad)
	require.ErrorContains(t, err, "no job")
}

// A seed run with a custom owner (a Task with its own finalizer, synced through
// New and Sync) is the run of the same seed with a batch/v1 Job, call for
// call: the same actions and faults, syncs, pods, status and verdict. The invariants
// are checked on both.
func TestCustomOwnerRunsLikeAJob(t *testing.T) {
	n := 60
	if raceEnabled {
		n = 6
	}
	for seed := range uint64(n) {
		cfg := sim.Config{Seed: seed, FaultRate: 0.2}
		job, err := sim.Run(cfg)
		require.NoError(t, err)
		cfg.Owner = sim.TaskKind
		task, err := sim.Run(cfg)
		require.NoError(t, err)
		require.NotNil(t, task.Trace.Owner, "seed %d ran with the custom owner", seed)
		require.Nil(t, job.Trace.Owner)
		require.True(t, task.OK(), "seed %d with the custom owner: %v", seed, task.Violations)
		if hasVerb(job.Trace, sim.VerbOrphan, sim.VerbRelabel, sim.VerbReleaseActive) {
			// Orphans and relabelled pods are drawn for Jobs only (a Task has no
			// selector): the runs part there.
			require.False(t, hasVerb(task.Trace, sim.VerbOrphan, sim.VerbRelabel, sim.VerbReleaseActive), "seed %d: a Task run with orphans", seed)
			continue
		}
		require.Equal(t, job.Violations, task.Violations, "seed %d", seed)
		// Messages name the owner's kind ("Task has reached the specified backoff
		// limit"); read as a Job's, the statuses are equal.
		require.Equal(t, job.Status, taskStatusAsJob(task.Status), "seed %d: status", seed)
		require.Equal(t, []any{job.Syncs, job.Pods, job.Finished, job.Condition, job.Faults}, []any{task.Syncs, task.Pods, task.Finished, task.Condition, task.Faults}, "seed %d", seed)
		require.Equal(t, job.Trace.Actions, statusOpsAsJob(task.Trace.Actions), "seed %d: actions", seed)
	}
}

// taskStatusAsJob is a Task's status with the messages of its conditions in a Job's
// words: the kind leads every message the plan writes for an owner.
func taskStatusAsJob(st batchv1.JobStatus) batchv1.JobStatus {
	st = *st.DeepCopy()
	for i := range st.Conditions {
		if m, ok := strings.CutPrefix(st.Conditions[i].Message, "Task "); ok {
			st.Conditions[i].Message = "Job " + m
		}
	}
	return st
}

// hasVerb says whether tr has an action doing one of verbs.
func hasVerb(tr *sim.Trace, verbs ...sim.Verb) bool {
	for _, a := range tr.Actions {
		if slices.Contains(verbs, a.Do) {
			return true
		}
	}
	return false
}

// statusOpsAsJob returns actions with the faults drawn on a Task's status writes
// named as those on a Job's.
func statusOpsAsJob(actions []sim.Action) []sim.Action {
	out := make([]sim.Action, len(actions))
	for i, a := range actions {
		a.Faults = slices.Clone(a.Faults)
		for k := range a.Faults {
			if a.Faults[k].Op == string(reconciletest.OpUpdateStatus) {
				a.Faults[k].Op = string(reconciletest.OpUpdateJobStatus)
			}
		}
		out[i] = a
	}
	return out
}

// A trace of a custom-owner run names its owner, and replays as that owner.
func TestCustomOwnerTraceReplays(t *testing.T) {
	res, err := sim.Run(sim.Config{Seed: 11, FaultRate: 0.2, Owner: sim.TaskKind})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "trace.json")
	require.NoError(t, sim.WriteTrace(path, res.Trace))
	back, err := sim.ReadTrace(path)
	require.NoError(t, err)
	require.Equal(t, &sim.TaskKind, back.Owner)
	r, err := sim.Replay(back)
	require.NoError(t, err)
	require.Equal(t, res.Summary(), r.Summary())
	require.Contains(t, r.Summary(), sim.TaskKind.String())
	require.True(t, r.OK() && r.Finished, "%s", r.Summary())
}

// Traces with the owner's deletion, orphans and relabelled pods write, read and
// replay to the same run: the orphans' phase and index and the relabelled pod are
// in the trace, not in the generator.
func TestOwnerAndOrphanTracesRoundTrip(t *testing.T) {
	want := map[string][]sim.Verb{
		"deleted Job":   {sim.VerbDeleteOwner, sim.VerbCollectGarbage, sim.VerbCleanOrphans},
		"deleted Task":  {sim.VerbDeleteOwner, sim.VerbCollectGarbage, sim.VerbCleanOrphans},
		"orphans":       {sim.VerbOrphan},
		"relabelled":    {sim.VerbRelabel},
		"released live": {sim.VerbReleaseActive},
	}
	found := map[string]*sim.Result{}
	for seed := uint64(0); seed < 300 && len(found) < len(want); seed++ {
		for _, owner := range []owner.Kind{{}, sim.TaskKind} {
			res, err := sim.Run(sim.Config{Seed: seed, FaultRate: 0.1, Owner: owner})
			require.NoError(t, err)
			for name, verbs := range want {
				if found[name] != nil || (name == "deleted Task") != (res.Trace.Owner != nil) {
					continue
				}
				if hasAll(res.Trace, verbs) {
					found[name] = res
				}
			}
		}
	}
	for name := range want {
		t.Run(name, func(t *testing.T) {
			res := found[name]
			require.NotNil(t, res, "no seed below 300 has %v", want[name])
			path := filepath.Join(t.TempDir(), "trace.json")
			require.NoError(t, sim.WriteTrace(path, res.Trace))
			back, err := sim.ReadTrace(path)
			require.NoError(t, err)
			a, err := sim.MarshalTrace(res.Trace)
			require.NoError(t, err)
			b, err := sim.MarshalTrace(back)
			require.NoError(t, err)
			require.Equal(t, string(a), string(b), "the trace read back")
			r, err := sim.Replay(back)
			require.NoError(t, err)
			require.Equal(t, res.Summary(), r.Summary(), "the replay")
			require.True(t, r.OK() && r.Finished, "%s", r.Summary())
		})
	}
}

func hasAll(tr *sim.Trace, verbs []sim.Verb) bool {
	for _, v := range verbs {
		if !hasVerb(tr, v) {
			return false
		}
	}
	return true
}
