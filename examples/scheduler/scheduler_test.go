package scheduler_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/examples/scheduler"
	"github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plain/concurrency"
	"github.com/jobkit/jobkit/plain/podfailurepolicy"
	"github.com/jobkit/jobkit/plain/successpolicy"
)

// script maps an index to the exit codes of its runs in order; past the end, 0.
type script map[int][]int32

// tasks returns a Func that runs each task for d and exits as s says, and the
// start times of the runs of each index.
func (s script) tasks(d time.Duration) (scheduler.Func, func() map[int][]time.Time) {
	var mu sync.Mutex
	starts := map[int][]time.Time{}
	fn := func(ctx context.Context, index int) int32 {
		mu.Lock()
		n := len(starts[index])
		starts[index] = append(starts[index], time.Now())
		mu.Unlock()
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return 143
		}
		if codes := s[index]; n < len(codes) {
			return codes[n]
		}
		return 0
	}
	return fn, func() map[int][]time.Time {
		mu.Lock()
		defer mu.Unlock()
		return starts
	}
}

func exitRule(action podfailurepolicy.Action, codes ...int32) podfailurepolicy.Rule {
	name := scheduler.ContainerName
	return podfailurepolicy.Rule{Action: action, OnExitCodes: &podfailurepolicy.ExitCodes{ContainerName: &name, Operator: podfailurepolicy.OpIn, Values: codes}}
}

func TestRun(t *testing.T) {
	backoff10s := backoff.Policy{Base: 10 * time.Second, Max: time.Minute}
	tests := []struct {
		name   string
		group  scheduler.Group
		script script
		want   scheduler.Result
	}{
		{
			name:  "every task succeeds",
			group: scheduler.Group{Name: "all", Tasks: 5, Parallelism: 2},
			want: scheduler.Result{Succeeded: true, Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods",
				SucceededIndexes: "0-4", Runs: 5},
		},
		{
			name:   "a retried index succeeds within its retries",
			group:  scheduler.Group{Name: "retry", Tasks: 3, Parallelism: 3, RetriesPerIndex: 2, Backoff: backoff10s},
			script: script{1: {1, 1}},
			want:   scheduler.Result{Succeeded: true, Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods", SucceededIndexes: "0-2", Runs: 5, Failures: 2},
		},
		{
			name:   "an index out of retries fails; the others finish",
			group:  scheduler.Group{Name: "exhaust", Tasks: 3, Parallelism: 3, RetriesPerIndex: 1, Backoff: backoff10s},
			script: script{2: {1, 1, 1}},
			want:   scheduler.Result{Reason: "FailedIndexes", Message: "Job has failed indexes", SucceededIndexes: "0,1", FailedIndexes: "2", Runs: 4, Failures: 2},
		},
		{
			name: "a listed exit code fails the group at once",
			group: scheduler.Group{Name: "fatal", Tasks: 4, Parallelism: 1, RetriesPerIndex: 5, Backoff: backoff10s,
				FailurePolicy: &podfailurepolicy.Policy{Rules: []podfailurepolicy.Rule{exitRule(podfailurepolicy.ActionFailJob, 42)}}},
			script: script{1: {42}},
			want: scheduler.Result{Reason: "PodFailurePolicy",
				Message:          "Container task for pod fatal-1 failed with exit code 42 matching FailJob rule at index 0",
				SucceededIndexes: "0", FailedIndexes: "1", Runs: 2, Failures: 1},
		},
		{
			name: "ignored failures do not count; FailIndex fails only its index",
			group: scheduler.Group{Name: "rules", Tasks: 3, Parallelism: 3, RetriesPerIndex: 0, Backoff: backoff10s,
				FailurePolicy: &podfailurepolicy.Policy{Rules: []podfailurepolicy.Rule{
					exitRule(podfailurepolicy.ActionIgnore, 3),
					exitRule(podfailurepolicy.ActionFailIndex, 4),
				}}},
			script: script{0: {3, 3, 3}, 1: {4}},
			want:   scheduler.Result{Reason: "FailedIndexes", Message: "Job has failed indexes", SucceededIndexes: "0,2", FailedIndexes: "1", Runs: 6, Failures: 4},
		},
		{
			name: "a success rule ends the group early",
			group: scheduler.Group{Name: "enough", Tasks: 4, Parallelism: 1, RetriesPerIndex: 3, Backoff: backoff10s,
				SuccessPolicy: &successpolicy.Policy{Rules: []successpolicy.Rule{{SucceededCount: ptrTo[int32](2)}}}},
			script: script{1: {1, 1, 1}},
			want:   scheduler.Result{Succeeded: true, Reason: "SuccessPolicy", Message: "Matched rules at index 0", SucceededIndexes: "0,2", Runs: 3, Failures: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fn, _ := tt.script.tasks(time.Second)
				got, err := scheduler.New(concurrency.Limits{}).Run(t.Context(), tt.group, fn)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if got != tt.want {
					t.Errorf("Run() = %+v\nwant    %+v", got, tt.want)
				}
			})
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// A failed index waits its backoff before it runs again: 10s after the first
// failure, 20s after the second.
func TestRunBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fn, starts := script{0: {1, 1}}.tasks(time.Second)
		start := time.Now()
		g := scheduler.Group{Name: "b", Tasks: 1, RetriesPerIndex: 2, Backoff: backoff.Policy{Base: 10 * time.Second, Max: time.Minute}}
		res, err := scheduler.New(concurrency.Limits{}).Run(t.Context(), g, fn)
		if err != nil || !res.Succeeded {
			t.Fatalf("Run() = %+v, %v", res, err)
		}
		var got []time.Duration
		for _, s := range starts()[0] {
			got = append(got, s.Sub(start))
		}
		// run 1 at 0 fails at 1s; run 2 at 1s+10s fails at 12s; run 3 at 12s+20s.
		want := []time.Duration{0, 11 * time.Second, 32 * time.Second}
		if !equalDurations(got, want) {
			t.Errorf("runs started at %v, want %v", got, want)
		}
	})
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A task past its RunTimeout is stopped and fails with ExitTimedOut, which the
// failure rules see.
func TestRunTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fn, _ := script{}.tasks(time.Hour)
		g := scheduler.Group{Name: "slow", Tasks: 2, Parallelism: 2, RunTimeout: time.Minute,
			FailurePolicy: &podfailurepolicy.Policy{Rules: []podfailurepolicy.Rule{exitRule(podfailurepolicy.ActionFailJob, scheduler.ExitTimedOut)}}}
		start := time.Now()
		res, err := scheduler.New(concurrency.Limits{}).Run(t.Context(), g, fn)
		if err != nil {
			t.Fatal(err)
		}
		if res.Succeeded || res.Reason != "PodFailurePolicy" || !strings.Contains(res.Message, "exit code 137") {
			t.Errorf("Run() = %+v, want the group failed by the timeout's exit code", res)
		}
		if d := time.Since(start); d != time.Minute {
			t.Errorf("the group ended after %v, want the timeout, 1m", d)
		}
	})
}

// Two groups on one queue of capacity 1 never run two tasks at once; both finish.
func TestRunQueueLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var now, peak atomic.Int32
		fn := func(ctx context.Context, index int) int32 {
			n := now.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(time.Second)
			now.Add(-1)
			return 0
		}
		s := scheduler.New(concurrency.Limits{Queues: map[string]int{"gpu": 1}, RetryAfter: 100 * time.Millisecond})
		var wg sync.WaitGroup
		results := make([]scheduler.Result, 2)
		for i, name := range []string{"a", "b"} {
			wg.Go(func() {
				res, err := s.Run(t.Context(), scheduler.Group{Name: name, Queue: "gpu", Tasks: 3, Parallelism: 3}, fn)
				if err != nil {
					t.Errorf("Run(%s): %v", name, err)
				}
				results[i] = res
			})
		}
		wg.Wait()
		if peak.Load() != 1 {
			t.Errorf("%d tasks ran at once on a queue of capacity 1", peak.Load())
		}
		for i, r := range results {
			if !r.Succeeded || r.Runs != 3 {
				t.Errorf("group %d: %+v, want 3 runs and success", i, r)
			}
		}
	})
}

func TestRunInvalid(t *testing.T) {
	name := "other"
	bad := scheduler.Group{Name: "", Tasks: 0, Parallelism: -1, RunTimeout: -time.Second,
		FailurePolicy: &podfailurepolicy.Policy{Rules: []podfailurepolicy.Rule{{Action: podfailurepolicy.ActionCount,
			OnExitCodes: &podfailurepolicy.ExitCodes{ContainerName: &name, Operator: podfailurepolicy.OpIn, Values: []int32{1}}}}},
	}
	_, err := scheduler.New(concurrency.Limits{}).Run(t.Context(), bad, func(context.Context, int) int32 { return 0 })
	if !errors.Is(err, scheduler.ErrInvalidGroup) {
		t.Fatalf("Run(invalid) error = %v, want ErrInvalidGroup", err)
	}
	for _, want := range []string{"Name", "Tasks: 0", "Parallelism: -1", "RunTimeout: -1s", "containerName", `"other"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

// The scheduler's build holds no Kubernetes package.
func TestNoKubernetesDependency(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	var offenders []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "sigs.k8s.io/") || (strings.Contains(p, ".") && !strings.HasPrefix(p, "github.com/jobkit/jobkit/")) {
			offenders = append(offenders, p)
		}
	}
	if len(offenders) > 0 {
		t.Errorf("the scheduler depends on packages outside the standard library and jobkit: %v", offenders)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/jobkit/jobkit/") && !strings.HasPrefix(p, "github.com/jobkit/jobkit/plain/") && p != "github.com/jobkit/jobkit/examples/scheduler" {
			t.Errorf("the scheduler imports %s, outside the plain layer", p)
		}
	}
}
