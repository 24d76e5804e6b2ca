package expectations_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/expectations"
)

func TestFinalizerRemovals(t *testing.T) {
	tests := []struct {
		name         string
		run          func(t *testing.T, f *expectations.FinalizerRemovals[string]) (observed []bool)
		wantPending  sets.Set[types.UID]
		wantHas      map[types.UID]bool
		wantLen      int
		wantObserved []bool // results of the Observed calls, in order
	}{
		{
			name:        "no record",
			run:         func(*testing.T, *expectations.FinalizerRemovals[string]) []bool { return nil },
			wantPending: sets.New[types.UID](),
			wantHas:     map[types.UID]bool{"a": false},
		},
		{
			name: "expect",
			run: func(t *testing.T, f *expectations.FinalizerRemovals[string]) (got []bool) {
				require.NoError(t, f.Expect(key, "a", "b"))
				return got
			},
			wantPending: sets.New[types.UID]("a", "b"),
			wantHas:     map[types.UID]bool{"a": true, "b": true, "c": false},
			wantLen:     1,
		},
		{
			name: "expect adds to the set",
			run: func(t *testing.T, f *expectations.FinalizerRemovals[string]) (got []bool) {
				require.NoError(t, f.Expect(key, "a"))
				require.NoError(t, f.Expect(key, "a", "b"))
				return got
			},
			wantPending: sets.New[types.UID]("a", "b"),
			wantHas:     map[types.UID]bool{"a": true, "b": true},
			wantLen:     1,
		},
		{
			name: "observe one",
			run: func(t *testing.T, f *expectations.FinalizerRemovals[string]) (got []bool) {
				require.NoError(t, f.Expect(key, "a", "b"))
				got = append(got, f.Observed(key, "a"))
				return got
			},
			wantPending:  sets.New[types.UID]("b"),
			wantHas:      map[types.UID]bool{"a": false, "b": true},
			wantLen:      1,
			wantObserved: []bool{true},
		},
		{
			name: "observe twice and unknown",
			run: func(t *testing.T, f *expectations.FinalizerRemovals[string]) (got []bool) {
				require.NoError(t, f.Expect(key, "a", "b"))
				got = append(got, f.Observed(key, "a"))
				got = append(got, f.Observed(key, "a"))
				got = append(got, f.Observed(key, "z"))
				got = append(got, f.Observed("ns/missing", "b"))
				return got
			},
			wantPending:  sets.New[types.UID]("b"),
			wantHas:      map[types.UID]bool{"b": true},
			wantLen:      1,
			wantObserved: []bool{true, false, false, false},
		},
		{
			name: "observe all drops the key",
			run: func(t *testing.T, f *expectations.FinalizerRemovals[string]) (got []bool) {
				require.NoError(t, f.Expect(key, "a"))
				got = append(got, f.Observed(key, "a"))
				return got
			},
			wantPending:  sets.New[types.UID](),
			wantHas:      map[types.UID]bool{"a": false},
			wantObserved: []bool{true},
		},
		{
			name: "delete key",
			run: func(t *testing.T, f *expectations.FinalizerRemovals[string]) (got []bool) {
				require.NoError(t, f.Expect(key, "a"))
				require.NoError(t, f.Expect("ns/other", "x"))
				f.Delete(key)
				return got
			},
			wantPending: sets.New[types.UID](),
			wantHas:     map[types.UID]bool{"a": false},
			wantLen:     1,
		},
		{
			name: "expect with no UIDs creates nothing",
			run: func(t *testing.T, f *expectations.FinalizerRemovals[string]) (got []bool) {
				require.NoError(t, f.Expect(key))
				return got
			},
			wantPending: sets.New[types.UID](),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := expectations.NewFinalizerRemovals[string]()
			observed := tc.run(t, f)
			if diff := cmp.Diff(tc.wantPending, f.Pending(key)); diff != "" {
				t.Errorf("Pending(%q) mismatch (-want +got):\n%s", key, diff)
			}
			assert.Equal(t, tc.wantPending.Len(), f.PendingCount(key), "PendingCount(%q)", key)
			for uid, want := range tc.wantHas {
				assert.Equal(t, want, f.Has(key, uid), "Has(%q, %q)", key, uid)
			}
			assert.Equal(t, tc.wantLen, f.Len(), "Len()")
			if diff := cmp.Diff(tc.wantObserved, observed); diff != "" {
				t.Errorf("Observed results mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinalizerRemovalsEmptyUID(t *testing.T) {
	tests := []struct {
		name        string
		uids        []types.UID
		wantField   string
		wantPending sets.Set[types.UID]
		wantLen     int
	}{
		{name: "only empty", uids: []types.UID{""}, wantField: "uids[0]", wantPending: sets.New[types.UID]()},
		{name: "valid part kept", uids: []types.UID{"a", "", "b", ""}, wantField: "uids[1]", wantPending: sets.New[types.UID]("a", "b"), wantLen: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := expectations.NewFinalizerRemovals[string]()
			err := f.Expect(key, tc.uids...)
			var ie *expectations.InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, "FinalizerRemovals.Expect", ie.Op)
			assert.Equal(t, tc.wantField, ie.Field)
			if diff := cmp.Diff(tc.wantPending, f.Pending(key)); diff != "" {
				t.Errorf("Pending(%q) mismatch (-want +got):\n%s", key, diff)
			}
			assert.Equal(t, tc.wantLen, f.Len(), "Len()")
		})
	}
}

func TestFinalizerRemovalsPendingIsACopy(t *testing.T) {
	f := expectations.NewFinalizerRemovals[string]()
	require.NoError(t, f.Expect(key, "a"))
	got := f.Pending(key)
	got.Insert("b")
	got.Delete("a")
	assert.True(t, f.Has(key, "a"), "Has(a) after changing the copy")
	assert.False(t, f.Has(key, "b"), "Has(b) after changing the copy")

	empty := f.Pending("ns/missing")
	require.NotNil(t, empty)
	empty.Insert("c") // must not panic
	assert.Equal(t, 0, f.PendingCount("ns/missing"))
}

func TestFinalizerRemovalsNoAllocs(t *testing.T) {
	f := expectations.NewFinalizerRemovals[string]()
	require.NoError(t, f.Expect(key, "a", "b"))
	for name, fn := range map[string]func(){
		"Has":             func() { f.Has(key, "a") },
		"Has missing key": func() { f.Has("ns/missing", "a") },
		"Observed":        func() { f.Observed(key, "zzz") },
		"PendingCount":    func() { f.PendingCount(key) },
	} {
		if got := testing.AllocsPerRun(100, fn); got != 0 {
			t.Errorf("%s allocates %v times per run, want 0", name, got)
		}
	}
}
