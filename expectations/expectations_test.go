package expectations_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/jobkit/jobkit/expectations"
)

var t0 = time.Date(2026, time.March, 4, 10, 0, 0, 0, time.UTC)

const key = "ns/job"

func newFake(t testing.TB, ttl time.Duration) (*expectations.Expectations[string], *testingclock.FakePassiveClock) {
	t.Helper()
	clk := testingclock.NewFakePassiveClock(t0)
	e, err := expectations.New[string](expectations.Config{Clock: clk, TTL: ttl})
	require.NoError(t, err)
	return e, clk
}

func must(t testing.TB, err error) {
	t.Helper()
	require.NoError(t, err)
}

// advance moves the fake clock forward by d.
func advance(clk *testingclock.FakePassiveClock, d time.Duration) { clk.SetTime(clk.Now().Add(d)) }

func TestExpectationsRules(t *testing.T) {
	type env struct {
		t   *testing.T
		e   *expectations.Expectations[string]
		clk *testingclock.FakePassiveClock
	}
	tests := []struct {
		name          string
		ttl           time.Duration
		run           func(v env)
		wantSatisfied bool
		wantState     expectations.State
	}{
		{
			name:          "no record",
			run:           func(env) {},
			wantSatisfied: true,
			wantState:     expectations.State{Satisfied: true},
		},
		{
			name:      "creations expected, none observed",
			run:       func(v env) { must(v.t, v.e.ExpectCreations(key, 3)) },
			wantState: expectations.State{Exists: true, Creations: 3, SetAt: t0},
		},
		{
			name: "creations partially observed",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 3))
				v.e.CreationObserved(key)
				v.e.CreationObserved(key)
			},
			wantState: expectations.State{Exists: true, Creations: 1, SetAt: t0},
		},
		{
			name: "all creations observed",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 2))
				v.e.CreationObserved(key)
				v.e.CreationObserved(key)
			},
			wantSatisfied: true,
			wantState:     expectations.State{Exists: true, SetAt: t0, Satisfied: true},
		},
		{
			name:          "zero creations expected leaves a satisfied record",
			run:           func(v env) { must(v.t, v.e.ExpectCreations(key, 0)) },
			wantSatisfied: true,
			wantState:     expectations.State{Exists: true, SetAt: t0, Satisfied: true},
		},
		{
			name: "creations done but deletions outstanding",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 1))
				must(v.t, v.e.RaiseDeletions(key, "a"))
				v.e.CreationObserved(key)
			},
			wantState: expectations.State{Exists: true, Deletions: 1, SetAt: t0},
		},
		{
			name: "counts stop at zero",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 1))
				v.e.CreationObserved(key)
				v.e.CreationObserved(key)
				v.e.DeletionObserved(key, "a")
			},
			wantSatisfied: true,
			wantState:     expectations.State{Exists: true, SetAt: t0, Satisfied: true},
		},
		{
			name: "an extra observation does not absorb a later raise",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 1))
				v.e.CreationObserved(key)
				v.e.CreationObserved(key) // upstream would now be at -1
				must(v.t, v.e.RaiseCreations(key, 1))
			},
			wantState: expectations.State{Exists: true, Creations: 1, SetAt: t0},
		},
		{
			name: "expired one nanosecond after the TTL",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 1))
				advance(v.clk, 5*time.Minute+time.Nanosecond)
			},
			wantSatisfied: true,
			wantState:     expectations.State{Exists: true, Creations: 1, SetAt: t0, Expired: true, Satisfied: true},
		},
		{
			name: "not expired at exactly the TTL",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 1))
				advance(v.clk, 5*time.Minute)
			},
			wantState: expectations.State{Exists: true, Creations: 1, SetAt: t0},
		},
		{
			name: "custom TTL",
			ttl:  time.Minute,
			run: func(v env) {
				must(v.t, v.e.ExpectDeletions(key, "a"))
				advance(v.clk, time.Minute+time.Second)
			},
			wantSatisfied: true,
			wantState:     expectations.State{Exists: true, Deletions: 1, SetAt: t0, Expired: true, Satisfied: true},
		},
		{
			name: "observations do not extend the TTL",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 2))
				advance(v.clk, 4*time.Minute)
				v.e.CreationObserved(key)
				advance(v.clk, 2*time.Minute)
			},
			wantSatisfied: true,
			wantState:     expectations.State{Exists: true, Creations: 1, SetAt: t0, Expired: true, Satisfied: true},
		},
		{
			name: "expect replaces counts",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 3))
				v.e.CreationObserved(key)
				must(v.t, v.e.ExpectDeletions(key, "a", "b"))
			},
			wantState: expectations.State{Exists: true, Deletions: 2, SetAt: t0},
		},
		{
			name: "expect replaces UIDs",
			run: func(v env) {
				must(v.t, v.e.ExpectDeletions(key, "a", "b"))
				must(v.t, v.e.ExpectCreations(key, 1))
			},
			wantState: expectations.State{Exists: true, Creations: 1, SetAt: t0},
		},
		{
			name: "expect resets the time",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 1))
				advance(v.clk, 4*time.Minute)
				must(v.t, v.e.ExpectCreations(key, 1))
				advance(v.clk, 2*time.Minute)
			},
			wantState: expectations.State{Exists: true, Creations: 1, SetAt: t0.Add(4 * time.Minute)},
		},
		{
			name: "raise adds to the counts",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 2))
				must(v.t, v.e.RaiseCreations(key, 3))
				must(v.t, v.e.RaiseDeletions(key, "a", "b", "c", "d"))
			},
			wantState: expectations.State{Exists: true, Creations: 5, Deletions: 4, SetAt: t0},
		},
		{
			name:      "raise creates a missing record",
			run:       func(v env) { must(v.t, v.e.RaiseCreations(key, 2)) },
			wantState: expectations.State{Exists: true, Creations: 2, SetAt: t0},
		},
		{
			name: "raise resets the time",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 1))
				advance(v.clk, 4*time.Minute)
				must(v.t, v.e.RaiseCreations(key, 1))
				advance(v.clk, 2*time.Minute)
			},
			wantState: expectations.State{Exists: true, Creations: 2, SetAt: t0.Add(4 * time.Minute)},
		},
		{
			name: "raise by zero neither creates a record",
			run: func(v env) {
				must(v.t, v.e.RaiseCreations(key, 0))
				must(v.t, v.e.RaiseDeletions(key))
			},
			wantSatisfied: true,
			wantState:     expectations.State{Satisfied: true},
		},
		{
			name: "raise by zero does not extend the TTL",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 1))
				advance(v.clk, 4*time.Minute)
				must(v.t, v.e.RaiseCreations(key, 0))
				advance(v.clk, 2*time.Minute)
			},
			wantSatisfied: true,
			wantState:     expectations.State{Exists: true, Creations: 1, SetAt: t0, Expired: true, Satisfied: true},
		},
		{
			name: "raise of an expired record starts from zero",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 3))
				must(v.t, v.e.RaiseDeletions(key, "lost"))
				advance(v.clk, 6*time.Minute)
				must(v.t, v.e.RaiseDeletions(key, "new"))
			},
			wantState: expectations.State{Exists: true, Deletions: 1, SetAt: t0.Add(6 * time.Minute)},
		},
		{
			name: "lower several at once",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 5))
				must(v.t, v.e.RaiseDeletions(key, "a", "b"))
				must(v.t, v.e.Lower(key, 3))
			},
			wantState: expectations.State{Exists: true, Creations: 2, Deletions: 2, SetAt: t0},
		},
		{
			name: "observations on a missing key create no record",
			run: func(v env) {
				v.e.CreationObserved(key)
				v.e.DeletionObserved(key, "a")
				must(v.t, v.e.Lower(key, 1))
			},
			wantSatisfied: true,
			wantState:     expectations.State{Satisfied: true},
		},
		{
			name: "UID deletions partially observed",
			run: func(v env) {
				must(v.t, v.e.ExpectDeletions(key, "a", "b", "c"))
				v.e.DeletionObserved(key, "a")
			},
			wantState: expectations.State{Exists: true, Deletions: 2, SetAt: t0},
		},
		{
			name: "UID observed twice lowers once",
			run: func(v env) {
				must(v.t, v.e.ExpectDeletions(key, "a", "b"))
				v.e.DeletionObserved(key, "a") // deletionTimestamp set
				v.e.DeletionObserved(key, "a") // final delete event
			},
			wantState: expectations.State{Exists: true, Deletions: 1, SetAt: t0},
		},
		{
			name: "unknown UID does nothing",
			run: func(v env) {
				must(v.t, v.e.ExpectDeletions(key, "a"))
				v.e.DeletionObserved(key, "z")
			},
			wantState: expectations.State{Exists: true, Deletions: 1, SetAt: t0},
		},
		{
			name: "all UIDs observed",
			run: func(v env) {
				must(v.t, v.e.ExpectDeletions(key, "a", "b"))
				v.e.DeletionObserved(key, "b")
				v.e.DeletionObserved(key, "a")
			},
			wantSatisfied: true,
			wantState:     expectations.State{Exists: true, SetAt: t0, Satisfied: true},
		},
		{
			name:      "duplicate UIDs count once",
			run:       func(v env) { must(v.t, v.e.ExpectDeletions(key, "a", "a", "b")) },
			wantState: expectations.State{Exists: true, Deletions: 2, SetAt: t0},
		},
		{
			name: "raise by UID adds new UIDs only",
			run: func(v env) {
				must(v.t, v.e.ExpectDeletions(key, "a"))
				must(v.t, v.e.RaiseDeletions(key, "a", "b"))
				must(v.t, v.e.RaiseDeletions(key, "c"))
			},
			wantState: expectations.State{Exists: true, Deletions: 3, SetAt: t0},
		},
		{
			name: "a UID observed then raised again is outstanding again",
			run: func(v env) {
				must(v.t, v.e.ExpectDeletions(key, "a"))
				v.e.DeletionObserved(key, "a")
				must(v.t, v.e.RaiseDeletions(key, "a"))
			},
			wantState: expectations.State{Exists: true, Deletions: 1, SetAt: t0},
		},
		{
			name: "delete forgets the record",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 1))
				v.e.Delete(key)
			},
			wantSatisfied: true,
			wantState:     expectations.State{Satisfied: true},
		},
		{
			name: "other keys are independent",
			run: func(v env) {
				must(v.t, v.e.ExpectCreations(key, 1))
				must(v.t, v.e.ExpectCreations("ns/other", 1))
				v.e.CreationObserved("ns/other")
				v.e.Delete("ns/other")
			},
			wantState: expectations.State{Exists: true, Creations: 1, SetAt: t0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, clk := newFake(t, tc.ttl)
			tc.run(env{t: t, e: e, clk: clk})
			assert.Equal(t, tc.wantSatisfied, e.Satisfied(key), "Satisfied(%q)", key)
			if diff := cmp.Diff(tc.wantState, e.Get(key)); diff != "" {
				t.Errorf("Get(%q) mismatch (-want +got):\n%s", key, diff)
			}
		})
	}
}

func TestDeletionObservedResult(t *testing.T) {
	tests := []struct {
		name    string
		expect  []types.UID
		observe []types.UID
		want    []bool
	}{
		{name: "expected once", expect: []types.UID{"a"}, observe: []types.UID{"a"}, want: []bool{true}},
		{name: "twice", expect: []types.UID{"a"}, observe: []types.UID{"a", "a"}, want: []bool{true, false}},
		{name: "unknown", expect: []types.UID{"a"}, observe: []types.UID{"b"}, want: []bool{false}},
		{name: "no record", observe: []types.UID{"a"}, want: []bool{false}},
		{name: "empty UID", expect: []types.UID{"a"}, observe: []types.UID{""}, want: []bool{false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newFake(t, 0)
			if tc.expect != nil {
				must(t, e.ExpectDeletions(key, tc.expect...))
			}
			var got []bool
			for _, uid := range tc.observe {
				got = append(got, e.DeletionObserved(key, uid))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DeletionObserved results mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name      string
		call      func(e *expectations.Expectations[string]) error
		wantErr   expectations.InputError
		wantState expectations.State
	}{
		{
			name:      "ExpectCreations negative",
			call:      func(e *expectations.Expectations[string]) error { return e.ExpectCreations(key, -1) },
			wantErr:   expectations.InputError{Op: "ExpectCreations", Field: "count", Value: "-1"},
			wantState: expectations.State{Exists: true, Creations: 2, SetAt: t0},
		},
		{
			name:      "RaiseCreations negative",
			call:      func(e *expectations.Expectations[string]) error { return e.RaiseCreations(key, -1) },
			wantErr:   expectations.InputError{Op: "RaiseCreations", Field: "count", Value: "-1"},
			wantState: expectations.State{Exists: true, Creations: 2, SetAt: t0},
		},
		{
			name:      "Lower negative adds",
			call:      func(e *expectations.Expectations[string]) error { return e.Lower(key, -1) },
			wantErr:   expectations.InputError{Op: "Lower", Field: "count", Value: "-1"},
			wantState: expectations.State{Exists: true, Creations: 2, SetAt: t0},
		},
		{
			name:      "ExpectDeletions keeps the valid UIDs",
			call:      func(e *expectations.Expectations[string]) error { return e.ExpectDeletions(key, "a", "", "b", "") },
			wantErr:   expectations.InputError{Op: "ExpectDeletions", Field: "uids[1]", Value: `""`},
			wantState: expectations.State{Exists: true, Deletions: 2, SetAt: t0},
		},
		{
			name:      "ExpectDeletions with only empty UIDs still replaces",
			call:      func(e *expectations.Expectations[string]) error { return e.ExpectDeletions(key, "") },
			wantErr:   expectations.InputError{Op: "ExpectDeletions", Field: "uids[0]", Value: `""`},
			wantState: expectations.State{Exists: true, SetAt: t0, Satisfied: true},
		},
		{
			name:      "RaiseDeletions keeps the valid UIDs",
			call:      func(e *expectations.Expectations[string]) error { return e.RaiseDeletions(key, "", "b") },
			wantErr:   expectations.InputError{Op: "RaiseDeletions", Field: "uids[0]", Value: `""`},
			wantState: expectations.State{Exists: true, Creations: 2, Deletions: 1, SetAt: t0},
		},
		{
			name:      "RaiseDeletions with only empty UIDs changes nothing",
			call:      func(e *expectations.Expectations[string]) error { return e.RaiseDeletions(key, "") },
			wantErr:   expectations.InputError{Op: "RaiseDeletions", Field: "uids[0]", Value: `""`},
			wantState: expectations.State{Exists: true, Creations: 2, SetAt: t0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newFake(t, 0)
			must(t, e.ExpectCreations(key, 2))
			err := tc.call(e)
			require.Error(t, err)
			var ie *expectations.InputError
			require.ErrorAs(t, err, &ie)
			if diff := cmp.Diff(tc.wantErr, *ie, cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".Reason"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
			assert.NotEmpty(t, ie.Reason)
			assert.Contains(t, err.Error(), tc.wantErr.Field)
			if diff := cmp.Diff(tc.wantState, e.Get(key)); diff != "" {
				t.Errorf("Get(%q) after bad input mismatch (-want +got):\n%s", key, diff)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     expectations.Config
		wantTTL time.Duration
		wantErr bool
	}{
		{name: "zero config", cfg: expectations.Config{}, wantTTL: 5 * time.Minute},
		{name: "custom TTL", cfg: expectations.Config{TTL: time.Second}, wantTTL: time.Second},
		{name: "negative TTL", cfg: expectations.Config{TTL: -time.Second}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := expectations.New[string](tc.cfg)
			if tc.wantErr {
				var ie *expectations.InputError
				require.ErrorAs(t, err, &ie)
				assert.Equal(t, "Config.TTL", ie.Field)
				assert.Contains(t, err.Error(), "Config.TTL=-1s")
				assert.Nil(t, e)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantTTL, e.TTL(), "TTL()")
		})
	}
}

func TestZeroValueUsesRealClock(t *testing.T) {
	var e expectations.Expectations[string]
	before := time.Now()
	must(t, e.ExpectCreations(key, 1))
	got := e.Get(key)
	assert.False(t, got.SetAt.Before(before), "SetAt %v before %v", got.SetAt, before)
	assert.False(t, e.Satisfied(key))
	assert.Equal(t, 5*time.Minute, e.TTL())
}

func TestLen(t *testing.T) {
	e, clk := newFake(t, 0)
	must(t, e.ExpectCreations("a", 1))
	must(t, e.ExpectCreations("b", 0))
	advance(clk, time.Hour) // expired records still count
	assert.Equal(t, 2, e.Len())
	e.Delete("a")
	e.Delete("missing")
	assert.Equal(t, 1, e.Len())
}

func TestNamespacedNameKey(t *testing.T) {
	e, err := expectations.New[types.NamespacedName](expectations.Config{})
	require.NoError(t, err)
	k := types.NamespacedName{Namespace: "ns", Name: "job"}
	must(t, e.ExpectDeletions(k, "uid-1"))
	assert.False(t, e.Satisfied(k))
	assert.True(t, e.Satisfied(types.NamespacedName{Namespace: "other", Name: "job"}))
	assert.True(t, e.DeletionObserved(k, "uid-1"))
	assert.True(t, e.Satisfied(k))
}

func TestSaturation(t *testing.T) {
	e, _ := newFake(t, 0)
	const maxInt = int(^uint(0) >> 1)
	must(t, e.ExpectCreations(key, maxInt))
	must(t, e.RaiseCreations(key, 10))
	assert.Equal(t, maxInt, e.Get(key).Creations)
}

func TestNoAllocs(t *testing.T) {
	e, _ := newFake(t, 0)
	must(t, e.ExpectCreations(key, 1))
	must(t, e.RaiseDeletions(key, "a", "b"))
	must(t, e.ExpectCreations("ns/other", 1))
	tests := []struct {
		name string
		f    func()
	}{
		{"Satisfied", func() { e.Satisfied(key) }},
		{"Satisfied missing", func() { e.Satisfied("missing") }},
		{"Get", func() { e.Get(key) }},
		{"CreationObserved", func() { e.CreationObserved(key) }},
		{"DeletionObserved unknown", func() { e.DeletionObserved(key, "zzz") }},
		{"RaiseCreations existing", func() { _ = e.RaiseCreations(key, 1) }},
		{"ExpectCreations existing", func() { _ = e.ExpectCreations("ns/other", 1) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := testing.AllocsPerRun(100, tc.f); got != 0 {
				t.Errorf("%s allocates %v times per run, want 0", tc.name, got)
			}
		})
	}
}

// TestErrorMessage pins the text users see in logs.
func TestErrorMessage(t *testing.T) {
	e, _ := newFake(t, 0)
	err := e.ExpectCreations(key, -3)
	assert.EqualError(t, err, "expectations.ExpectCreations: count=-3: must not be negative")
	var ie *expectations.InputError
	assert.True(t, errors.As(err, &ie))
}

func TestPendingDeletionUIDs(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *expectations.Expectations[string])
		want  []types.UID
	}{
		{name: "no record", setup: func(*expectations.Expectations[string]) {}},
		{
			name:  "creations only",
			setup: func(e *expectations.Expectations[string]) { _ = e.ExpectCreations(key, 2) },
		},
		{
			name: "raised UIDs, one observed",
			setup: func(e *expectations.Expectations[string]) {
				_ = e.RaiseDeletions(key, "a", "b")
				_ = e.RaiseDeletions(key, "c")
				e.DeletionObserved(key, "b")
			},
			want: []types.UID{"a", "c"},
		},
		{
			name: "another key",
			setup: func(e *expectations.Expectations[string]) {
				_ = e.RaiseDeletions("ns/other", "x")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newFake(t, 0)
			tc.setup(e)
			got := e.PendingDeletionUIDs(key)
			require.NotNil(t, got, "PendingDeletionUIDs(%q) is never nil", key)
			if diff := cmp.Diff(tc.want, sets.List(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("PendingDeletionUIDs(%q) (-want +got):\n%s", key, diff)
			}
			got.Insert("z") // a copy: the record does not change
			assert.False(t, e.DeletionObserved(key, "z"), "the copy leaked into the record")
		})
	}
}
