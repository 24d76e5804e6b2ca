package finalizers_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/plain/ledger"
)

// The simulation below runs a controller that follows the crash-safe order of the
// package documentation against a pretend API server, with a lagging informer
// cache, failing patches and crashes at every step, and checks that each finished
// pod is counted exactly once.
//
// It keeps its own pretend server rather than reconciletest's Cluster, the one rig
// of the other simulations (issue 19). No import cycle forbids the Cluster here
// (finalizers_test is an external test package), but the controller under test is
// the package documentation's protocol written over Record and Settle, not
// reconcile's, its pods are only a UID, an index and a finalizer, and FuzzLedger
// runs it thousands of times; the same protocol as reconcile executes it against
// the Cluster, with faults as outcomes of the Cluster's interceptor, is checked by
// reconcile's TestChaos and internal/sim. Its faults (a crash before a call, a
// patch that fails) carry no error value, so there is no outcome type to share.

type simPod struct {
	uid       types.UID
	index     int
	outcome   ledger.Outcome // 0 while running; Succeeded, Failed or NotCounted once finished
	finalizer bool
	exists    bool
}

type simConfig struct {
	limit       int
	indexed     bool
	crashPct    int // chance of a crash before each API call
	patchFail   int // chance that a finalizer patch fails
	cacheFresh  int // chance that the cache catches up with one pod in a round
	newPods     int // pods created per round
	finishPct   int // chance that a running pod finishes in a round
	deletePct   int // chance that a pod without finalizer is deleted in a round
	completions int // number of indexes (indexed mode)
}

type sim struct {
	t   testing.TB
	rng *rand.Rand
	cfg simConfig

	truth []*simPod            // the API server
	cache map[types.UID]simPod // the informer's lagging view
	next  int

	pending sets.Set[types.UID] // accepted removals not yet seen in the cache (lost on crash)

	status    batchv1.JobStatus // persisted Job status
	completed sets.Set[int]     // persisted completedIndexes

	countedAs map[types.UID]ledger.Outcome // how each UID was counted (by persisted writes)
	counted   map[types.UID]int
}

func newSim(t testing.TB, seed uint64, cfg simConfig) *sim {
	if cfg.completions == 0 {
		cfg.completions = 1 << 30
	}
	return &sim{
		t:         t,
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		cfg:       cfg,
		cache:     map[types.UID]simPod{},
		pending:   sets.New[types.UID](),
		completed: sets.New[int](),
		countedAs: map[types.UID]ledger.Outcome{},
		counted:   map[types.UID]int{},
		status:    batchv1.JobStatus{UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{}},
	}
}

func (s *sim) chance(pct int) bool { return pct > 0 && s.rng.IntN(100) < pct }

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf(format, args...)
}

// world advances the cluster: new pods, pods finishing, deletions, cache catch-up.
func (s *sim) world() {
	for range s.cfg.newPods {
		s.next++
		s.truth = append(s.truth, &simPod{
			uid:       types.UID(fmt.Sprintf("pod-%d", s.next)),
			index:     s.rng.IntN(s.cfg.completions + 2), // some out of range
			finalizer: true,
			exists:    true,
		})
	}
	for _, p := range s.truth {
		if p.outcome == 0 && s.chance(s.cfg.finishPct) {
			p.outcome = []ledger.Outcome{ledger.Succeeded, ledger.Succeeded, ledger.Failed, ledger.NotCounted}[s.rng.IntN(4)]
		}
		if p.exists && !p.finalizer && s.chance(s.cfg.deletePct) {
			p.exists = false
		}
	}
	for _, p := range s.truth {
		if s.chance(s.cfg.cacheFresh) {
			s.refresh(p)
		}
	}
	s.observe()
}

func (s *sim) refresh(p *simPod) {
	if p.exists {
		s.cache[p.uid] = *p
	} else {
		delete(s.cache, p.uid)
	}
}

// observe drops expectations the cache has caught up with.
func (s *sim) observe() {
	for uid := range s.pending {
		if c, ok := s.cache[uid]; !ok || !c.finalizer {
			s.pending.Delete(uid)
		}
	}
}

// restart is a controller crash: expectations are lost and the cache is relisted.
func (s *sim) restart() {
	s.pending = sets.New[types.UID]()
	for _, p := range s.truth {
		s.refresh(p)
	}
}

func (s *sim) listPods() ([]*corev1.Pod, map[types.UID]simPod) {
	var pods []*corev1.Pod
	for _, p := range s.truth { // stable order
		c, ok := s.cache[p.uid]
		if !ok {
			continue
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: string(c.uid), UID: c.uid}}
		if c.finalizer {
			pod.Finalizers = []string{finalizers.Name}
		}
		pods = append(pods, pod)
	}
	return pods, s.cache
}

// sync is one controller sync. It returns false if the controller crashed.
func (s *sim) sync() bool {
	s.t.Helper()
	pods, view := s.listPods()
	status := *s.status.DeepCopy()
	completed := s.completed.Clone()

	s1, err := finalizers.Settle(finalizers.Name, status.UncountedTerminatedPods, pods, s.pending)
	if err != nil {
		s.fatalf("Settle: %v", err)
	}
	s1.ApplyTo(&status)

	var finished []finalizers.FinishedPod
	for _, pod := range pods {
		c := view[pod.UID]
		if c.outcome == 0 {
			continue
		}
		f := finalizers.FinishedPod{Pod: pod, Outcome: c.outcome}
		if s.cfg.indexed && c.outcome == ledger.Succeeded {
			f.Outcome, f.Index = ledger.SucceededIndex, c.index
			if c.index >= s.cfg.completions || completed.Has(c.index) {
				f.Outcome = ledger.NotCounted
			}
		}
		finished = append(finished, f)
	}
	r, err := finalizers.Record(finalizers.Name, status.UncountedTerminatedPods, finished, s.pending, s.cfg.limit)
	if err != nil {
		s.fatalf("Record: %v", err)
	}
	u := r.Uncounted
	status.UncountedTerminatedPods = &u
	completed.Insert(r.NewSucceededIndexes...)

	if s1.Changed || r.Changed {
		if s.chance(s.cfg.crashPct) {
			return false
		}
		s.persist(status, completed)
	}

	for _, pod := range r.RemoveFinalizer {
		if s.chance(s.cfg.crashPct) {
			return false
		}
		if s.chance(s.cfg.patchFail) {
			continue
		}
		s.removeFinalizer(pod.UID)
		s.pending.Insert(pod.UID)
	}

	s2, err := finalizers.Settle(finalizers.Name, &r.Uncounted, pods, s.pending)
	if err != nil {
		s.fatalf("Settle after removals: %v", err)
	}
	if s2.Changed {
		if s.chance(s.cfg.crashPct) {
			return false
		}
		s2.ApplyTo(&status)
		s.persist(status, completed)
	}
	return true
}

// removeFinalizer is the API server applying a removal patch. A counted pod may
// lose its finalizer only when the persisted status already records it.
func (s *sim) removeFinalizer(uid types.UID) {
	s.t.Helper()
	var p *simPod
	for _, q := range s.truth {
		if q.uid == uid {
			p = q
		}
	}
	if p == nil || !p.exists {
		return // NotFound: fine
	}
	u := s.status.UncountedTerminatedPods
	switch {
	case p.outcome == ledger.Failed || (p.outcome == ledger.Succeeded && !s.cfg.indexed):
		if !slices.Contains(u.Succeeded, uid) && !slices.Contains(u.Failed, uid) && s.counted[uid] == 0 {
			s.fatalf("finalizer of %s (%v) removed while the persisted status does not record it: %+v", uid, p.outcome, u)
		}
	case p.outcome == ledger.Succeeded && s.cfg.indexed:
		if p.index < s.cfg.completions && !s.completed.Has(p.index) {
			s.fatalf("finalizer of %s (index %d) removed before the index was persisted", uid, p.index)
		}
	}
	p.finalizer = false
}

// persist is a successful status write. It checks that every UID leaving the
// uncounted lists is added to the matching counter, once.
func (s *sim) persist(next batchv1.JobStatus, completed sets.Set[int]) {
	s.t.Helper()
	old := s.status.UncountedTerminatedPods
	nu := next.UncountedTerminatedPods
	inNew := map[types.UID]ledger.Outcome{}
	for _, uid := range nu.Succeeded {
		inNew[uid] = ledger.Succeeded
	}
	for _, uid := range nu.Failed {
		if _, dup := inNew[uid]; dup {
			s.fatalf("UID %s in both lists of %+v", uid, nu)
		}
		inNew[uid] = ledger.Failed
	}
	if len(inNew) != len(nu.Succeeded)+len(nu.Failed) {
		s.fatalf("duplicate UIDs in %+v", nu)
	}
	if len(inNew) > s.cfg.limit && s.cfg.limit > 0 {
		s.fatalf("uncounted lists hold %d UIDs, limit %d", len(inNew), s.cfg.limit)
	}
	for uid := range inNew {
		if s.counted[uid] > 0 {
			s.fatalf("UID %s re-entered the ledger after it was counted", uid)
		}
	}
	var leftS, leftF int32
	leave := func(list []types.UID, as ledger.Outcome) {
		for _, uid := range list {
			if o, still := inNew[uid]; still {
				if o != as {
					s.fatalf("UID %s moved from %v to %v", uid, as, o)
				}
				continue
			}
			s.counted[uid]++
			s.countedAs[uid] = as
			if as == ledger.Succeeded {
				leftS++
			} else {
				leftF++
			}
		}
	}
	leave(old.Succeeded, ledger.Succeeded)
	leave(old.Failed, ledger.Failed)
	if got := next.Succeeded - s.status.Succeeded; got != leftS {
		s.fatalf("succeeded grew by %d, but %d UIDs left the list", got, leftS)
	}
	if got := next.Failed - s.status.Failed; got != leftF {
		s.fatalf("failed grew by %d, but %d UIDs left the list", got, leftF)
	}
	s.status = *next.DeepCopy()
	s.completed = completed.Clone()
}

func (s *sim) run(rounds int) {
	s.t.Helper()
	for range rounds {
		s.world()
		if !s.sync() {
			s.restart()
		}
	}
	// Drain: everything finishes, nothing fails any more, the cache keeps up.
	for _, p := range s.truth {
		if p.outcome == 0 {
			p.outcome = ledger.Failed
		}
	}
	s.cfg.crashPct, s.cfg.patchFail, s.cfg.newPods, s.cfg.cacheFresh = 0, 0, 0, 100
	for i := 0; ; i++ {
		if i > 10*len(s.truth)+10 {
			s.fatalf("ledger did not drain: %+v", s.status.UncountedTerminatedPods)
		}
		s.world()
		s.sync()
		u := s.status.UncountedTerminatedPods
		if len(u.Succeeded)+len(u.Failed) == 0 && !slices.ContainsFunc(s.truth, func(p *simPod) bool { return p.finalizer }) {
			break
		}
	}
	s.check()
}

func (s *sim) check() {
	s.t.Helper()
	var wantS, wantF int32
	wantIndexes := sets.New[int]()
	for _, p := range s.truth {
		want := p.outcome
		if want == ledger.NotCounted || (s.cfg.indexed && want == ledger.Succeeded) {
			want = 0
		}
		if s.cfg.indexed && p.outcome == ledger.Succeeded && p.index < s.cfg.completions {
			wantIndexes.Insert(p.index)
		}
		switch want {
		case 0:
			if s.counted[p.uid] != 0 {
				s.fatalf("%s (%v) counted %d times, want 0", p.uid, p.outcome, s.counted[p.uid])
			}
		default:
			if s.counted[p.uid] != 1 || s.countedAs[p.uid] != want {
				s.fatalf("%s (%v) counted %d times as %v, want once as %v", p.uid, p.outcome, s.counted[p.uid], s.countedAs[p.uid], want)
			}
			if want == ledger.Succeeded {
				wantS++
			} else {
				wantF++
			}
		}
	}
	if s.status.Succeeded != wantS || s.status.Failed != wantF {
		s.fatalf("status succeeded=%d failed=%d, want %d and %d", s.status.Succeeded, s.status.Failed, wantS, wantF)
	}
	if !s.completed.Equal(wantIndexes) {
		s.fatalf("completed indexes %v, want %v", sets.List(s.completed), sets.List(wantIndexes))
	}
}

func TestLedgerCountsEveryPodOnce(t *testing.T) {
	configs := map[string]simConfig{
		"calm":             {limit: 0, crashPct: 0, patchFail: 0, cacheFresh: 100, newPods: 5, finishPct: 30, deletePct: 20},
		"small limit":      {limit: 3, crashPct: 0, patchFail: 10, cacheFresh: 60, newPods: 6, finishPct: 40, deletePct: 20},
		"crashes":          {limit: 4, crashPct: 10, patchFail: 20, cacheFresh: 50, newPods: 4, finishPct: 40, deletePct: 30},
		"stale cache":      {limit: 5, crashPct: 3, patchFail: 5, cacheFresh: 10, newPods: 3, finishPct: 50, deletePct: 50},
		"limit 1":          {limit: 1, crashPct: 5, patchFail: 30, cacheFresh: 70, newPods: 3, finishPct: 60, deletePct: 10},
		"indexed":          {limit: 4, indexed: true, completions: 20, crashPct: 8, patchFail: 20, cacheFresh: 50, newPods: 3, finishPct: 40, deletePct: 30},
		"indexed, calm":    {limit: 0, indexed: true, completions: 50, cacheFresh: 100, newPods: 5, finishPct: 30, deletePct: 20},
		"everything fails": {limit: 2, crashPct: 30, patchFail: 60, cacheFresh: 30, newPods: 2, finishPct: 70, deletePct: 50},
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(20) {
				s := newSim(t, seed, cfg)
				s.run(40)
			}
		})
	}
}

func FuzzLedger(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(10), uint8(20), uint8(50), false)
	f.Add(uint64(7), uint8(0), uint8(0), uint8(0), uint8(100), false)
	f.Add(uint64(42), uint8(1), uint8(30), uint8(60), uint8(10), true)
	f.Add(uint64(9), uint8(5), uint8(5), uint8(5), uint8(90), true)
	f.Fuzz(func(t *testing.T, seed uint64, limit, crashPct, patchFail, cacheFresh uint8, indexed bool) {
		cfg := simConfig{
			limit:       int(limit % 12),
			indexed:     indexed,
			completions: 15,
			crashPct:    int(crashPct % 50),
			patchFail:   int(patchFail % 90),
			cacheFresh:  1 + int(cacheFresh%100),
			newPods:     1 + int(seed%4),
			finishPct:   40,
			deletePct:   30,
		}
		newSim(t, seed, cfg).run(25)
	})
}
