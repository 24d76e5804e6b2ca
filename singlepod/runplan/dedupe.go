package runplan

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Deduplication is the answer of Deduplicate.
type Deduplication struct {
	// NewestUID and NewestName name the run that survives; empty when the
	// run takes part in no dedupe (no DedupeKey, or finished).
	NewestUID  types.UID
	NewestName string
	// Self reports whether the run itself is superseded. Deduplicate does not act
	// on it: Compute turns it into ActionFinish with StateAborted, which
	// deletes the pod before the run is completed.
	Self bool
	// Description is what a superseded run records ("Superseded by a newer
	// run <NewestName>.").
	Description string
	// Others are the older peers to supersede, in the order of peers.
	Others []Supersession
}

// Deduplicate says which runs a newer run with the same key supersedes, the
// de-duplication Compute applies (its step 3), for a caller that wants that one
// answer: among the
// unfinished runs (not completed, state new, triggered or pending, no abort
// requested) with run's JobName and a DedupeKey equal to run's non-empty
// one, the newest survives and every other one is superseded. Newest is:
//
//  1. the latest StartTime, a zero StartTime (a run not seen yet, which will
//     be stamped at its first sync) counting as now;
//  2. on a tie, the latest creation time (plank keeps the one earlier in
//     its list, an order nobody controls; creation time does not change
//     between syncs, so every sync agrees);
//  3. on a tie again, the greater UID.
//
// A finished or keyless run takes part in nothing: the zero Deduplication.
// peers may contain run (skipped by UID). Deduplicate is O(len(peers)), does not
// modify its arguments and allocates only Others.
func Deduplicate(run Run, peers []Run, now time.Time) Deduplication {
	if !dedupes(&run) {
		return Deduplication{}
	}
	newest := &run
	for i := range peers {
		p := &peers[i]
		if p.UID != run.UID && sameKey(p, &run) && newer(p, newest, now) {
			newest = p
		}
	}
	d := Deduplication{NewestUID: newest.UID, NewestName: newest.Name,
		Description: fmt.Sprintf("%s %s.", messageSuperseded, newest.Name)}
	d.Self = newest.UID != run.UID
	for i := range peers {
		p := &peers[i]
		if p.UID != run.UID && p.UID != newest.UID && sameKey(p, &run) {
			d.Others = append(d.Others, Supersession{UID: p.UID, Name: p.Name, Description: d.Description})
		}
	}
	return d
}

// dedupes reports whether r takes part in a dedupe at all.
func dedupes(r *Run) bool {
	return r.DedupeKey != "" && !r.Completed && !r.AbortRequested &&
		(r.State == StateNew || r.State == StateTriggered || r.State == StatePending)
}

func sameKey(p, r *Run) bool {
	return p.JobName == r.JobName && p.DedupeKey == r.DedupeKey && dedupes(p)
}

// newer reports whether a is newer than b: start time (zero is now), then
// creation time, then UID.
func newer(a, b *Run, now time.Time) bool {
	sa, sb := orNow(a.StartTime, now), orNow(b.StartTime, now)
	switch {
	case !sa.Equal(sb):
		return sa.After(sb)
	case !a.Created.Equal(b.Created):
		return a.Created.After(b.Created)
	}
	return a.UID > b.UID
}

func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t
}
