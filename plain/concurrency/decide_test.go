package concurrency_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/plain/concurrency"
)

var t0 = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)

// peer returns a peer named name in queue, created sec seconds after t0.
func peer(uid, name, queue string, st concurrency.State, sec int) concurrency.Peer[string] {
	return concurrency.Peer[string]{UID: uid, JobName: name, Queue: queue, State: st,
		Created: t0.Add(time.Duration(sec) * time.Second)}
}

const (
	trig = concurrency.StateTriggered
	pend = concurrency.StatePending
	fin  = concurrency.StateFinished
)

// self is the candidate of most cases: job "unit", created at t0+10s, UID "m".
func self(maxConcurrency int, queue string) concurrency.Candidate[string] {
	return concurrency.Candidate[string]{Peer: peer("m", "unit", queue, trig, 10), MaxConcurrency: maxConcurrency}
}

func allowed(n concurrency.Counts) concurrency.Decision {
	return concurrency.Decision{Allowed: true, Counts: n, Message: "within all limits"}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name   string
		cand   concurrency.Candidate[string]
		peers  []concurrency.Peer[string]
		limits concurrency.Limits
		want   concurrency.Decision
	}{
		{
			name: "no limits, no peers",
			cand: self(0, ""),
			want: allowed(concurrency.Counts{}),
		},
		{
			name: "no limits: counts are reported but nothing blocks",
			cand: self(0, ""),
			peers: []concurrency.Peer[string]{
				peer("a", "unit", "", pend, 0),
				peer("b", "unit", "", trig, 0),
				peer("c", "lint", "", pend, 0),
			},
			want: allowed(concurrency.Counts{Pending: 2, SameName: 2}),
		},

		// Global cap.
		{
			name:   "global: below the cap",
			cand:   self(0, ""),
			peers:  []concurrency.Peer[string]{peer("a", "lint", "", pend, 0)},
			limits: concurrency.Limits{MaxPending: 2},
			want:   allowed(concurrency.Counts{Pending: 1}),
		},
		{
			name:   "global: at the cap, pending jobs of any name count",
			cand:   self(0, ""),
			peers:  []concurrency.Peer[string]{peer("a", "lint", "", pend, 0), peer("b", "e2e", "q", pend, 20)},
			limits: concurrency.Limits{MaxPending: 2},
			want: concurrency.Decision{BlockedBy: concurrency.LimitMaxPending, Limit: 2,
				Counts:     concurrency.Counts{Pending: 2},
				Message:    "2 jobs are pending, at most 2 may be",
				RetryAfter: concurrency.DefaultRetryAfter},
		},
		{
			name:   "global: above the cap",
			cand:   self(0, ""),
			peers:  []concurrency.Peer[string]{peer("a", "lint", "", pend, 0), peer("b", "lint", "", pend, 0), peer("c", "lint", "", pend, 0)},
			limits: concurrency.Limits{MaxPending: 2, RetryAfter: time.Minute},
			want: concurrency.Decision{BlockedBy: concurrency.LimitMaxPending, Limit: 2,
				Counts:     concurrency.Counts{Pending: 3},
				Message:    "3 jobs are pending, at most 2 may be",
				RetryAfter: time.Minute},
		},
		{
			name: "global: triggered and finished jobs do not count, even older ones",
			cand: self(0, ""),
			peers: []concurrency.Peer[string]{
				peer("a", "lint", "", trig, 0), peer("b", "lint", "", fin, 0), peer("c", "unit", "", trig, 0),
			},
			limits: concurrency.Limits{MaxPending: 1},
			want:   allowed(concurrency.Counts{SameName: 1}),
		},
		{
			name:   "global: the candidate itself does not count when listed as pending",
			cand:   self(0, ""),
			peers:  []concurrency.Peer[string]{peer("m", "unit", "", pend, 10)},
			limits: concurrency.Limits{MaxPending: 1},
			want:   allowed(concurrency.Counts{}),
		},

		// Per job name.
		{
			name:  "name: pending peers of the name count whatever their age",
			cand:  self(2, ""),
			peers: []concurrency.Peer[string]{peer("a", "unit", "", pend, 0), peer("z", "unit", "", pend, 99)},
			want: concurrency.Decision{BlockedBy: concurrency.LimitMaxConcurrency, Limit: 2,
				Counts:     concurrency.Counts{Pending: 2, SameName: 2},
				Message:    `2 jobs named "unit" are pending or were triggered earlier, at most 2 may run at once`,
				RetryAfter: concurrency.DefaultRetryAfter},
		},
		{
			name:  "name: an older triggered peer counts",
			cand:  self(1, ""),
			peers: []concurrency.Peer[string]{peer("z", "unit", "", trig, 9)},
			want: concurrency.Decision{BlockedBy: concurrency.LimitMaxConcurrency, Limit: 1,
				Counts:     concurrency.Counts{SameName: 1},
				Message:    `1 jobs named "unit" are pending or were triggered earlier, at most 1 may run at once`,
				RetryAfter: concurrency.DefaultRetryAfter},
		},
		{
			name:  "name: a younger triggered peer does not count",
			cand:  self(1, ""),
			peers: []concurrency.Peer[string]{peer("a", "unit", "", trig, 11)},
			want:  allowed(concurrency.Counts{}),
		},
		{
			name:  "name: same creation time, lower UID goes first",
			cand:  self(1, ""),
			peers: []concurrency.Peer[string]{peer("a", "unit", "", trig, 10)},
			want: concurrency.Decision{BlockedBy: concurrency.LimitMaxConcurrency, Limit: 1,
				Counts:     concurrency.Counts{SameName: 1},
				Message:    `1 jobs named "unit" are pending or were triggered earlier, at most 1 may run at once`,
				RetryAfter: concurrency.DefaultRetryAfter},
		},
		{
			name:  "name: same creation time, higher UID waits",
			cand:  self(1, ""),
			peers: []concurrency.Peer[string]{peer("z", "unit", "", trig, 10)},
			want:  allowed(concurrency.Counts{}),
		},
		{
			name: "name: other names, finished peers and the candidate do not count",
			cand: self(1, ""),
			peers: []concurrency.Peer[string]{
				peer("a", "lint", "", pend, 0), peer("b", "unit", "", fin, 0), peer("m", "unit", "", pend, 10),
			},
			want: allowed(concurrency.Counts{Pending: 1}),
		},
		{
			name:  "name: below the cap",
			cand:  self(3, ""),
			peers: []concurrency.Peer[string]{peer("a", "unit", "", pend, 0), peer("b", "unit", "", trig, 1)},
			want:  allowed(concurrency.Counts{Pending: 1, SameName: 2}),
		},

		// Per queue.
		{
			name:   "queue: capacity 0 never starts, even alone",
			cand:   self(0, "gpu"),
			limits: concurrency.Limits{Queues: map[string]int{"gpu": 0}},
			want: concurrency.Decision{BlockedBy: concurrency.LimitQueue, Limit: 0,
				Message:    `queue "gpu" has capacity 0: its jobs never start`,
				RetryAfter: concurrency.DefaultRetryAfter},
		},
		{
			name:   "queue: negative capacity is unlimited",
			cand:   self(0, "gpu"),
			peers:  []concurrency.Peer[string]{peer("a", "x", "gpu", pend, 0), peer("b", "y", "gpu", pend, 0)},
			limits: concurrency.Limits{Queues: map[string]int{"gpu": -1}},
			want:   allowed(concurrency.Counts{Pending: 2, SameQueue: 2}),
		},
		{
			name: "queue: pending and older triggered peers of any name count",
			cand: self(0, "gpu"),
			peers: []concurrency.Peer[string]{
				peer("a", "lint", "gpu", pend, 50),
				peer("b", "e2e", "gpu", trig, 5),
				peer("c", "e2e", "gpu", trig, 15), // younger
				peer("d", "e2e", "gpu", fin, 0),   // finished
				peer("e", "e2e", "cpu", pend, 0),  // other queue
				peer("f", "e2e", "", pend, 0),     // no queue
			},
			limits: concurrency.Limits{Queues: map[string]int{"gpu": 2, "cpu": 1}},
			want: concurrency.Decision{BlockedBy: concurrency.LimitQueue, Limit: 2,
				Counts:     concurrency.Counts{Pending: 3, SameQueue: 2},
				Message:    `2 jobs in queue "gpu" are pending or were triggered earlier, its capacity is 2`,
				RetryAfter: concurrency.DefaultRetryAfter},
		},
		{
			name:   "queue: below capacity",
			cand:   self(0, "gpu"),
			peers:  []concurrency.Peer[string]{peer("a", "lint", "gpu", pend, 0)},
			limits: concurrency.Limits{Queues: map[string]int{"gpu": 2}},
			want:   allowed(concurrency.Counts{Pending: 1, SameQueue: 1}),
		},
		{
			name:   "queue: same creation time, lower UID goes first",
			cand:   self(0, "gpu"),
			peers:  []concurrency.Peer[string]{peer("a", "lint", "gpu", trig, 10), peer("z", "lint", "gpu", trig, 10)},
			limits: concurrency.Limits{Queues: map[string]int{"gpu": 2}},
			want:   allowed(concurrency.Counts{SameQueue: 1}),
		},
		{
			name:   "queue: a candidate without a queue ignores the queues",
			cand:   self(0, ""),
			peers:  []concurrency.Peer[string]{peer("a", "unit", "gpu", pend, 0)},
			limits: concurrency.Limits{Queues: map[string]int{"gpu": 0}},
			want:   allowed(concurrency.Counts{Pending: 1, SameName: 1}),
		},

		// Order.
		{
			name:   "order: the global cap is reported before the name cap",
			cand:   self(1, "gpu"),
			peers:  []concurrency.Peer[string]{peer("a", "unit", "gpu", pend, 0)},
			limits: concurrency.Limits{MaxPending: 1, Queues: map[string]int{"gpu": 1}},
			want: concurrency.Decision{BlockedBy: concurrency.LimitMaxPending, Limit: 1,
				Counts:     concurrency.Counts{Pending: 1, SameName: 1, SameQueue: 1},
				Message:    "1 jobs are pending, at most 1 may be",
				RetryAfter: concurrency.DefaultRetryAfter},
		},
		{
			name:   "order: the name cap is reported before the queue",
			cand:   self(1, "gpu"),
			peers:  []concurrency.Peer[string]{peer("a", "unit", "gpu", pend, 0)},
			limits: concurrency.Limits{MaxPending: 2, Queues: map[string]int{"gpu": 0}},
			want: concurrency.Decision{BlockedBy: concurrency.LimitMaxConcurrency, Limit: 1,
				Counts:     concurrency.Counts{Pending: 1, SameName: 1, SameQueue: 1},
				Message:    `1 jobs named "unit" are pending or were triggered earlier, at most 1 may run at once`,
				RetryAfter: concurrency.DefaultRetryAfter},
		},
		{
			name:   "order: all limits pass",
			cand:   self(2, "gpu"),
			peers:  []concurrency.Peer[string]{peer("a", "unit", "gpu", pend, 0)},
			limits: concurrency.Limits{MaxPending: 2, Queues: map[string]int{"gpu": 2}},
			want:   allowed(concurrency.Counts{Pending: 1, SameName: 1, SameQueue: 1}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.peers)
			got, err := concurrency.Decide(tt.cand, tt.peers, tt.limits)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
			assert.Equal(t, before, tt.peers, "Decide modified its peers")
		})
	}
}

func TestDecideErrors(t *testing.T) {
	blockingPeers := []concurrency.Peer[string]{peer("a", "unit", "", pend, 0)}
	tests := []struct {
		name          string
		cand          concurrency.Candidate[string]
		peers         []concurrency.Peer[string]
		limits        concurrency.Limits
		wantErr       string
		wantUnknownQ  bool
		wantFieldName string
	}{
		{
			name:          "empty candidate UID",
			cand:          concurrency.Candidate[string]{Peer: concurrency.Peer[string]{JobName: "unit"}},
			wantErr:       `concurrency: Candidate.UID="": required to tell the candidate from its peers`,
			wantFieldName: "Candidate.UID",
		},
		{
			name:          "negative MaxConcurrency",
			cand:          self(-1, ""),
			wantErr:       "concurrency: Candidate.MaxConcurrency=-1: must not be negative",
			wantFieldName: "Candidate.MaxConcurrency",
		},
		{
			name:          "MaxConcurrency without a job name",
			cand:          concurrency.Candidate[string]{Peer: concurrency.Peer[string]{UID: "m"}, MaxConcurrency: 1},
			wantErr:       `concurrency: Candidate.JobName="": required when MaxConcurrency is set`,
			wantFieldName: "Candidate.JobName",
		},
		{
			name:          "negative MaxPending",
			cand:          self(0, ""),
			limits:        concurrency.Limits{MaxPending: -2},
			wantErr:       "concurrency: Limits.MaxPending=-2: must not be negative",
			wantFieldName: "Limits.MaxPending",
		},
		{
			name:          "negative RetryAfter",
			cand:          self(0, ""),
			limits:        concurrency.Limits{RetryAfter: -time.Second},
			wantErr:       "concurrency: Limits.RetryAfter=-1s: must not be negative",
			wantFieldName: "Limits.RetryAfter",
		},
		{
			name:          "unknown queue",
			cand:          self(0, "gpu"),
			limits:        concurrency.Limits{Queues: map[string]int{"cpu": 1}},
			wantErr:       `concurrency: Candidate.Queue="gpu": not configured in Limits.Queues`,
			wantUnknownQ:  true,
			wantFieldName: "Candidate.Queue",
		},
		{
			name:          "unknown queue with no queues configured",
			cand:          self(0, "gpu"),
			wantErr:       `concurrency: Candidate.Queue="gpu": not configured in Limits.Queues`,
			wantUnknownQ:  true,
			wantFieldName: "Candidate.Queue",
		},
		{
			name:          "unknown queue is reported even when the global cap blocks",
			cand:          self(0, "gpu"),
			peers:         blockingPeers,
			limits:        concurrency.Limits{MaxPending: 1},
			wantErr:       `concurrency: Candidate.Queue="gpu": not configured in Limits.Queues`,
			wantUnknownQ:  true,
			wantFieldName: "Candidate.Queue",
		},
		{
			name:          "peer with an empty state",
			cand:          self(0, ""),
			peers:         []concurrency.Peer[string]{peer("a", "unit", "", pend, 0), peer("b", "unit", "", "", 0)},
			wantErr:       `concurrency: peers[1].State="": must be "triggered", "pending" or "finished"`,
			wantFieldName: "peers[1].State",
		},
		{
			name:          "peer with an unknown state",
			cand:          self(0, ""),
			peers:         []concurrency.Peer[string]{peer("a", "unit", "", "aborted", 0)},
			wantErr:       `concurrency: peers[0].State="aborted": must be "triggered", "pending" or "finished"`,
			wantFieldName: "peers[0].State",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := concurrency.Decide(tt.cand, tt.peers, tt.limits)
			require.Error(t, err)
			assert.EqualError(t, err, tt.wantErr)
			assert.Equal(t, concurrency.Decision{}, got)
			assert.Equal(t, tt.wantUnknownQ, errors.Is(err, concurrency.ErrUnknownQueue),
				"errors.Is(err, ErrUnknownQueue)")
			var ie *concurrency.InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tt.wantFieldName, ie.Field)
		})
	}
}

// TestDecideCreationOrder checks that triggered jobs of one name start oldest
// first: with limit k and nothing pending, exactly the k earliest are allowed,
// including jobs that share a creation time.
func TestDecideCreationOrder(t *testing.T) {
	// 7 jobs; creation seconds with ties; UIDs not in creation order.
	jobs := []concurrency.Peer[string]{
		peer("g", "unit", "q", trig, 3),
		peer("b", "unit", "q", trig, 1),
		peer("f", "unit", "q", trig, 1),
		peer("a", "unit", "q", trig, 5),
		peer("c", "unit", "q", trig, 0),
		peer("e", "unit", "q", trig, 3),
		peer("d", "unit", "q", trig, 2),
	}
	// Creation order: c(0) b(1) f(1) d(2) e(3) g(3) a(5).
	order := []string{"c", "b", "f", "d", "e", "g", "a"}
	for k := 1; k <= len(jobs)+1; k++ {
		for _, mode := range []string{"name", "queue"} {
			t.Run(fmt.Sprintf("%s limit=%d", mode, k), func(t *testing.T) {
				var gotAllowed []string
				for _, j := range jobs {
					c := concurrency.Candidate[string]{Peer: j}
					limits := concurrency.Limits{Queues: map[string]int{"q": -1}}
					if mode == "name" {
						c.MaxConcurrency = k
					} else {
						limits.Queues["q"] = k
					}
					d, err := concurrency.Decide(c, jobs, limits)
					require.NoError(t, err)
					if d.Allowed {
						gotAllowed = append(gotAllowed, j.UID)
					}
				}
				want := order[:min(k, len(order))]
				if diff := cmp.Diff(want, gotAllowed, cmp.Transformer("sort", func(in []string) []string {
					out := slices.Clone(in)
					slices.Sort(out)
					return out
				})); diff != "" {
					t.Errorf("allowed jobs (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestDecideOneStartsAtATime simulates a controller that starts whatever
// Decide allows, one job at a time, and checks the jobs start in creation
// order and never exceed the limit.
func TestDecideOneStartsAtATime(t *testing.T) {
	const limit = 2
	jobs := make([]concurrency.Peer[string], 6)
	for i := range jobs {
		jobs[i] = peer(fmt.Sprintf("uid-%d", 5-i), "unit", "", trig, i/2) // pairs share a time
	}
	var started []string
	for round := 0; round < 20 && len(started) < len(jobs); round++ {
		for i := range jobs {
			if jobs[i].State != trig {
				continue
			}
			d, err := concurrency.Decide(concurrency.Candidate[string]{Peer: jobs[i], MaxConcurrency: limit}, jobs, concurrency.Limits{})
			require.NoError(t, err)
			if d.Allowed {
				jobs[i].State = pend
				started = append(started, jobs[i].UID)
			}
		}
		running := 0
		for _, j := range jobs {
			if j.State == pend {
				running++
			}
		}
		require.LessOrEqual(t, running, limit, "round %d", round)
		// Finish the oldest running job.
		for i := range jobs {
			if jobs[i].State == pend {
				jobs[i].State = fin
				break
			}
		}
	}
	// Round 0 starts both jobs of time 0 in list order; after that one slot frees per
	// round and, of two jobs created together, the lower UID goes first.
	want := []string{"uid-5", "uid-4", "uid-2", "uid-3", "uid-0", "uid-1"}
	if diff := cmp.Diff(want, started); diff != "" {
		t.Errorf("start order (-want +got):\n%s", diff)
	}
}
