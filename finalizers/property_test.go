package finalizers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/internal/sim"
	"github.com/jobkit/jobkit/owner"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plain/ledger"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// The simulation below runs a controller that follows the crash-safe order of the
// package documentation, written over Record and Settle (that protocol, not
// reconcile's execution of it, is under test), against reconciletest's Cluster, the
// rig of every simulation (issue 19): the Cluster is the API server and stores the
// Job's status, its Cache is the lagging informer (each round, each pod's watch
// events reach it with some chance), and its Kubelet finishes the pods. The faults
// are outcomes of the Cluster's interceptor, from the simulator's one fault model
// (sim.FaultKind.Outcome): a crash before a call (FaultCrash: the call is never
// sent, the controller loses its memory and relists) and a finalizer patch that
// fails (FaultServerError). A model built from the Cluster's writes (OnWrite) checks
// that each finished pod is counted exactly once and that no counted pod loses its
// finalizer before the stored status records it.

const (
	propNS  = "ns"
	propJob = "job"
)

// simPod is the model of one pod, kept from the Cluster's writes.
type simPod struct {
	name      string
	uid       types.UID
	index     int            // the completion index annotation (Indexed Jobs), -1 without
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

type simulation struct {
	t    testing.TB
	ctx  context.Context
	seed uint64
	rng  *rand.Rand
	cfg  simConfig
	c    *reconciletest.Cluster

	pending sets.Set[types.UID] // accepted removals not yet seen in the cache (lost on crash)
	crashed bool                // the interceptor's outcome for the last call was a crash

	// The model, from the Cluster's writes.
	truth     []*simPod // in creation order
	byName    map[string]*simPod
	byUID     map[types.UID]*simPod
	status    batchv1.JobStatus // as stored
	completed sets.Set[int]     // status.completedIndexes as stored
	countedAs map[types.UID]ledger.Outcome
	counted   map[types.UID]int
}

func newSim(t testing.TB, seed uint64, cfg simConfig) *simulation {
	t.Helper()
	if !cfg.indexed {
		cfg.completions = 0
	}
	s := &simulation{
		t:         t,
		ctx:       context.Background(),
		seed:      seed,
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		cfg:       cfg,
		c:         reconciletest.NewCluster(reconciletest.Options{Seed: seed}),
		pending:   sets.New[types.UID](),
		byName:    map[string]*simPod{},
		byUID:     map[types.UID]*simPod{},
		completed: sets.New[int](),
		countedAs: map[types.UID]ledger.Outcome{},
		counted:   map[types.UID]int{},
	}
	s.c.OnWrite(s.observeWrite)
	s.c.SetInterceptor(s.intercept)
	// No pod template: nothing creates pods from it, and every status write copies
	// the Job.
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: propNS, Name: propJob}}
	if cfg.indexed {
		job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		job.Spec.Completions, job.Spec.Parallelism = ptr.To(int32(cfg.completions)), ptr.To(int32(cfg.completions))
	}
	job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	if _, err := s.c.Jobs().Create(job); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *simulation) chance(pct int) bool { return pct > 0 && s.rng.IntN(100) < pct }

func (s *simulation) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d: "+format, append([]any{s.seed}, args...)...)
}

// intercept is the fault schedule: every call may find the controller crashed
// before it is sent, and a finalizer patch may fail.
func (s *simulation) intercept(call reconciletest.Call) reconciletest.Outcome {
	s.crashed = s.chance(s.cfg.crashPct)
	switch {
	case s.crashed:
		return sim.FaultCrash.Outcome()
	case call.Op == reconciletest.OpPatchPod && s.chance(s.cfg.patchFail):
		return sim.FaultServerError.Outcome()
	}
	return reconciletest.Outcome{}
}

// observeWrite keeps the model and checks each write as the Cluster makes it (on
// the test's goroutine, under the Cluster's lock, which a failure leaves behind
// with the Cluster).
func (s *simulation) observeWrite(ev reconciletest.WatchEvent) {
	s.t.Helper()
	job, _ := ev.Owner.(*batchv1.Job)
	switch {
	case job != nil && ev.Type == watch.Modified:
		s.persisted(job.Status)
	case job != nil:
		s.status = *job.Status.DeepCopy()
	case ev.Pod != nil && ev.Type == watch.Added:
		p := &simPod{name: ev.Pod.Name, uid: ev.Pod.UID, index: -1, finalizer: owner.BatchJob.HasFinalizer(ev.Pod), exists: true}
		if ix, err := strconv.Atoi(ev.Pod.Annotations[batchv1.JobCompletionIndexAnnotation]); err == nil {
			p.index = ix
		}
		s.truth = append(s.truth, p)
		s.byName[p.name], s.byUID[p.uid] = p, p
	case ev.Pod != nil:
		p := s.byUID[ev.Pod.UID]
		if ev.Type == watch.Deleted {
			p.exists = false
			return
		}
		p.outcome = outcomeOf(ev.Pod)
		if p.finalizer && !owner.BatchJob.HasFinalizer(ev.Pod) {
			s.removed(p)
		}
	}
}

// outcomeOf is the controller's verdict on a pod: how it counts once finished. A
// pod failed with a DisruptionTarget condition counts for nothing, as under a pod
// failure policy's Ignore rule.
func outcomeOf(pod *corev1.Pod) ledger.Outcome {
	switch {
	case pod.Status.Phase == corev1.PodSucceeded:
		return ledger.Succeeded
	case pod.Status.Phase != corev1.PodFailed:
		return 0
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return ledger.NotCounted
		}
	}
	return ledger.Failed
}

// removed checks a finalizer removal as the Cluster applies it: a counted pod may
// lose its finalizer only when the stored status already records it.
func (s *simulation) removed(p *simPod) {
	s.t.Helper()
	u := s.status.UncountedTerminatedPods
	switch {
	case p.outcome == ledger.Failed || (p.outcome == ledger.Succeeded && !s.cfg.indexed):
		if !slices.Contains(u.Succeeded, p.uid) && !slices.Contains(u.Failed, p.uid) && s.counted[p.uid] == 0 {
			s.fatalf("finalizer of %s (%v) removed while the stored status does not record it: %+v", p.uid, p.outcome, u)
		}
	case p.outcome == ledger.Succeeded && s.cfg.indexed:
		if p.index < s.cfg.completions && !s.completed.Has(p.index) {
			s.fatalf("finalizer of %s (index %d) removed before the index was stored", p.uid, p.index)
		}
	}
	p.finalizer = false
}

// persisted checks a stored status write: every UID leaving the uncounted lists is
// added to the matching counter, once.
func (s *simulation) persisted(next batchv1.JobStatus) {
	s.t.Helper()
	old := s.status.UncountedTerminatedPods
	if old == nil {
		old = &batchv1.UncountedTerminatedPods{}
	}
	nu := next.UncountedTerminatedPods
	if nu == nil {
		s.fatalf("status written without uncountedTerminatedPods: %+v", next)
	}
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
	s.completed = s.storedIndexes(next.CompletedIndexes)
	s.status = *next.DeepCopy()
}

// world advances the cluster: new pods, pods finishing, deletions, cache catch-up.
func (s *simulation) world() {
	s.t.Helper()
	for range s.cfg.newPods {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: propNS, Name: fmt.Sprintf("pod-%d", len(s.truth)+1), Finalizers: []string{finalizers.Name}}}
		if s.cfg.indexed {
			ix := s.rng.IntN(s.cfg.completions + 2) // some out of range
			pod.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(ix)}
		}
		if _, err := s.c.AddPod(pod); err != nil {
			s.fatalf("add pod: %v", err)
		}
	}
	k := s.c.Kubelet()
	for _, p := range s.truth {
		if p.outcome == 0 && s.chance(s.cfg.finishPct) {
			var err error
			switch s.rng.IntN(4) {
			case 0, 1:
				err = k.Succeed(propNS, p.name)
			case 2:
				err = k.Fail(propNS, p.name, 1)
			default:
				err = k.Evict(propNS, p.name)
			}
			if err != nil {
				s.fatalf("kubelet: %v", err)
			}
		}
		if p.exists && !p.finalizer && s.chance(s.cfg.deletePct) {
			if err := s.c.RemovePod(propNS, p.name, nil); err != nil {
				s.fatalf("delete: %v", err)
			}
		}
	}
	fresh := sets.New[string]()
	for _, p := range s.truth {
		if s.chance(s.cfg.cacheFresh) {
			fresh.Insert(p.name)
		}
	}
	s.deliver(fresh)
	s.observe()
}

// deliver brings the cache up to date with the Job and with the pods in fresh: it
// delivers their queued events, in order, and leaves the others queued.
func (s *simulation) deliver(fresh sets.Set[string]) {
	s.t.Helper()
	ca := s.c.Cache()
	queued := ca.Pending()
	for i := 0; i < len(queued); {
		if ev := queued[i]; ev.Pod != nil && !fresh.Has(ev.Pod.Name) {
			i++
			continue
		}
		// Every earlier event of the same object was delivered before: this
		// delivers event i alone (the Cache has no handlers to queue more).
		if err := ca.DeliverAt(i); err != nil {
			s.fatalf("deliver: %v", err)
		}
		queued = slices.Delete(queued, i, i+1)
	}
}

// observe drops expectations the cache has caught up with.
func (s *simulation) observe() {
	for uid := range s.pending {
		p := s.byUID[uid]
		if c := s.c.Cache().Pod(propNS, p.name); c == nil || c.UID != uid || !owner.BatchJob.HasFinalizer(c) {
			s.pending.Delete(uid)
		}
	}
}

// restart is a controller crash: expectations are lost and the cache is relisted.
func (s *simulation) restart() {
	s.pending = sets.New[types.UID]()
	s.c.Cache().Reset()
	s.c.Cache().DeliverAll()
}

// sync is one controller sync. It returns false if the controller crashed.
func (s *simulation) sync() bool {
	s.t.Helper()
	job, err := s.c.Jobs().Get(propNS, propJob)
	if err != nil {
		s.fatalf("get job: %v", err)
	}
	pods := s.c.Cache().Pods(propNS)
	status := *job.Status.DeepCopy()
	completed := s.storedIndexes(status.CompletedIndexes)

	s1, err := finalizers.Settle(finalizers.Name, status.UncountedTerminatedPods, pods, s.pending)
	if err != nil {
		s.fatalf("Settle: %v", err)
	}
	s1.ApplyTo(&status)

	var finished []finalizers.FinishedPod
	for _, pod := range pods {
		outcome := outcomeOf(pod)
		if outcome == 0 {
			continue
		}
		f := finalizers.FinishedPod{Pod: pod, Outcome: outcome}
		if s.cfg.indexed && outcome == ledger.Succeeded {
			ix, err := indexes.PodIndex(owner.BatchJob, pod)
			f.Outcome, f.Index = ledger.SucceededIndex, ix
			if err != nil || ix >= s.cfg.completions || completed.Has(ix) {
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
		if job = s.write(job, status, completed); job == nil {
			return false
		}
	}

	for _, pod := range r.RemoveFinalizer {
		patch := finalizers.RemovalPatch(pod, finalizers.Name)
		_, err := s.c.PatchPod(s.ctx, pod.Namespace, pod.Name, patch.Type, patch.Data)
		switch {
		case s.crashed:
			return false
		case err == nil || reconcile.IsPodGone(err):
			s.pending.Insert(pod.UID)
		}
		// Another failure keeps the finalizer for a later sync.
	}

	s2, err := finalizers.Settle(finalizers.Name, &r.Uncounted, pods, s.pending)
	if err != nil {
		s.fatalf("Settle after removals: %v", err)
	}
	if s2.Changed {
		s2.ApplyTo(&status)
		if s.write(job, status, completed) == nil {
			return false
		}
	}
	return true
}

// storedIndexes parses a stored status.completedIndexes.
func (s *simulation) storedIndexes(text string) sets.Set[int] {
	s.t.Helper()
	ivs, err := plainindexes.Parse(text, plainindexes.NoLimit)
	if err != nil {
		s.fatalf("completedIndexes %q: %v", text, err)
	}
	out := sets.New[int]()
	for _, iv := range ivs {
		for ix := iv.First; ix <= iv.Last; ix++ {
			out.Insert(ix)
		}
	}
	return out
}

// write stores status (with completed) through the status subresource and returns
// the Job written, or nil when the controller crashed before the call.
func (s *simulation) write(job *batchv1.Job, status batchv1.JobStatus, completed sets.Set[int]) *batchv1.Job {
	s.t.Helper()
	next := *job // the Cluster keeps a copy of what it stores
	next.Status = status
	next.Status.CompletedIndexes = plainindexes.FromIndexes(completed.UnsortedList()).String()
	written, err := s.c.UpdateJobStatus(s.ctx, &next)
	switch {
	case s.crashed:
		return nil
	case err != nil:
		s.fatalf("status write refused: %v", err)
	}
	return written
}

func (s *simulation) run(rounds int) {
	s.t.Helper()
	for range rounds {
		s.c.ResetCalls() // nothing reads the call log
		s.world()
		if !s.sync() {
			s.restart()
		}
	}
	// Drain: everything finishes, nothing fails any more, the cache keeps up.
	for _, p := range s.truth {
		if p.outcome == 0 {
			if err := s.c.Kubelet().Fail(propNS, p.name, 1); err != nil {
				s.fatalf("drain: %v", err)
			}
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

func (s *simulation) check() {
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
	for _, p := range s.c.ListPods(propNS) {
		if podutil.IsTerminal(p) != (s.byName[p.Name].outcome != 0) {
			s.fatalf("the model of pod %s disagrees with the Cluster: %v, phase %s", p.Name, s.byName[p.Name].outcome, p.Status.Phase)
		}
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
			for seed := range uint64(ledgerSeeds) {
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
