package indexes

import (
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jobkit/jobkit/owner"
	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// activePod is a running pod of index ix ("" for none), ready since readyFor before
// t0+1h, or not ready when readyFor is 0.
func activePod(name, ix string, readyFor time.Duration) *corev1.Pod {
	p := jobPod(name, ix, corev1.PodRunning, true)
	p.Spec.NodeName = "node"
	p.CreationTimestamp = metav1.NewTime(t0)
	if readyFor > 0 {
		p.Status.Conditions = []corev1.PodCondition{{
			Type:               corev1.PodReady,
			Status:             corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(t0.Add(time.Hour - readyFor)),
		}}
	}
	return p
}

// strayNames summarises a result as names, for readable diffs.
type strayNames struct {
	Remove []string // "name/reason/index"
	Kept   []string
	Active string
}

func summarize(r StraysResult) strayNames {
	var s strayNames
	for _, st := range r.Remove {
		s.Remove = append(s.Remove, st.Pod.Name+"/"+string(st.Reason)+"/"+itoa(st.Index))
	}
	for _, p := range r.Kept {
		s.Kept = append(s.Kept, p.Name)
	}
	s.Active = r.Active.String()
	return s
}

func itoa(i int) string {
	if i == plainindexes.Unknown {
		return "?"
	}
	return strconv.Itoa(i)
}

func TestStrays(t *testing.T) {
	cases := []struct {
		name        string
		pods        []*corev1.Pod
		completions int
		want        strayNames
	}{
		{name: "no pods", pods: nil, completions: 3, want: strayNames{}},
		{
			name:        "one pod per index",
			pods:        []*corev1.Pod{activePod("c", "2", time.Minute), activePod("a", "0", time.Minute), activePod("b", "1", 0)},
			completions: 3,
			want:        strayNames{Kept: []string{"a", "b", "c"}, Active: "0-2"},
		},
		{
			name: "no valid index",
			pods: []*corev1.Pod{
				activePod("missing", "", time.Minute),
				activePod("garbage", "x", time.Minute),
				activePod("negative", "-1", time.Minute),
				activePod("ok", "1", time.Minute),
			},
			completions: 3,
			want: strayNames{
				Remove: []string{"garbage/NoIndex/?", "missing/NoIndex/?", "negative/NoIndex/?"},
				Kept:   []string{"ok"},
				Active: "1",
			},
		},
		{
			name:        "out of range",
			pods:        []*corev1.Pod{activePod("high", "5", time.Minute), activePod("edge", "3", time.Minute), activePod("ok", "2", time.Minute)},
			completions: 3,
			want: strayNames{
				Remove: []string{"edge/OutOfRange/3", "high/OutOfRange/5"},
				Kept:   []string{"ok"},
				Active: "2",
			},
		},
		{
			name: "duplicates keep the pod removed last",
			pods: []*corev1.Pod{
				activePod("ready-long", "1", time.Hour),
				activePod("not-ready", "1", 0),
				activePod("ready-short", "1", time.Minute),
				activePod("other", "0", 0),
			},
			completions: 3,
			want: strayNames{
				Remove: []string{"not-ready/Duplicate/1", "ready-short/Duplicate/1"},
				Kept:   []string{"other", "ready-long"},
				Active: "0,1",
			},
		},
		{
			name:        "identical duplicates broken by name",
			pods:        []*corev1.Pod{activePod("b", "4", time.Minute), activePod("a", "4", time.Minute), activePod("c", "4", time.Minute)},
			completions: 5,
			want: strayNames{
				Remove: []string{"a/Duplicate/4", "b/Duplicate/4"},
				Kept:   []string{"c"},
				Active: "4",
			},
		},
		{
			name:        "out-of-range duplicates all go",
			pods:        []*corev1.Pod{activePod("a", "7", time.Minute), activePod("b", "7", time.Minute)},
			completions: 5,
			want: strayNames{
				Remove: []string{"a/OutOfRange/7", "b/OutOfRange/7"},
			},
		},
		{
			name:        "zero completions",
			pods:        []*corev1.Pod{activePod("a", "0", time.Minute), activePod("b", "", 0)},
			completions: 0,
			want:        strayNames{Remove: []string{"b/NoIndex/?", "a/OutOfRange/0"}},
		},
		{
			name: "mixed",
			pods: []*corev1.Pod{
				activePod("dup-kept", "2", time.Hour),
				activePod("far", "9", time.Hour),
				activePod("dup-gone", "2", 0),
				activePod("none", "", time.Hour),
				activePod("zero", "0", time.Hour),
				activePod("three", "3", time.Hour),
			},
			completions: 4,
			want: strayNames{
				Remove: []string{"none/NoIndex/?", "dup-gone/Duplicate/2", "far/OutOfRange/9"},
				Kept:   []string{"zero", "dup-kept", "three"},
				Active: "0,2,3",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.pods)
			podsBefore := deepCopyPods(tc.pods)
			got := Strays(owner.BatchJob, in, tc.completions)
			if diff := cmp.Diff(tc.want, summarize(got)); diff != "" {
				t.Errorf("Strays(owner.BatchJob, pods, %d) mismatch (-want +got):\n%s", tc.completions, diff)
			}
			assert.Equal(t, tc.pods, in, "slice reordered")
			assert.Empty(t, cmp.Diff(podsBefore, tc.pods), "pods modified")
			assert.Equal(t, len(tc.pods), len(got.Remove)+len(got.Kept), "every pod is removed or kept")
		})
	}
}

func TestStraysIgnoresInputOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	var pods []*corev1.Pod
	for i := range 200 {
		ix := itoa(r.IntN(60))
		if r.IntN(20) == 0 {
			ix = ""
		}
		pods = append(pods, activePod("p"+itoa(i), ix, time.Duration(r.IntN(3))*time.Minute))
	}
	want := summarize(Strays(owner.BatchJob, pods, 50))
	for range 20 {
		r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
		if diff := cmp.Diff(want, summarize(Strays(owner.BatchJob, pods, 50))); diff != "" {
			t.Fatalf("Strays() depends on input order (-first +now):\n%s", diff)
		}
	}
	// Every kept pod has a distinct in-range index, and Active lists exactly those.
	res := Strays(owner.BatchJob, pods, 50)
	var kept []int
	for _, p := range res.Kept {
		ix, err := PodIndex(owner.BatchJob, p)
		assert.NoError(t, err)
		assert.Less(t, ix, 50)
		kept = append(kept, ix)
	}
	assert.True(t, slices.IsSorted(kept))
	assert.Equal(t, len(kept), len(slices.Compact(slices.Clone(kept))))
	assert.Equal(t, plainindexes.FromIndexes(kept), res.Active)
}

func TestStrayReasonValues(t *testing.T) {
	// The reasons are part of the API (logged, shown in plans); keep them stable.
	assert.Equal(t, "NoIndex", string(plainindexes.StrayNoIndex))
	assert.Equal(t, "OutOfRange", string(plainindexes.StrayOutOfRange))
	assert.Equal(t, "Duplicate", string(plainindexes.StrayDuplicate))
}
