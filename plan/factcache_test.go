package plan

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

// fcHistory is a Job and its pods as an informer's cache holds them: every
// change stores a new object (a changed copy), nothing is changed in place. Each
// step plans the Job from it twice, with the history's FactCache and without
// one, and the plans must be equal.
type fcHistory struct {
	t       *testing.T
	rng     *rand.Rand
	job     *batchv1.Job
	pods    []*corev1.Pod // the store, in the order added
	pending sets.Set[types.UID]
	facts   FactCache
	next    int // the number of the next pod
	syncs   int
}

func newFCHistory(t *testing.T, seed uint64, job *batchv1.Job) *fcHistory {
	return &fcHistory{t: t, rng: rand.New(rand.NewPCG(seed, 37)), job: job}
}

// update stores a changed copy of the pod at i.
func (h *fcHistory) update(i int, change func(*corev1.Pod)) {
	p := h.pods[i].DeepCopy()
	change(p)
	h.pods[i] = p
}

// updateJob stores a changed copy of the Job.
func (h *fcHistory) updateJob(change func(*batchv1.Job)) {
	j := h.job.DeepCopy()
	change(j)
	h.job = j
}

// add stores a new pod of the Job (with the next index of an Indexed Job).
func (h *fcHistory) add(mods ...func(*corev1.Pod)) {
	name := "p-" + strconv.Itoa(h.next)
	first := []func(*corev1.Pod){func(p *corev1.Pod) { p.OwnerReferences[0].UID = h.job.UID }}
	if ptr.Deref(h.job.Spec.CompletionMode, "") == batchv1.IndexedCompletion {
		first = append(first, tbIx(h.next%int(ptr.Deref(h.job.Spec.Completions, 1))))
	}
	h.next++
	h.pods = append(h.pods, tbPod(name, append(first, mods...)...))
}

// sync plans the Job as the store holds it, listed in an informer's order (any),
// with and without the FactCache, and checks the plans are equal and that the
// FactCache holds the listed pods only.
func (h *fcHistory) sync(step string) {
	h.t.Helper()
	h.syncs++
	listed := make([]*corev1.Pod, len(h.pods))
	for i, j := range h.rng.Perm(len(h.pods)) {
		listed[i] = h.pods[j]
	}
	in := tbInput(h.job, listed...)
	in.Now = tbNow.Add(time.Duration(h.syncs) * time.Second)
	in.PendingFinalizerRemovals = h.pending
	want, err := Compute(in)
	require.NoError(h.t, err, "Compute without a FactCache, after %s", step)
	in.Facts = &h.facts
	got, err := Compute(in)
	require.NoError(h.t, err, "Compute with a FactCache, after %s", step)
	if diff := cmp.Diff(want, got); diff != "" {
		h.t.Fatalf("sync %d, after %s: with a FactCache the plan differs (-without +with):\n%s", h.syncs, step, diff)
	}
	if want.Skip == "" {
		if n := h.facts.table.n; n != len(listed) {
			h.t.Fatalf("sync %d, after %s: the FactCache holds %d pods, want the %d listed", h.syncs, step, n, len(listed))
		}
	}
}

// fcOps are the changes of a history, each to the pod at i (modulo the pods),
// to the Job, or a new pod.
var fcOps = []struct {
	name string
	do   func(h *fcHistory, i int)
}{
	{"create", func(h *fcHistory, _ int) { h.add(tbPending) }},
	{"run", func(h *fcHistory, i int) {
		h.update(i, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", RestartCount: int32(i % 3)}}
		})
	}},
	{"ready", func(h *fcHistory, i int) { h.update(i, tbReady) }},
	{"succeed", func(h *fcHistory, i int) { h.update(i, tbSucceeded) }},
	{"fail", func(h *fcHistory, i int) { h.update(i, tbFailedWith(int32(1+i%3))) }},
	{"lose the finalizer", func(h *fcHistory, i int) { h.update(i, tbNoFinalizer) }},
	{"start deleting", func(h *fcHistory, i int) { h.update(i, tbDeleted) }},
	{"delete", func(h *fcHistory, i int) { h.pods = append(h.pods[:i], h.pods[i+1:]...) }},
	{"release by a label", func(h *fcHistory, i int) {
		h.update(i, func(p *corev1.Pod) { p.Labels[batchv1.ControllerUidLabel] = "another" })
	}},
	{"match the selector again", func(h *fcHistory, i int) {
		h.update(i, func(p *corev1.Pod) { p.Labels[batchv1.ControllerUidLabel] = string(h.job.UID) })
	}},
	{"change the index", func(h *fcHistory, i int) { h.update(i, tbIx(i*7%5)) }},
	{"spoil the index", func(h *fcHistory, i int) { h.update(i, tbIxString("x"+strconv.Itoa(i))) }},
	{"decode again unchanged", func(h *fcHistory, i int) { h.update(i, func(*corev1.Pod) {}) }},
	{"add an orphan", func(h *fcHistory, i int) {
		h.add(tbOrphan)
		if i%2 == 0 {
			h.update(len(h.pods)-1, tbNoFinalizer)
		}
	}},
	{"add another controller's pod", func(h *fcHistory, _ int) { h.add(tbOwnedBy("rs-uid")) }},
	{"record in the ledger", func(h *fcHistory, i int) {
		uid := h.pods[i].UID
		h.updateJob(func(j *batchv1.Job) {
			u := j.Status.UncountedTerminatedPods
			if i%2 == 0 {
				u.Succeeded = append(u.Succeeded, uid)
			} else {
				u.Failed = append(u.Failed, uid)
			}
		})
	}},
	{"empty the ledger", func(h *fcHistory, _ int) {
		h.updateJob(func(j *batchv1.Job) { j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{} })
	}},
	{"remove a finalizer in flight", func(h *fcHistory, i int) {
		h.pending = sets.New(h.pods[i].UID)
	}},
	{"settle the removals in flight", func(h *fcHistory, _ int) { h.pending = nil }},
	{"change the selector", func(h *fcHistory, i int) {
		h.updateJob(func(j *batchv1.Job) {
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"job-name": "job"}}
			if i%2 == 0 {
				j.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: batchv1.ControllerUidLabel, Operator: metav1.LabelSelectorOpExists}}
			}
		})
	}},
	{"recreate the Job", func(h *fcHistory, i int) {
		h.updateJob(func(j *batchv1.Job) { j.UID = types.UID("job-uid-" + strconv.Itoa(i)) })
	}},
	{"scale", func(h *fcHistory, i int) {
		h.updateJob(func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To(int32(i % 6)) })
	}},
}

// fcOp returns the operation named name.
func fcOp(t *testing.T, name string) func(h *fcHistory, i int) {
	for _, op := range fcOps {
		if op.name == name {
			return op.do
		}
	}
	t.Fatalf("no operation %q", name)
	return nil
}

// fcJobs are the Jobs the histories start from: both modes, and the rules that
// read more of a pod's facts.
var fcJobs = []struct {
	name string
	job  func() *batchv1.Job
}{
	{"NonIndexed", func() *batchv1.Job { return tbJob(tbSize(8, 4)) }},
	{"Indexed", func() *batchv1.Job { return tbJob(tbIndexed, tbSize(5, 4)) }},
	{"Indexed/perIndex+policy", func() *batchv1.Job {
		return tbJob(tbIndexed, tbSize(5, 4), tbPerIndex(1, 3), tbReplaceFailed,
			tbFailurePolicy(tbExitRule(batchv1.PodFailurePolicyActionIgnore, 2), tbExitRule(batchv1.PodFailurePolicyActionFailIndex, 3)))
	}},
	{"NonIndexed/OnFailure", func() *batchv1.Job { return tbJob(tbSize(8, 4), tbOnFailure, tbBackoffLimit(3)) }},
}

// TestFactCacheHistories plans named histories of pods, each change stored as a
// new object, with and without a FactCache: the plans are the same at every step.
func TestFactCacheHistories(t *testing.T) {
	start := []string{"create", "create", "create", "run", "ready"}
	cases := []struct {
		name  string
		steps []string // applied to the pod at index 1 (or the Job)
	}{
		{"pods run and finish", []string{"run", "ready", "succeed", "record in the ledger", "lose the finalizer", "empty the ledger"}},
		{"a pod fails and is replaced", []string{"run", "fail", "create", "lose the finalizer"}},
		{"a pod updated with no change", []string{"decode again unchanged", "decode again unchanged"}},
		{"a label change releases a pod", []string{"release by a label", "match the selector again"}},
		{"the index annotation changes", []string{"change the index", "spoil the index", "change the index"}},
		{"a pod is deleted", []string{"start deleting", "delete", "delete"}},
		{"an orphan is adopted", []string{"add an orphan", "add an orphan", "add another controller's pod"}},
		{"a finalizer removal in flight", []string{"succeed", "remove a finalizer in flight", "record in the ledger", "settle the removals in flight"}},
		{"the selector changes", []string{"change the selector", "release by a label", "change the selector"}},
		{"the Job is recreated", []string{"recreate the Job", "create", "recreate the Job"}},
		{"scaled down and up", []string{"scale", "fail", "scale"}},
	}
	for _, jc := range fcJobs {
		for _, tc := range cases {
			t.Run(jc.name+"/"+tc.name, func(t *testing.T) {
				h := newFCHistory(t, 1, jc.job())
				for _, s := range start {
					fcOp(t, s)(h, len(h.pods)-1)
				}
				h.sync("the start")
				for _, s := range tc.steps {
					fcOp(t, s)(h, 1%len(h.pods))
					h.sync(s)
					h.sync(s + ", listed again")
				}
			})
		}
	}
}

// TestFactCacheRandomHistories plans random histories (fixed seeds) with and
// without a FactCache: the plans are the same at every step.
func TestFactCacheRandomHistories(t *testing.T) {
	histories := 50
	if testing.Short() {
		histories = 10
	}
	for _, jc := range fcJobs {
		t.Run(jc.name, func(t *testing.T) {
			for seed := range uint64(histories) {
				h := newFCHistory(t, seed, jc.job())
				fcRandomSteps(h, 60, func() int { return h.rng.IntN(1 << 16) })
			}
		})
	}
}

// FuzzFactCache plans the histories the fuzz input chooses with and without a
// FactCache: the plans are the same at every step.
func FuzzFactCache(f *testing.F) {
	f.Add(uint8(0), []byte{0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add(uint8(1), []byte{0, 0, 0, 11, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21})
	f.Add(uint8(2), []byte{0, 0, 3, 4, 0, 5, 7, 7, 1, 13, 19, 20})
	f.Fuzz(func(t *testing.T, job uint8, data []byte) {
		jc := fcJobs[int(job)%len(fcJobs)]
		h := newFCHistory(t, uint64(len(data)), jc.job())
		b := &fuzzBytes{data: data}
		fcRandomSteps(h, len(data)/2, func() int { return int(b.next()) })
	})
}

// fcRandomSteps applies n changes chosen by next to h, syncing after each (and
// sometimes twice).
func fcRandomSteps(h *fcHistory, n int, next func() int) {
	for range n {
		op := fcOps[next()%len(fcOps)]
		if len(h.pods) == 0 {
			op = fcOps[0] // create
		}
		op.do(h, next()%max(1, len(h.pods)))
		h.sync(op.name)
		if next()%4 == 0 {
			h.sync(op.name + ", listed again")
		}
	}
}

// TestFactCacheInUse plans with a FactCache another Compute holds: the plan is
// the same, read without it.
func TestFactCacheInUse(t *testing.T) {
	in := tbBenchIndexed(100)
	want := tbCompute(t, in)
	in.Facts = new(FactCache)
	in.Facts.mu.Lock()
	got, err := Compute(in)
	in.Facts.mu.Unlock()
	require.NoError(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("with a FactCache in use the plan differs (-without +with):\n%s", diff)
	}
	if in.Facts.table.n != 0 {
		t.Errorf("a FactCache in use got %d pods, want 0", in.Facts.table.n)
	}

	// Concurrent Computes of one owner: each plans as without it (run with -race).
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			p, err := Compute(in)
			if err != nil {
				t.Error(err)
				return
			}
			if diff := cmp.Diff(want, p); diff != "" {
				t.Errorf("a concurrent Compute with a FactCache plans differently (-without +with):\n%s", diff)
			}
		})
	}
	wg.Wait()
}

// TestFactCacheChangedInPlace shows the contract: a pod changed in place, without
// a new object, is planned from what the FactCache read of it before; without a
// FactCache, from what it holds now.
func TestFactCacheChangedInPlace(t *testing.T) {
	pods := tbPods("p", 2)
	in := tbInput(tbJob(tbSize(2, 2)), pods...)
	in.Facts = new(FactCache)
	_, err := Compute(in)
	require.NoError(t, err)
	tbSucceeded(pods[0]) // in place: breaks the contract

	cached, err := Compute(in)
	require.NoError(t, err)
	in.Facts = nil
	read, err := Compute(in)
	require.NoError(t, err)
	require.Equal(t, int32(0), cached.Status.Succeeded+int32(len(cached.Status.UncountedTerminatedPods.Succeeded)), "with the FactCache: the pod as read before, running")
	require.Equal(t, int32(1), read.Status.Succeeded+int32(len(read.Status.UncountedTerminatedPods.Succeeded)), "without: the pod as it is, succeeded")
}

// TestFactCacheReleasesPods checks that the FactCache keeps no pod the last
// Compute did not list, and gives back its slots when the owner shrinks.
func TestFactCacheReleasesPods(t *testing.T) {
	in := tbBenchNonIndexed(5000)
	all := in.Pods
	in.Facts = new(FactCache)
	for _, n := range []int{5000, 4000, 4000, 100, 0, 5000} {
		in.Pods = all[:n]
		_, err := Compute(in)
		require.NoError(t, err)
		tab := &in.Facts.table
		require.Equal(t, n, tab.n, "pods held after a Compute of %d", n)
		held := 0
		for _, s := range tab.slots {
			if s.pod != nil {
				held++
			}
		}
		require.Equal(t, n, held, "slots in use after a Compute of %d", n)
		// At most 8 slots a pod, or the 2,048 of a table of 1,024 pods that is
		// not shrunk.
		require.LessOrEqual(t, len(tab.slots), max(2048, 8*n), "slots after a Compute of %d", n)
		for _, p := range tab.drop[:cap(tab.drop)] {
			require.Nil(t, p, "keep's list holds a pod after a Compute of %d", n)
		}
	}
}

// TestFactTable checks the table against a map through random insertions and
// removals: every pod it holds is found with its facts, no other is.
func TestFactTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 1))
	pods := make([]*corev1.Pod, 3000)
	for i := range pods {
		pods[i] = &corev1.Pod{}
	}
	var tab factTable
	model := map[*corev1.Pod]int32{}
	for step := range 20000 {
		p := pods[rng.IntN(len(pods))]
		if _, ok := model[p]; ok && rng.IntN(2) == 0 {
			tab.remove(p)
			delete(model, p)
		} else if !ok {
			tab.insert(p, podFacts{index: int32(step)})
			model[p] = int32(step)
		}
		if step%1000 == 0 || step > 19900 {
			require.Equal(t, len(model), tab.n, "step %d: size", step)
			for _, q := range pods {
				i, ok := tab.find(q)
				want, held := model[q]
				require.Equal(t, held, ok, "step %d: pod %p held", step, q)
				if ok {
					require.Equal(t, want, tab.slots[i].facts.index, "step %d: facts of %p", step, q)
				}
			}
		}
	}
	tab.keep(func(pf *podFacts) bool { return pf.index%2 == 0 })
	for p, ix := range model {
		_, ok := tab.find(p)
		require.Equal(t, ix%2 == 0, ok, fmt.Sprintf("after keep: pod with facts %d", ix))
	}
}
