package runplan_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/singlepod/runplan"
)

func keyed(key string) func(*runplan.Run) { return func(r *runplan.Run) { r.DedupeKey = key } }

func TestDedupe(t *testing.T) {
	t0 := now.Add(-time.Hour)
	self := func(edits ...func(*runplan.Run)) runplan.Run {
		return aRun(runplan.StatePending, append([]func(*runplan.Run){keyed("pr-1")}, edits...)...)
	}
	superseded := func(name string, by string) runplan.Supersession {
		return runplan.Supersession{UID: runplanUID(name), Name: name, Description: "Superseded by a newer run " + by + "."}
	}
	tests := []struct {
		name  string
		plank string
		run   runplan.Run
		peers []runplan.Run
		want  runplan.Deduplication
	}{
		{
			name:  "no key: takes part in nothing",
			plank: "differs: plank dedupes every presubmit by its refs",
			run:   aRun(runplan.StatePending),
			peers: []runplan.Run{peer("a", "unit", runplan.StatePending, t0)},
			want:  runplan.Deduplication{},
		},
		{
			name:  "finished run: takes part in nothing",
			plank: "only incomplete jobs are considered",
			run:   aRun(runplan.StateFailure, keyed("pr-1")),
			peers: []runplan.Run{peer("a", "unit", runplan.StatePending, now, keyed("pr-1"))},
			want:  runplan.Deduplication{},
		},
		{
			name:  "alone: survives",
			plank: "a single job is kept",
			run:   self(),
			peers: []runplan.Run{self()},
			want:  runplan.Deduplication{NewestUID: runUID, NewestName: "run-1", Description: "Superseded by a newer run run-1."},
		},
		{
			name:  "latest start time survives, whatever the creation time",
			plank: "the job with the latest status.startTime survives",
			run:   self(func(r *runplan.Run) { r.Created = t0.Add(time.Hour) }),
			peers: []runplan.Run{peer("a", "unit", runplan.StatePending, t0, keyed("pr-1"), func(r *runplan.Run) { r.StartTime = now })},
			want:  runplan.Deduplication{NewestUID: "a", NewestName: "a", Self: true, Description: "Superseded by a newer run a."},
		},
		{
			name:  "older peers superseded, in the order given",
			plank: "every other job gets state aborted, but not completion",
			run:   self(func(r *runplan.Run) { r.StartTime = now }),
			peers: []runplan.Run{
				peer("b", "unit", runplan.StateTriggered, t0.Add(time.Minute), keyed("pr-1")),
				peer("a", "unit", runplan.StatePending, t0, keyed("pr-1")),
			},
			want: runplan.Deduplication{NewestUID: runUID, NewestName: "run-1", Description: "Superseded by a newer run run-1.",
				Others: []runplan.Supersession{superseded("b", "run-1"), superseded("a", "run-1")}},
		},
		{
			name:  "superseded itself together with an older peer",
			plank: "all but the newest are aborted",
			run:   self(),
			peers: []runplan.Run{
				peer("a", "unit", runplan.StatePending, t0.Add(-time.Hour), keyed("pr-1")),
				peer("c", "unit", runplan.StateTriggered, now, keyed("pr-1")),
			},
			want: runplan.Deduplication{NewestUID: "c", NewestName: "c", Self: true, Description: "Superseded by a newer run c.",
				Others: []runplan.Supersession{superseded("a", "c")}},
		},
		{
			name:  "equal start times: the later creation time survives",
			plank: "differs: plank keeps the one earlier in its list",
			run:   self(),
			peers: []runplan.Run{peer("a", "unit", runplan.StatePending, t0.Add(time.Second), keyed("pr-1"),
				func(r *runplan.Run) { r.StartTime = t0 })},
			want: runplan.Deduplication{NewestUID: "a", NewestName: "a", Self: true, Description: "Superseded by a newer run a."},
		},
		{
			name:  "equal start and creation times: the greater UID survives",
			plank: "differs: plank keeps the one earlier in its list",
			run:   self(),
			peers: []runplan.Run{peer("zzz", "unit", runplan.StatePending, t0, keyed("pr-1"))},
			want:  runplan.Deduplication{NewestUID: "zzz", NewestName: "zzz", Self: true, Description: "Superseded by a newer run zzz."},
		},
		{
			name:  "a peer not seen yet counts as started now",
			plank: "plank's jobs always have a start time",
			run:   self(func(r *runplan.Run) { r.StartTime = now.Add(-time.Second) }),
			peers: []runplan.Run{peer("new", "unit", runplan.StateNew, t0, keyed("pr-1"), func(r *runplan.Run) { r.StartTime = time.Time{} })},
			want:  runplan.Deduplication{NewestUID: "new", NewestName: "new", Self: true, Description: "Superseded by a newer run new."},
		},
		{
			name:  "finished, completed, aborting, other job or key: ignored",
			plank: "only incomplete jobs with the same identity",
			run:   self(),
			peers: []runplan.Run{
				peer("done", "unit", runplan.StateSuccess, now, keyed("pr-1")),
				peer("completed", "unit", runplan.StatePending, now, keyed("pr-1"), func(r *runplan.Run) { r.Completed = true }),
				peer("aborting", "unit", runplan.StatePending, now, keyed("pr-1"), func(r *runplan.Run) { r.AbortRequested = true }),
				peer("lint", "lint", runplan.StatePending, t0.Add(-time.Hour), keyed("pr-1")),
				peer("pr-2", "unit", runplan.StatePending, t0.Add(-time.Hour), keyed("pr-2")),
				peer("weird", "unit", "scheduling", t0.Add(-time.Hour), keyed("pr-1")),
			},
			want: runplan.Deduplication{NewestUID: runUID, NewestName: "run-1", Description: "Superseded by a newer run run-1."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runplan.Deduplicate(tt.run, tt.peers, now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Dedupe() (-want +got), plank: %s\n%s", tt.plank, diff)
			}
		})
	}
}

// TestDedupeAgrees checks that every member of a group agrees on the survivor,
// whichever run is reconciled and in whatever order the peers come.
func TestDedupeAgrees(t *testing.T) {
	t0 := now.Add(-time.Hour)
	group := []runplan.Run{
		peer("a", "unit", runplan.StatePending, t0, keyed("k")),
		peer("b", "unit", runplan.StatePending, t0, keyed("k")), // same times as a
		peer("c", "unit", runplan.StateTriggered, t0.Add(-time.Minute), keyed("k"), func(r *runplan.Run) { r.StartTime = t0 }),
	}
	reversed := []runplan.Run{group[2], group[1], group[0]}
	for _, run := range group {
		for _, peers := range [][]runplan.Run{group, reversed} {
			d := runplan.Deduplicate(run, peers, now)
			if d.NewestUID != "b" {
				t.Errorf("Dedupe(%s) newest = %s, want b", run.UID, d.NewestUID)
			}
			if d.Self != (run.UID != "b") {
				t.Errorf("Dedupe(%s).Self = %v, want %v", run.UID, d.Self, run.UID != "b")
			}
		}
	}
}

func runplanUID(name string) types.UID { return types.UID(name) }
