package concurrency_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jobkit/jobkit/concurrency"
	plainconc "github.com/jobkit/jobkit/plain/concurrency"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)

// TestDecideIsThePlainDecision checks that the Kubernetes face gives the plain
// package's answer with string UIDs for the same jobs: the candidate is kept out
// of its own counts and ties are broken by UID the same way.
func TestDecideIsThePlainDecision(t *testing.T) {
	peers := func(n int) []concurrency.Peer {
		p := make([]concurrency.Peer, n)
		for i := range p {
			st := concurrency.StateTriggered
			if i%4 == 0 {
				st = concurrency.StatePending
			}
			p[i] = concurrency.Peer{UID: types.UID(rune('a'+i%26)) + types.UID(rune('a'+i/26)), JobName: "unit", Queue: "q",
				State: st, Created: t0.Add(time.Duration(i/2) * time.Second)}
		}
		return p
	}
	cases := []struct {
		name        string
		peers       []concurrency.Peer
		self        int
		limits      concurrency.Limits
		maxConc     int
		wantAllowed bool
		wantCounts  concurrency.Counts
	}{
		{name: "no peers", peers: nil, self: -1, wantAllowed: true},
		{name: "candidate among 10 peers is not counted", peers: peers(10), self: 0, maxConc: 3,
			wantAllowed: true, wantCounts: concurrency.Counts{Pending: 2, SameName: 2}},
		{name: "lower UID of a tie goes first", peers: peers(10), self: 2, maxConc: 5,
			wantAllowed: true, wantCounts: concurrency.Counts{Pending: 3, SameName: 4}},
		{name: "higher UID of a tie waits", peers: peers(10), self: 3, maxConc: 5,
			wantAllowed: false, wantCounts: concurrency.Counts{Pending: 3, SameName: 5}},
		{name: "100 peers", peers: peers(100), self: 40, limits: concurrency.Limits{Queues: map[string]int{"q": 55}},
			wantAllowed: true, wantCounts: concurrency.Counts{Pending: 24, SameName: 54, SameQueue: 54}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := concurrency.Candidate{Peer: concurrency.Peer{UID: "zz", JobName: "unit", Created: t0.Add(time.Hour)}, MaxConcurrency: tc.maxConc}
			if tc.self >= 0 {
				c.Peer = tc.peers[tc.self]
				if tc.limits.Queues == nil {
					c.Queue = ""
				}
			}
			got, err := concurrency.Decide(c, tc.peers, tc.limits)
			require.NoError(t, err)
			if got.Allowed != tc.wantAllowed {
				t.Errorf("Decide().Allowed = %v, want %v (%s)", got.Allowed, tc.wantAllowed, got.Message)
			}
			if diff := cmp.Diff(tc.wantCounts, got.Counts); diff != "" {
				t.Errorf("Decide().Counts (-want +got):\n%s", diff)
			}
			plain := make([]plainconc.Peer[string], len(tc.peers))
			for i, p := range tc.peers {
				plain[i] = plainPeer(p)
			}
			want, err := plainconc.Decide(plainconc.Candidate[string]{Peer: plainPeer(c.Peer), MaxConcurrency: c.MaxConcurrency}, plain, tc.limits)
			require.NoError(t, err)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Decide() differs from plainconc.Decide() (-plain +kubernetes):\n%s", diff)
			}
		})
	}
}

func plainPeer(p concurrency.Peer) plainconc.Peer[string] {
	return plainconc.Peer[string]{UID: string(p.UID), JobName: p.JobName, Queue: p.Queue, State: p.State, Created: p.Created}
}

func TestDecideErrors(t *testing.T) {
	_, err := concurrency.Decide(concurrency.Candidate{Peer: concurrency.Peer{UID: "a", Queue: "gpu"}}, nil, concurrency.Limits{})
	require.Error(t, err)
	if !errors.Is(err, concurrency.ErrUnknownQueue) || !errors.Is(err, concurrency.ErrInvalidInput) {
		t.Errorf("Decide(unknown queue) = %v, want an error matching ErrUnknownQueue and ErrInvalidInput", err)
	}
	var ie *concurrency.InputError
	require.ErrorAs(t, err, &ie)
	if ie.Field != "Candidate.Queue" {
		t.Errorf("InputError.Field = %q, want %q", ie.Field, "Candidate.Queue")
	}
}

func TestDecideDoesNotAllocate(t *testing.T) {
	peers := make([]concurrency.Peer, 1000)
	for i := range peers {
		peers[i] = concurrency.Peer{UID: types.UID(rune('A' + i)), JobName: "unit", State: concurrency.StateFinished, Created: t0}
	}
	c := concurrency.Candidate{Peer: concurrency.Peer{UID: "self", JobName: "unit", Created: t0}, MaxConcurrency: 1}
	allocs := testing.AllocsPerRun(100, func() {
		if d, err := concurrency.Decide(c, peers, concurrency.Limits{}); err != nil || !d.Allowed {
			t.Fatal(d, err)
		}
	})
	if allocs != 0 {
		t.Errorf("Decide of 1,000 peers made %v allocations, want 0", allocs)
	}
}
