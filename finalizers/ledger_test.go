package finalizers_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/plain/ledger"
)

func fp(p *corev1.Pod, o ledger.Outcome) finalizers.FinishedPod {
	return finalizers.FinishedPod{Pod: p, Outcome: o}
}

func fpIndex(p *corev1.Pod, ix int) finalizers.FinishedPod {
	return finalizers.FinishedPod{Pod: p, Outcome: ledger.SucceededIndex, Index: ix}
}

func withoutUID(p *corev1.Pod) *corev1.Pod {
	p.UID = ""
	return p
}

func uids(names ...string) []types.UID {
	if len(names) == 0 {
		return nil
	}
	out := make([]types.UID, len(names))
	for i, n := range names {
		out[i] = types.UID("uid-" + n)
	}
	return out
}

func uncounted(succeeded, failed []types.UID) *batchv1.UncountedTerminatedPods {
	return &batchv1.UncountedTerminatedPods{Succeeded: succeeded, Failed: failed}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// seq returns names prefix0..prefix(n-1).
func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func trackedAll(ns []string, o ledger.Outcome) []finalizers.FinishedPod {
	out := make([]finalizers.FinishedPod, len(ns))
	for i, n := range ns {
		out[i] = fp(tracked(n), o)
	}
	return out
}

// errFields returns the field paths named by a field.ErrorList aggregate.
func errFields(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var agg utilerrors.Aggregate
	require.True(t, errors.As(err, &agg), "error %v is not an aggregate", err)
	var out []string
	for _, e := range agg.Errors() {
		var fe *field.Error
		require.True(t, errors.As(e, &fe), "error %v is not a *field.Error", e)
		out = append(out, fe.Field)
	}
	return out
}

func TestRecord(t *testing.T) {
	tests := []struct {
		name      string
		uncounted *batchv1.UncountedTerminatedPods
		finished  []finalizers.FinishedPod
		pending   sets.Set[types.UID]
		limit     int

		wantUncounted    batchv1.UncountedTerminatedPods
		wantNewSucceeded []types.UID
		wantNewFailed    []types.UID
		wantIndexes      []int
		wantRemove       []string
		wantLimit        bool
		wantChanged      bool
		wantErrFields    []string
	}{
		{
			name:        "nothing finished",
			uncounted:   nil,
			wantChanged: false,
		},
		{
			name:      "new succeeded and failed are recorded, in input order",
			uncounted: nil,
			finished: []finalizers.FinishedPod{
				fp(tracked("s1"), ledger.Succeeded),
				fp(tracked("f1"), ledger.Failed),
				fp(tracked("s2"), ledger.Succeeded),
			},
			wantUncounted:    *uncounted(uids("s1", "s2"), uids("f1")),
			wantNewSucceeded: uids("s1", "s2"),
			wantNewFailed:    uids("f1"),
			wantRemove:       []string{"s1", "f1", "s2"},
			wantChanged:      true,
		},
		{
			name:      "appended after existing entries",
			uncounted: uncounted(uids("old-s"), uids("old-f")),
			finished: []finalizers.FinishedPod{
				fp(tracked("s1"), ledger.Succeeded),
				fp(tracked("f1"), ledger.Failed),
			},
			wantUncounted:    *uncounted(uids("old-s", "s1"), uids("old-f", "f1")),
			wantNewSucceeded: uids("s1"),
			wantNewFailed:    uids("f1"),
			wantRemove:       []string{"s1", "f1"},
			wantChanged:      true,
		},
		{
			name:      "already uncounted: not re-added, finalizer removed again",
			uncounted: uncounted(uids("s1"), uids("f1")),
			finished: []finalizers.FinishedPod{
				fp(tracked("s1"), ledger.Succeeded),
				fp(tracked("f1"), ledger.Failed),
			},
			wantUncounted: *uncounted(uids("s1"), uids("f1")),
			wantRemove:    []string{"s1", "f1"},
			wantChanged:   false,
		},
		{
			name:          "recorded as failed, now reported succeeded: stays failed only",
			uncounted:     uncounted(nil, uids("p")),
			finished:      []finalizers.FinishedPod{fp(tracked("p"), ledger.Succeeded)},
			wantUncounted: *uncounted(nil, uids("p")),
			wantRemove:    []string{"p"},
		},
		{
			name:          "recorded as succeeded, now reported failed: stays succeeded only",
			uncounted:     uncounted(uids("p"), nil),
			finished:      []finalizers.FinishedPod{fp(tracked("p"), ledger.Failed)},
			wantUncounted: *uncounted(uids("p"), nil),
			wantRemove:    []string{"p"},
		},
		{
			name: "pending removal skipped, recorded or not",
			finished: []finalizers.FinishedPod{
				fp(tracked("a"), ledger.Succeeded),
				fp(tracked("b"), ledger.Failed),
				fp(tracked("c"), ledger.Succeeded),
			},
			uncounted:        uncounted(uids("a"), nil),
			pending:          sets.New(uids("a", "b")...),
			wantUncounted:    *uncounted(uids("a", "c"), nil),
			wantNewSucceeded: uids("c"),
			wantRemove:       []string{"c"},
			wantChanged:      true,
		},
		{
			name: "pods without the tracking finalizer are skipped",
			finished: []finalizers.FinishedPod{
				fp(newPod("a", other), ledger.Succeeded),
				fp(newPod("b"), ledger.Failed),
			},
			wantChanged: false,
		},
		{
			name: "indexed succeeded pods go to indexes, sorted, no UID",
			finished: []finalizers.FinishedPod{
				fpIndex(tracked("i5"), 5),
				fpIndex(tracked("i0"), 0),
				fpIndex(tracked("i3"), 3),
				fp(tracked("f"), ledger.Failed),
			},
			wantUncounted: *uncounted(nil, uids("f")),
			wantNewFailed: uids("f"),
			wantIndexes:   []int{0, 3, 5},
			wantRemove:    []string{"i5", "i0", "i3", "f"},
			wantChanged:   true,
		},
		{
			name: "repeated index counted once, both finalizers removed",
			finished: []finalizers.FinishedPod{
				fpIndex(tracked("a"), 2),
				fpIndex(tracked("b"), 2),
			},
			wantIndexes: []int{2},
			wantRemove:  []string{"a", "b"},
			wantChanged: true,
		},
		{
			name:        "indexed pod already recorded as failed: no index",
			uncounted:   uncounted(nil, uids("a")),
			finished:    []finalizers.FinishedPod{fpIndex(tracked("a"), 1)},
			wantRemove:  []string{"a"},
			wantChanged: false,

			wantUncounted: *uncounted(nil, uids("a")),
		},
		{
			name: "NotCounted: not recorded, finalizer removed",
			finished: []finalizers.FinishedPod{
				fp(tracked("ignored"), ledger.NotCounted),
				fp(tracked("f"), ledger.Failed),
			},
			wantUncounted: *uncounted(nil, uids("f")),
			wantNewFailed: uids("f"),
			wantRemove:    []string{"ignored", "f"},
			wantChanged:   true,
		},
		{
			name:        "only NotCounted: nothing to write",
			finished:    []finalizers.FinishedPod{fp(tracked("ignored"), ledger.NotCounted)},
			wantRemove:  []string{"ignored"},
			wantChanged: false,
		},
		{
			name:             "default limit 500: 600 new, 500 recorded, NotCounted after the cut still removed",
			finished:         append(trackedAll(seq("s", 600), ledger.Succeeded), fp(tracked("ignored"), ledger.NotCounted)),
			limit:            0,
			wantUncounted:    *uncounted(uids(seq("s", 500)...), nil),
			wantNewSucceeded: uids(seq("s", 500)...),
			wantRemove:       append(seq("s", 500), "ignored"),
			wantLimit:        true,
			wantChanged:      true,
		},
		{
			name:             "negative limit means 500",
			finished:         trackedAll(seq("s", 501), ledger.Succeeded),
			limit:            -1,
			wantUncounted:    *uncounted(uids(seq("s", 500)...), nil),
			wantNewSucceeded: uids(seq("s", 500)...),
			wantRemove:       seq("s", 500),
			wantLimit:        true,
			wantChanged:      true,
		},
		{
			name:      "custom limit counts existing entries and new indexes",
			uncounted: uncounted(uids("old"), nil),
			limit:     3,
			finished: []finalizers.FinishedPod{
				fpIndex(tracked("i"), 7),
				fp(tracked("f1"), ledger.Failed),
				fp(tracked("f2"), ledger.Failed),
				fp(tracked("old"), ledger.Succeeded),
				fp(tracked("n"), ledger.NotCounted),
			},
			wantUncounted: *uncounted(uids("old"), uids("f1")),
			wantNewFailed: uids("f1"),
			wantIndexes:   []int{7},
			wantRemove:    []string{"i", "f1", "old", "n"},
			wantLimit:     true,
			wantChanged:   true,
		},
		{
			name:             "limit exactly filled with nothing left out is not LimitReached",
			limit:            2,
			finished:         trackedAll([]string{"a", "b"}, ledger.Succeeded),
			wantUncounted:    *uncounted(uids("a", "b"), nil),
			wantNewSucceeded: uids("a", "b"),
			wantRemove:       []string{"a", "b"},
			wantChanged:      true,
		},
		{
			name:      "ledger already over the limit: no new entry, recorded pods still drain",
			uncounted: uncounted(uids("a", "b", "c"), nil),
			limit:     2,
			finished: []finalizers.FinishedPod{
				fp(tracked("new"), ledger.Succeeded),
				fp(tracked("c"), ledger.Succeeded),
			},
			wantUncounted: *uncounted(uids("a", "b", "c"), nil),
			wantRemove:    []string{"c"},
			wantLimit:     true,
		},
		{
			name: "duplicate pod in input: recorded once, error",
			finished: []finalizers.FinishedPod{
				fp(tracked("a"), ledger.Succeeded),
				fp(tracked("a"), ledger.Failed),
			},
			wantUncounted:    *uncounted(uids("a"), nil),
			wantNewSucceeded: uids("a"),
			wantRemove:       []string{"a"},
			wantChanged:      true,
			wantErrFields:    []string{"finished[1].pod.metadata.uid"},
		},
		{
			name: "nil pod, pod without UID, bad outcome, negative index: skipped with errors, rest kept",
			finished: []finalizers.FinishedPod{
				{Pod: nil, Outcome: ledger.Failed},
				fp(withoutUID(tracked("nouid")), ledger.Failed),
				fp(tracked("zero"), 0),
				fp(tracked("big"), 99),
				{Pod: tracked("neg"), Outcome: ledger.SucceededIndex, Index: -1},
				fp(&corev1.Pod{}, ledger.Failed), // no finalizer: silently skipped
				fp(tracked("ok"), ledger.Failed),
			},
			wantUncounted: *uncounted(nil, uids("ok")),
			wantNewFailed: uids("ok"),
			wantRemove:    []string{"ok"},
			wantChanged:   true,
			wantErrFields: []string{
				"finished[0].pod",
				"finished[1].pod.metadata.uid",
				"finished[2].outcome",
				"finished[3].outcome",
				"finished[4].index",
			},
		},
		{
			name:          "corrupted: UID in both lists kept once, in failed",
			uncounted:     uncounted(uids("a", "b"), uids("b")),
			finished:      []finalizers.FinishedPod{fp(tracked("b"), ledger.Succeeded)},
			wantUncounted: *uncounted(uids("a"), uids("b")),
			wantRemove:    []string{"b"},
			wantChanged:   true,
			wantErrFields: []string{"status.uncountedTerminatedPods.succeeded[1]"},
		},
		{
			name:          "corrupted: duplicates within a list kept once",
			uncounted:     uncounted(uids("a", "a"), uids("f", "g", "f")),
			wantUncounted: *uncounted(uids("a"), uids("f", "g")),
			wantChanged:   true,
			wantErrFields: []string{"status.uncountedTerminatedPods.failed[2]", "status.uncountedTerminatedPods.succeeded[1]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before *batchv1.UncountedTerminatedPods
			if tc.uncounted != nil {
				before = tc.uncounted.DeepCopy()
			}
			got, err := finalizers.Record(finalizers.Name, tc.uncounted, tc.finished, tc.pending, tc.limit)

			if diff := cmp.Diff(tc.wantUncounted, got.Uncounted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record().Uncounted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNewSucceeded, got.NewSucceeded, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record().NewSucceeded (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNewFailed, got.NewFailed, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record().NewFailed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantIndexes, got.NewSucceededIndexes, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record().NewSucceededIndexes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRemove, names(got.RemoveFinalizer), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record().RemoveFinalizer (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantLimit, got.LimitReached, "Record().LimitReached")
			assert.Equal(t, tc.wantChanged, got.Changed, "Record().Changed")
			if diff := cmp.Diff(tc.wantErrFields, errFields(t, err), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record() error fields (-want +got):\n%s\nerror: %v", diff, err)
			}
			if diff := cmp.Diff(before, tc.uncounted); diff != "" {
				t.Errorf("Record mutated its uncounted input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestRecordErrorNamesTheValue(t *testing.T) {
	_, err := finalizers.Record(finalizers.Name, uncounted(uids("x"), uids("x")), nil, nil, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "status.uncountedTerminatedPods.succeeded[0]")
	assert.Contains(t, err.Error(), "uid-x")

	_, err = finalizers.Record(finalizers.Name, nil, []finalizers.FinishedPod{fp(&corev1.Pod{}, ledger.Failed)}, nil, 0)
	assert.NoError(t, err, "a pod without the finalizer is not an error, UID or not")

	r, err := finalizers.Record(finalizers.Name, nil, []finalizers.FinishedPod{fp(withoutUID(tracked("nouid")), ledger.Failed)}, nil, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "finished[0].pod.metadata.uid")
	assert.Contains(t, err.Error(), "ns/nouid")
	assert.Empty(t, r.RemoveFinalizer, "a pod that cannot be recorded must keep its finalizer")
}

// Appending to the results must never write into the caller's status.
func TestRecordDoesNotAliasInput(t *testing.T) {
	succ := make([]types.UID, 1, 8)
	succ[0] = "uid-a"
	in := &batchv1.UncountedTerminatedPods{Succeeded: succ}
	r, err := finalizers.Record(finalizers.Name, in, []finalizers.FinishedPod{fp(tracked("b"), ledger.Succeeded)}, nil, 0)
	require.NoError(t, err)
	assert.Equal(t, uids("a", "b"), r.Uncounted.Succeeded)
	assert.Equal(t, types.UID(""), succ[:2][1], "Record wrote into the input's backing array")

	r.Uncounted.Succeeded[0] = "changed"
	assert.Equal(t, types.UID("uid-a"), in.Succeeded[0])

	// NewSucceeded is a view of the tail of Uncounted.Succeeded; appending to it must
	// not write into Uncounted's spare capacity.
	_ = append(r.NewSucceeded, "extra")
	assert.NotContains(t, r.Uncounted.Succeeded[:cap(r.Uncounted.Succeeded)], types.UID("extra"))
}

func TestSettle(t *testing.T) {
	tests := []struct {
		name      string
		uncounted *batchv1.UncountedTerminatedPods
		pods      []*corev1.Pod
		removed   sets.Set[types.UID]

		wantUncounted     batchv1.UncountedTerminatedPods
		wantSucceeded     int32
		wantFailed        int32
		wantSucceededUIDs []types.UID
		wantFailedUIDs    []types.UID
		wantChanged       bool
		wantErrFields     []string
	}{
		{
			name:      "nil ledger",
			uncounted: nil,
			pods:      []*corev1.Pod{tracked("a")},
		},
		{
			name:      "empty ledger",
			uncounted: uncounted(nil, nil),
			pods:      []*corev1.Pod{tracked("a")},
		},
		{
			name:              "finalizer gone: counted",
			uncounted:         uncounted(uids("a"), nil),
			pods:              []*corev1.Pod{newPod("a", other)},
			wantSucceeded:     1,
			wantSucceededUIDs: uids("a"),
			wantChanged:       true,
		},
		{
			name:           "pod gone: counted",
			uncounted:      uncounted(nil, uids("a")),
			pods:           []*corev1.Pod{tracked("b")},
			wantFailed:     1,
			wantFailedUIDs: uids("a"),
			wantChanged:    true,
		},
		{
			name:          "still has the finalizer: stays",
			uncounted:     uncounted(uids("a"), uids("b")),
			pods:          []*corev1.Pod{tracked("a"), tracked("b")},
			wantUncounted: *uncounted(uids("a"), uids("b")),
		},
		{
			name:              "accepted removal not yet visible: counted",
			uncounted:         uncounted(uids("a"), nil),
			pods:              []*corev1.Pod{tracked("a")},
			removed:           sets.New(uids("a")...),
			wantSucceeded:     1,
			wantSucceededUIDs: uids("a"),
			wantChanged:       true,
		},
		{
			name:      "both lists, mixed",
			uncounted: uncounted(uids("s1", "s2", "s3"), uids("f1", "f2")),
			pods: []*corev1.Pod{
				tracked("s1"), newPod("s2"), tracked("f2"), nil, newPod("f1", other),
			},
			wantUncounted:     *uncounted(uids("s1"), uids("f2")),
			wantSucceeded:     2,
			wantFailed:        1,
			wantSucceededUIDs: uids("s2", "s3"),
			wantFailedUIDs:    uids("f1"),
			wantChanged:       true,
		},
		{
			name:          "stale duplicate pod entry with the finalizer keeps the UID uncounted",
			uncounted:     uncounted(uids("a"), nil),
			pods:          []*corev1.Pod{newPod("a"), tracked("a")},
			wantUncounted: *uncounted(uids("a"), nil),
		},
		{
			name:           "corrupted: in both lists, counted once as failed",
			uncounted:      uncounted(uids("a"), uids("a")),
			pods:           nil,
			wantFailed:     1,
			wantFailedUIDs: uids("a"),
			wantChanged:    true,
			wantErrFields:  []string{"status.uncountedTerminatedPods.succeeded[0]"},
		},
		{
			name:          "corrupted: duplicate kept once and stays",
			uncounted:     uncounted(uids("a", "a"), nil),
			pods:          []*corev1.Pod{tracked("a")},
			wantUncounted: *uncounted(uids("a"), nil),
			wantChanged:   true,
			wantErrFields: []string{"status.uncountedTerminatedPods.succeeded[1]"},
		},
		{
			name:          "pods without UID are ignored",
			uncounted:     uncounted(nil, []types.UID{"u"}),
			pods:          []*corev1.Pod{{}},
			wantFailed:    1,
			wantChanged:   true,
			wantUncounted: batchv1.UncountedTerminatedPods{},

			wantFailedUIDs: []types.UID{"u"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before *batchv1.UncountedTerminatedPods
			if tc.uncounted != nil {
				before = tc.uncounted.DeepCopy()
			}
			got, err := finalizers.Settle(finalizers.Name, tc.uncounted, tc.pods, tc.removed)
			if diff := cmp.Diff(tc.wantUncounted, got.Uncounted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Settle().Uncounted (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantSucceeded, got.Succeeded, "Settle().Succeeded")
			assert.Equal(t, tc.wantFailed, got.Failed, "Settle().Failed")
			if diff := cmp.Diff(tc.wantSucceededUIDs, got.SucceededUIDs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Settle().SucceededUIDs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFailedUIDs, got.FailedUIDs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Settle().FailedUIDs (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantChanged, got.Changed, "Settle().Changed")
			if diff := cmp.Diff(tc.wantErrFields, errFields(t, err), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Settle() error fields (-want +got):\n%s\nerror: %v", diff, err)
			}
			if diff := cmp.Diff(before, tc.uncounted); diff != "" {
				t.Errorf("Settle mutated its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestSettlementApplyTo(t *testing.T) {
	tests := []struct {
		name          string
		status        batchv1.JobStatus
		s             finalizers.Settlement
		wantSucceeded int32
		wantFailed    int32
	}{
		{
			name:          "adds counters",
			status:        batchv1.JobStatus{Succeeded: 3, Failed: 1},
			s:             finalizers.Settlement{Succeeded: 2, Failed: 5, Uncounted: *uncounted(uids("a"), nil)},
			wantSucceeded: 5,
			wantFailed:    6,
		},
		{
			name:          "saturates instead of wrapping",
			status:        batchv1.JobStatus{Succeeded: math.MaxInt32 - 1, Failed: math.MaxInt32},
			s:             finalizers.Settlement{Succeeded: 5, Failed: 1},
			wantSucceeded: math.MaxInt32,
			wantFailed:    math.MaxInt32,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.status
			tc.s.ApplyTo(&st)
			assert.Equal(t, tc.wantSucceeded, st.Succeeded)
			assert.Equal(t, tc.wantFailed, st.Failed)
			require.NotNil(t, st.UncountedTerminatedPods, "ApplyTo must leave a non-nil ledger")
			if diff := cmp.Diff(tc.s.Uncounted, *st.UncountedTerminatedPods); diff != "" {
				t.Errorf("ApplyTo ledger (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOutcomeString(t *testing.T) {
	tests := []struct {
		o    ledger.Outcome
		want string
	}{
		{ledger.Succeeded, "Succeeded"},
		{ledger.SucceededIndex, "SucceededIndex"},
		{ledger.Failed, "Failed"},
		{ledger.NotCounted, "NotCounted"},
		{0, "Outcome(0)"},
		{-3, "Outcome(-3)"},
		{42, "Outcome(42)"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.o.String())
		})
	}
}

// Settle never allocates when there is nothing to settle: it runs on every sync.
func TestSettleEmptyDoesNotAllocate(t *testing.T) {
	pods := []*corev1.Pod{tracked("a"), tracked("b")}
	empty := &batchv1.UncountedTerminatedPods{}
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = finalizers.Settle(finalizers.Name, empty, pods, nil)
	})
	assert.Zero(t, allocs)
}

func TestRecordCountsTowardLimitInOrder(t *testing.T) {
	// The pods left out by the limit are exactly the last ones needing entries.
	in := trackedAll(seq("p", 10), ledger.Failed)
	r, err := finalizers.Record(finalizers.Name, nil, in, nil, 4)
	require.NoError(t, err)
	assert.True(t, r.LimitReached)
	assert.Equal(t, seq("p", 4), names(r.RemoveFinalizer))
	assert.True(t, slices.Equal(uids(seq("p", 4)...), r.Uncounted.Failed))
}

// TestRecordErrorsInInputOrder: the errors of nil pods, which the plain ledger never
// sees, come in input order among the others.
func TestRecordErrorsInInputOrder(t *testing.T) {
	dup := tracked("dup")
	_, err := finalizers.Record(finalizers.Name, uncounted(uids("x", "x"), nil), []finalizers.FinishedPod{
		fp(nil, ledger.Failed), fp(dup, ledger.Failed), fp(dup, ledger.Failed), fp(nil, ledger.Failed),
	}, nil, 0)
	want := []string{"status.uncountedTerminatedPods.succeeded[1]", "finished[0].pod", "finished[2].pod.metadata.uid", "finished[3].pod"}
	if diff := cmp.Diff(want, errFields(t, err)); diff != "" {
		t.Errorf("Record() error fields (-want +got):\n%s\nerror: %v", diff, err)
	}
}
