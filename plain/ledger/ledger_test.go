package ledger_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/plain/ledger"
)

// maxUncounted is Record's documented cap for a limit <= 0 (the Job controller's).
const maxUncounted = 500

func fin(uid string, o ledger.Outcome) ledger.Finished[string] {
	return ledger.Finished[string]{UID: uid, Outcome: o}
}

func finIndex(uid string, ix int) ledger.Finished[string] {
	return ledger.Finished[string]{UID: uid, Outcome: ledger.SucceededIndex, Index: ix}
}

// errFields returns the fields named by an Errors list.
func errFields(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var es ledger.Errors
	require.True(t, errors.As(err, &es), "error %v is not ledger.Errors", err)
	var first *ledger.EntryError
	require.ErrorAs(t, err, &first)
	require.Same(t, es[0], first, "errors.As finds the first entry")
	var out []string
	for _, e := range es {
		out = append(out, e.Field())
	}
	return out
}

func TestRecord(t *testing.T) {
	cases := []struct {
		name          string
		uncounted     ledger.Uncounted[string]
		finished      []ledger.Finished[string]
		pending       []string
		limit         int
		want          ledger.Uncounted[string]
		wantNewSucc   []string
		wantNewFail   []string
		wantIndexes   []int
		wantRelease   []int
		wantLimit     bool
		wantChanged   bool
		wantErrFields []string
	}{
		{name: "nothing"},
		{
			name:        "new pods by outcome",
			finished:    []ledger.Finished[string]{fin("a", ledger.Succeeded), fin("b", ledger.Failed), fin("c", ledger.NotCounted), finIndex("d", 3)},
			want:        ledger.Uncounted[string]{Succeeded: []string{"a"}, Failed: []string{"b"}},
			wantNewSucc: []string{"a"}, wantNewFail: []string{"b"}, wantIndexes: []int{3},
			wantRelease: []int{0, 1, 2, 3}, wantChanged: true,
		},
		{
			name:        "already recorded: released again, no new entry",
			uncounted:   ledger.Uncounted[string]{Failed: []string{"b"}},
			finished:    []ledger.Finished[string]{fin("b", ledger.Failed)},
			want:        ledger.Uncounted[string]{Failed: []string{"b"}},
			wantRelease: []int{0},
		},
		{
			name:        "a recorded UID is not entered in the other list",
			uncounted:   ledger.Uncounted[string]{Succeeded: []string{"a"}},
			finished:    []ledger.Finished[string]{fin("a", ledger.Failed)},
			want:        ledger.Uncounted[string]{Succeeded: []string{"a"}},
			wantRelease: []int{0},
		},
		{
			name:        "pending releases are skipped",
			finished:    []ledger.Finished[string]{fin("a", ledger.Succeeded), fin("b", ledger.Succeeded)},
			pending:     []string{"a"},
			want:        ledger.Uncounted[string]{Succeeded: []string{"b"}},
			wantNewSucc: []string{"b"}, wantRelease: []int{1}, wantChanged: true,
		},
		{
			name:        "indexes sorted, a repeated index costs one entry",
			finished:    []ledger.Finished[string]{finIndex("a", 5), finIndex("b", 1), finIndex("c", 5)},
			limit:       2,
			wantIndexes: []int{1, 5}, wantRelease: []int{0, 1, 2}, wantChanged: true,
		},
		{
			name:        "limit: only entries that need room are left out",
			uncounted:   ledger.Uncounted[string]{Failed: []string{"x"}},
			finished:    []ledger.Finished[string]{fin("a", ledger.Failed), fin("b", ledger.Succeeded), fin("x", ledger.Failed), fin("c", ledger.NotCounted)},
			limit:       2,
			want:        ledger.Uncounted[string]{Failed: []string{"x", "a"}},
			wantNewFail: []string{"a"}, wantRelease: []int{0, 2, 3}, wantLimit: true, wantChanged: true,
		},
		{
			name:        "an input ledger above the limit drains, nothing is added",
			uncounted:   ledger.Uncounted[string]{Succeeded: []string{"a", "b", "c"}},
			finished:    []ledger.Finished[string]{fin("a", ledger.Succeeded), fin("d", ledger.Succeeded)},
			limit:       2,
			want:        ledger.Uncounted[string]{Succeeded: []string{"a", "b", "c"}},
			wantRelease: []int{0}, wantLimit: true,
		},
		{
			name:          "corrupted ledger repaired: duplicate and a UID in both lists",
			uncounted:     ledger.Uncounted[string]{Succeeded: []string{"a", "b", "b"}, Failed: []string{"a", "c", "c"}},
			want:          ledger.Uncounted[string]{Succeeded: []string{"b"}, Failed: []string{"a", "c"}},
			wantChanged:   true,
			wantErrFields: []string{"uncounted.failed[2]", "uncounted.succeeded[0]", "uncounted.succeeded[2]"},
		},
		{
			name: "bad finished entries stay held and are reported",
			finished: []ledger.Finished[string]{
				fin("", ledger.Failed), fin("a", ledger.Failed), fin("a", ledger.Failed),
				finIndex("b", -1), fin("c", 0), fin("d", 9),
			},
			want:        ledger.Uncounted[string]{Failed: []string{"a"}},
			wantNewFail: []string{"a"}, wantRelease: []int{1}, wantChanged: true,
			wantErrFields: []string{"finished[0].uid", "finished[2].uid", "finished[3].index", "finished[4].outcome", "finished[5].outcome"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ledger.Uncounted[string]{Succeeded: slices.Clone(tc.uncounted.Succeeded), Failed: slices.Clone(tc.uncounted.Failed)}
			pending := func(uid string) bool { return slices.Contains(tc.pending, uid) }
			got, err := ledger.Record(tc.uncounted, tc.finished, pending, tc.limit)
			if diff := cmp.Diff(tc.want, got.Uncounted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record().Uncounted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNewSucc, got.NewSucceeded, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record().NewSucceeded (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNewFail, got.NewFailed, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record().NewFailed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantIndexes, got.NewSucceededIndexes, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record().NewSucceededIndexes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRelease, got.Release, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record().Release (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantLimit, got.LimitReached, "Record().LimitReached")
			assert.Equal(t, tc.wantChanged, got.Changed, "Record().Changed")
			if diff := cmp.Diff(tc.wantErrFields, errFields(t, err), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record() error fields (-want +got):\n%s\nerror: %v", diff, err)
			}
			if diff := cmp.Diff(before, tc.uncounted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record mutated its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestSettle(t *testing.T) {
	cases := []struct {
		name          string
		uncounted     ledger.Uncounted[string]
		held          []string
		removed       []string
		want          ledger.Uncounted[string]
		wantSucc      []string
		wantFail      []string
		wantChanged   bool
		wantErrFields []string
	}{
		{name: "empty ledger", held: []string{"a"}},
		{
			name:      "released pods are counted, held ones stay",
			uncounted: ledger.Uncounted[string]{Succeeded: []string{"a", "b"}, Failed: []string{"c", "d"}},
			held:      []string{"b", "d", "zz"},
			want:      ledger.Uncounted[string]{Succeeded: []string{"b"}, Failed: []string{"d"}},
			wantSucc:  []string{"a"}, wantFail: []string{"c"}, wantChanged: true,
		},
		{
			name:      "an accepted release counts although the pod still shows held",
			uncounted: ledger.Uncounted[string]{Failed: []string{"c", "d"}},
			held:      []string{"c", "d"},
			removed:   []string{"d"},
			want:      ledger.Uncounted[string]{Failed: []string{"c"}},
			wantFail:  []string{"d"}, wantChanged: true,
		},
		{
			name:      "all held: unchanged",
			uncounted: ledger.Uncounted[string]{Succeeded: []string{"a"}},
			held:      []string{"a"},
			want:      ledger.Uncounted[string]{Succeeded: []string{"a"}},
		},
		{
			name:          "corrupted ledger repaired and reported",
			uncounted:     ledger.Uncounted[string]{Succeeded: []string{"a", "a"}, Failed: []string{"a"}},
			held:          []string{"a"},
			want:          ledger.Uncounted[string]{Failed: []string{"a"}},
			wantChanged:   true,
			wantErrFields: []string{"uncounted.succeeded[0]", "uncounted.succeeded[1]"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			removed := func(uid string) bool { return slices.Contains(tc.removed, uid) }
			got, err := ledger.Settle(tc.uncounted, slices.Values(tc.held), removed)
			if diff := cmp.Diff(tc.want, got.Uncounted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Settle().Uncounted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSucc, got.SucceededUIDs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Settle().SucceededUIDs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFail, got.FailedUIDs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Settle().FailedUIDs (-want +got):\n%s", diff)
			}
			assert.Equal(t, len(tc.wantSucc), got.Succeeded, "Settle().Succeeded")
			assert.Equal(t, len(tc.wantFail), got.Failed, "Settle().Failed")
			assert.Equal(t, tc.wantChanged, got.Changed, "Settle().Changed")
			if diff := cmp.Diff(tc.wantErrFields, errFields(t, err), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Settle() error fields (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

func TestSettleNilArguments(t *testing.T) {
	got, err := ledger.Settle(ledger.Uncounted[string]{Succeeded: []string{"a"}}, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, got.SucceededUIDs, "a nil held yields no UID: everything is counted")
}

func TestAddTo(t *testing.T) {
	cases := []struct {
		name               string
		s                  ledger.Settlement[string]
		succ, fail         int32
		wantSucc, wantFail int32
	}{
		{name: "adds", s: ledger.Settlement[string]{Succeeded: 2, Failed: 3}, succ: 1, fail: 1, wantSucc: 3, wantFail: 4},
		{name: "saturates", s: ledger.Settlement[string]{Succeeded: 5, Failed: math.MaxInt}, succ: math.MaxInt32 - 2, fail: 7,
			wantSucc: math.MaxInt32, wantFail: math.MaxInt32},
		{name: "never backwards", s: ledger.Settlement[string]{Succeeded: -4}, succ: 10, fail: 2, wantSucc: 10, wantFail: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gotSucc, gotFail := tc.s.AddTo(tc.succ, tc.fail)
			if gotSucc != tc.wantSucc || gotFail != tc.wantFail {
				t.Errorf("AddTo(%d, %d) = %d, %d, want %d, %d", tc.succ, tc.fail, gotSucc, gotFail, tc.wantSucc, tc.wantFail)
			}
		})
	}
}

// FuzzRecordSettle checks the invariants of the package documentation over ledgers
// and finished lists built from bytes: no UID twice, the limit, and Settle never
// dropping a UID.
func FuzzRecordSettle(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{1, 2, 9}, uint8(3))
	f.Add([]byte{}, []byte{0, 0, 0}, uint8(0))
	f.Fuzz(func(t *testing.T, entries, ledgerBytes []byte, limit uint8) {
		uid := func(b byte) string { return string(rune('a' + b%16)) }
		var u ledger.Uncounted[string]
		for i, b := range ledgerBytes {
			if i%2 == 0 {
				u.Succeeded = append(u.Succeeded, uid(b))
			} else {
				u.Failed = append(u.Failed, uid(b))
			}
		}
		var finished []ledger.Finished[string]
		for i := 0; i+1 < len(entries); i += 2 {
			finished = append(finished, ledger.Finished[string]{UID: uid(entries[i]), Outcome: ledger.Outcome(entries[i+1] % 6), Index: int(entries[i+1]/6) - 2})
		}
		r, _ := ledger.Record(u, finished, nil, int(limit%8))
		seen := map[string]bool{}
		for _, id := range slices.Concat(r.Uncounted.Succeeded, r.Uncounted.Failed) {
			if seen[id] {
				t.Fatalf("UID %q twice in %+v", id, r.Uncounted)
			}
			seen[id] = true
		}
		lim := int(limit % 8)
		if lim == 0 {
			lim = maxUncounted
		}
		inLen := len(slices.Compact(slices.Sorted(slices.Values(slices.Concat(u.Succeeded, u.Failed)))))
		if n := len(r.Uncounted.Succeeded) + len(r.Uncounted.Failed) + len(r.NewSucceededIndexes); n > max(lim, inLen) {
			t.Fatalf("ledger of %d entries, above the limit %d and the input %d", n, lim, inLen)
		}
		held := r.Uncounted.Succeeded[:len(r.Uncounted.Succeeded)/2]
		s, _ := ledger.Settle(r.Uncounted, slices.Values(held), nil)
		if s.Succeeded+len(s.Uncounted.Succeeded) != len(r.Uncounted.Succeeded) || s.Failed+len(s.Uncounted.Failed) != len(r.Uncounted.Failed) {
			t.Fatalf("Settle(%+v) = %+v dropped or invented a UID", r.Uncounted, s)
		}
	})
}
