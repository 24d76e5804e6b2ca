package reconciletest

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// figWant is what one run of the figures must give, worked out from the
// scenario (see TestRolesVsChildJobs).
type figWant struct {
	owner, jobs, gc callCounts
	// conflicts are the finalizer removals refused with a Conflict, syncErrors
	// the syncs they failed.
	conflicts, syncErrors int
	// completeInL is the exact time to Complete without event lag; with lag,
	// hops bound it: at most completeInL(lag 0) + hops × (lag + L/5), one event
	// hand-off (and its batch period) per hop on the critical path.
	completeInL float64
	hops        int
}

// TestRolesVsChildJobs runs 1 launcher and 64 workers through an owner of
// several roles (SyncRoles) and through the JobSet-compatible path (childjobs.Compute
// and one Job Reconciler per child Job), every API call taking L, with event lags
// of 0 and 3 L, and checks each run's pod creations, finalizers, writes by kind
// and by controller, and time to Complete; with -latency.table (make latency) it
// prints the table of docs/performance.md "Several roles".
//
// The writes, from the scenario:
//
//   - roles: 65 pod creations, 65 finalizer removals (the launcher's once it
//     succeeded, each worker's before its deletion when the group completes), 64
//     deletions, and 4 status writes: the creation of the workers, the workers
//     Ready (with the launcher's creation), the launcher's success recorded in
//     the ledger (with its finalizer removal), the launcher counted and the group
//     Completed (with the workers' stop). The event lag changes none of it.
//     Without lag, Complete comes at 13.4 L: 8 L for the first write and the
//     slow-start batches of 64 creations (1, 2, 4, 8, 16, 32, 1), 2 L for the
//     next write and the launcher, 2 L for its record and removal, 1 L for the
//     last write, and twice the pod events' batch period (0.2 L).
//   - child Jobs: the group controller writes 2 Jobs, 1 foreground deletion (the
//     workers' Job, once the group completed) and its status at each change of a
//     child's counts (8 without lag; 7 with, where two changes come in one
//     sync); the Job controller writes 65 pods, 7 Job statuses (workers: created,
//     Ready, the ledger and the count of the deletion; launcher: created, the
//     ledger, Complete) and 65 finalizer removals, plus the removals refused
//     with a Conflict: the garbage collector's 64 deletions change the workers
//     while their removals, which carry the cached resourceVersion of a pod not
//     finished, are on the way; the sync asks to look again (no error), and the
//     next one, from a cache that shows the deletion, removes the finalizer (one
//     refusal per worker, with or without lag); the garbage collector deletes the
//     64 workers.
func TestRolesVsChildJobs(t *testing.T) {
	const L = 10 * time.Millisecond
	type path struct {
		name string
		run  func(context.Context, time.Duration, time.Duration) (figResult, error)
		want map[time.Duration]figWant
	}
	roles := figWant{owner: callCounts{creates: 65, patches: 65, deletes: 64, status: 4}, completeInL: 13.4, hops: 3}
	paths := []path{
		{"roles", runRolesFigure, map[time.Duration]figWant{0: roles, 3 * L: roles}},
		{"child Jobs", runJobSetFigure, map[time.Duration]figWant{
			0: {owner: callCounts{creates: 2, deletes: 1, status: 8}, jobs: callCounts{creates: 65, patches: 65 + 64, status: 7},
				gc: callCounts{deletes: 64}, conflicts: 64, completeInL: 19, hops: 6},
			3 * L: {owner: callCounts{creates: 2, deletes: 1, status: 7}, jobs: callCounts{creates: 65, patches: 65 + 64, status: 7},
				gc: callCounts{deletes: 64}, conflicts: 64, completeInL: 19, hops: 6},
		}},
	}
	table := false
	if f := flag.Lookup("latency.table"); f != nil {
		table = f.Value.String() == "true"
	}
	if table {
		fmt.Println()
		fmt.Println("| path | event lag | time to Complete | last finalizer gone | API writes | by kind | by controller |")
		fmt.Println("|---|---|---|---|---|---|---|")
	}
	for _, lag := range []time.Duration{0, 3 * L} {
		totals := map[string]int{}
		for _, p := range paths {
			// A subtest each: synctest.Test ends the test it is given at its
			// first failure.
			t.Run(fmt.Sprintf("%s/lag=%dL", p.name, lag/L), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					res, err := p.run(context.Background(), L, lag)
					if err != nil {
						t.Fatalf("%s, lag %v: %v", p.name, lag, err)
					}
					checkFigure(t, p.name, lag, L, res, p.want[lag])
					totals[p.name] = res.writes()
					if table {
						fmt.Println(res.row(lag / L))
					}
				})
			})
		}
		if len(totals) == len(paths) && totals["roles"] >= totals["child Jobs"] {
			t.Errorf("lag %v: the roles path wrote %d times, the child Jobs path %d: want fewer", lag, totals["roles"], totals["child Jobs"])
		}
	}
}

// checkFigure checks one run against want: every slot's pod created once, no
// finalizer left, the writes exactly, the time to Complete.
func checkFigure(t *testing.T, name string, lag, L time.Duration, res figResult, want figWant) {
	t.Helper()
	at := fmt.Sprintf("%s, lag %d L", name, lag/L)
	slots := map[string]int{"launcher/0": 1}
	for i := range figWorkers {
		slots["worker/"+strconv.Itoa(i)] = 1
	}
	for slot, n := range res.created {
		if slots[slot] != n {
			t.Errorf("%s: %d pods created for %s, want %d", at, n, slot, slots[slot])
		}
	}
	for slot := range slots {
		if res.created[slot] == 0 {
			t.Errorf("%s: no pod created for %s", at, slot)
		}
	}
	if len(res.tracked) > 0 {
		t.Errorf("%s: pods left with the tracking finalizer: %v", at, res.tracked)
	}
	for _, w := range []struct {
		who       string
		got, want callCounts
	}{{"owner's controller", res.owner, want.owner}, {"Job controller", res.jobs, want.jobs}, {"garbage collector", res.gc, want.gc}} {
		if w.got != w.want {
			t.Errorf("%s: writes of the %s %+v, want %+v", at, w.who, w.got, w.want)
		}
	}
	if res.conflicts != want.conflicts || res.syncErrors != want.syncErrors {
		t.Errorf("%s: %d conflicts, %d failed syncs; want %d and %d", at, res.conflicts, res.syncErrors, want.conflicts, want.syncErrors)
	}
	limit := want.completeInL + float64(want.hops)*float64(lag+L/5)/float64(L)
	switch {
	case lag == 0 && math.Abs(res.completeInL-want.completeInL) > 1e-9:
		t.Errorf("%s: Complete after %.2f L, want %.1f L", at, res.completeInL, want.completeInL)
	case res.completeInL > limit:
		t.Errorf("%s: Complete after %.2f L, want at most %.1f L", at, res.completeInL, limit)
	case res.freeInL < res.completeInL:
		t.Errorf("%s: the last finalizer went at %.1f L, before Complete at %.1f L: the stop of the workers comes after", at, res.freeInL, res.completeInL)
	}
}

// row is the run's line of the README table.
func (r *figResult) row(lagInL time.Duration) string {
	refused := ""
	if r.conflicts > 0 {
		refused = fmt.Sprintf(" (%d refused: Conflict)", r.conflicts)
	}
	var kinds, who string
	if r.jobs.total() == 0 { // one owner of roles: its controller makes every call
		o := r.owner
		kinds = fmt.Sprintf("%d pod creates, %d finalizer removals%s, %d pod deletes, %d status", o.creates, o.patches, refused, o.deletes, o.status)
		who = fmt.Sprintf("roles controller %d", o.total())
	} else {
		g, j := r.owner, r.jobs
		kinds = fmt.Sprintf("%d pod creates, %d finalizer removals%s, %d pod deletes, %d Job creates, %d Job delete, %d status (%d group, %d Job)",
			j.creates, j.patches, refused, r.gc.deletes, g.creates, g.deletes, g.status+j.status, g.status, j.status)
		who = fmt.Sprintf("group controller %d, Job controller %d, garbage collector %d", g.total(), j.total(), r.gc.total())
	}
	return fmt.Sprintf("| %s | %d L | %.1f L | %.1f L | %d | %s | %s |", r.path, lagInL, r.completeInL, r.freeInL, r.writes(), kinds, who)
}
