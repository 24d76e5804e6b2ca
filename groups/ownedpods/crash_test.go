package ownedpods_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

// crashRun drives one owner through random syncs that crash: a status write
// that does not happen, pod calls of which only some are made. It checks after
// every step what the one-write protocol promises.
type crashRun struct {
	*cluster
	r *rand.Rand
	// counted holds, per role, the UIDs that left the ledger (were counted).
	counted map[string]sets.Set[types.UID]
	// attempt is the restart-attempt label of every pod ever created.
	attempt map[types.UID]string
	why     string
	// stale holds pods as they were before a finalizer removal the next sync's
	// cache does not show yet (PendingFinalizerRemovals).
	stale map[string]*corev1.Pod
	// freed counts, per role and phase, the finished pods whose finalizer went.
	freed map[string]map[corev1.PodPhase]int32
}

func (cr *crashRun) fail(format string, args ...any) {
	cr.t.Helper()
	cr.t.Fatalf("sync %d: "+format, append([]any{cr.syncs}, args...)...)
}

func ledger(j *batchv1.JobStatus) (succeeded, failed sets.Set[types.UID]) {
	succeeded, failed = sets.New[types.UID](), sets.New[types.UID]()
	if u := j.UncountedTerminatedPods; u != nil {
		succeeded.Insert(u.Succeeded...)
		failed.Insert(u.Failed...)
	}
	return succeeded, failed
}

// checkWrite checks a status write against the status it replaces.
func (cr *crashRun) checkWrite(prev, next *ownedpods.Status, w *ownedpods.Workload) {
	cr.t.Helper()
	if next.Restarts < prev.Restarts || next.RestartsCountTowardsMax < prev.RestartsCountTowardsMax {
		cr.fail("restarts went back: %d/%d -> %d/%d", prev.Restarts, prev.RestartsCountTowardsMax, next.Restarts, next.RestartsCountTowardsMax)
	}
	for i, n := range next.Roles {
		var p ownedpods.RoleStatus
		if i < len(prev.Roles) {
			p = prev.Roles[i]
		}
		if n.Succeeded < p.Succeeded || n.Failed < p.Failed || n.Attempt < p.Attempt {
			cr.fail("role %s went back: %+v -> %+v", n.Name, p, n)
		}
		if n.Attempt == p.Attempt && (n.Job.Succeeded < p.Job.Succeeded || n.Job.Failed < p.Job.Failed) {
			cr.fail("role %s counters went back within attempt %d", n.Name, n.Attempt)
		}
		ps, pf := ledger(&p.Job)
		ns, nf := ledger(&n.Job)
		leftFailed := pf.Difference(nf)
		left := ps.Difference(ns).Union(leftFailed)
		if n.Attempt != p.Attempt && ns.Len()+nf.Len() > 0 {
			cr.fail("role %s starts attempt %d with a ledger", n.Name, n.Attempt)
		}
		// A pod recorded as failed (it ran when its role failed) whose finalizer
		// stayed, and which has since succeeded, counts as a success (plan's
		// doc, differences from upstream).
		recounted := 0
		for uid := range leftFailed {
			if pod := cr.byUID(uid); pod != nil && pod.Status.Phase == corev1.PodSucceeded && hasFinalizer(pod) {
				recounted++
			}
		}
		if got, want := n.Failed-p.Failed, int32(leftFailed.Len()-recounted); got != want {
			var desc []string
			for uid := range leftFailed {
				st := "gone"
				for _, pod := range cr.pods {
					if pod.UID == uid {
						st = fmt.Sprintf("%s phase=%s deleting=%v fin=%v", pod.Name, pod.Status.Phase, pod.DeletionTimestamp != nil, hasFinalizer(pod))
					}
				}
				desc = append(desc, string(uid)+": "+st)
			}
			cr.fail("role %s counted %d failures, %d left the ledger: %v; prev %+v next %+v", n.Name, got, want, desc, p.Job, n.Job)
		}
		if !isIndexed(w, n.Name) {
			if got, want := n.Succeeded-p.Succeeded, int32(ps.Difference(ns).Len()); got != want {
				cr.fail("role %s counted %d successes, %d left the ledger", n.Name, got, want)
			}
		}
		c := cr.counted[n.Name]
		if again := c.Intersection(ns.Union(nf)); again.Len() > 0 {
			cr.fail("role %s: %v counted, then in the ledger again", n.Name, sets.List(again))
		}
		c.Insert(left.UnsortedList()...)
		for uid := range ns.Union(nf) {
			if a := cr.attempt[uid]; a != fmt.Sprint(n.Attempt) {
				cr.fail("role %s at attempt %d records pod %s of attempt %q", n.Name, n.Attempt, uid, a)
			}
		}
	}
}

func (cr *crashRun) byUID(uid types.UID) *corev1.Pod {
	for _, p := range cr.pods {
		if p.UID == uid {
			return p
		}
	}
	return nil
}

func isIndexed(w *ownedpods.Workload, role string) bool {
	for _, r := range w.Roles {
		if r.Name == role {
			return r.Spec.CompletionMode != nil && *r.Spec.CompletionMode == batchv1.IndexedCompletion
		}
	}
	return false
}

// checkRemoval checks that a pod of a role's current attempt loses its
// finalizer only once it is recorded, or while it still runs (stopped,
// uncounted).
func (cr *crashRun) checkRemoval(name string) {
	cr.t.Helper()
	p, ok := cr.pods[name]
	if !ok || !hasFinalizer(p) {
		return
	}
	finished := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	if !finished {
		return
	}
	for _, rs := range cr.w.Status.Roles {
		if rs.Name != p.Labels[plaingroup.LabelRoleName] || attemptOf(p) != fmt.Sprint(rs.Attempt) {
			continue
		}
		s, f := ledger(&rs.Job)
		if ix, ok := p.Labels[kind.IndexKey()]; ok && p.Status.Phase == corev1.PodSucceeded {
			// An Indexed role records a success as its completed index.
			done, _ := plainindexes.Parse(rs.Job.CompletedIndexes, 1<<20)
			if n, err := strconv.Atoi(ix); err == nil && done.Has(n) {
				continue
			}
		}
		if !s.Has(p.UID) && !f.Has(p.UID) {
			cr.fail("finished pod %s loses its finalizer before it is recorded (%s); status %+v", name, cr.why, rs)
		}
	}
}

// noteRemoval counts the finished pods whose finalizer goes, by role and
// phase: what the role totals must come to.
func (cr *crashRun) noteRemoval(name string) {
	p, ok := cr.pods[name]
	if !ok || !hasFinalizer(p) {
		return
	}
	role := p.Labels[plaingroup.LabelRoleName]
	if cr.freed[role] == nil {
		cr.freed[role] = map[corev1.PodPhase]int32{}
	}
	for _, rs := range cr.w.Status.Roles {
		if rs.Name != role || attemptOf(p) != fmt.Sprint(rs.Attempt) {
			continue
		}
		// A pod recorded by its role's ledger counts as recorded: a pod still
		// running when its role fails counts as failed.
		switch s, f := ledger(&rs.Job); {
		case s.Has(p.UID):
			cr.freed[role][corev1.PodSucceeded]++
			return
		case f.Has(p.UID):
			cr.freed[role][corev1.PodFailed]++
			return
		}
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		cr.freed[role][p.Status.Phase]++
	}
}

func hasFinalizer(p *corev1.Pod) bool {
	for _, f := range p.Finalizers {
		if f == kind.Finalizer {
			return true
		}
	}
	return false
}

// checkPods checks that no index has two live pods.
func (cr *crashRun) checkPods() {
	cr.t.Helper()
	live := map[string]string{}
	attempts := map[string]*corev1.Pod{} // a live pod of each role and attempt
	blocking := cr.w.FailurePolicy.RestartStrategy == plaingroup.BlockingRecreate
	for _, name := range sortedNames(cr.pods) {
		p := cr.pods[name]
		// A pod being deleted runs until the kubelet stops it: no pod of a new
		// attempt starts beside it.
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		role := p.Labels[plaingroup.LabelRoleName]
		scope := role
		if blocking {
			scope = "" // no pod of a new attempt while one of an old attempt runs
		}
		for key, other := range attempts {
			if strings.HasPrefix(key, scope+"/") && attemptOf(other) != attemptOf(p) {
				cr.fail("pods %s (attempt %s) and %s (attempt %s) run together", other.Name, attemptOf(other), p.Name, attemptOf(p))
			}
		}
		attempts[scope+"/"+attemptOf(p)] = p
		ix, ok := p.Labels[kind.IndexKey()]
		if !ok || p.DeletionTimestamp != nil {
			// Within an attempt, a replacement may start while the pod it
			// replaces terminates (podReplacementPolicy TerminatingOrFailed, as
			// a Job's).
			continue
		}
		key := role + "/" + ix
		if other, dup := live[key]; dup {
			cr.fail("index %s has two live pods: %s and %s", key, other, p.Name)
		}
		live[key] = p.Name
	}
}

// step runs one sync that may crash, then the kubelet.
func (cr *crashRun) step(crashes bool, kubelet func(*corev1.Pod)) *ownedpods.Plan {
	cr.t.Helper()
	in := cr.input()
	in.ExpectationsSatisfied = !crashes || cr.r.IntN(10) > 0
	if len(cr.stale) > 0 {
		// The cache does not show the last removals yet: the pods as they were,
		// their removals pending.
		in.PendingFinalizerRemovals = sets.New[types.UID]()
		for k, p := range in.Pods {
			if old, ok := cr.stale[p.Name]; ok {
				in.Pods[k] = old
			}
		}
		for name, old := range cr.stale {
			if _, listed := cr.pods[name]; !listed {
				in.Pods = append(in.Pods, old)
			}
			in.PendingFinalizerRemovals.Insert(old.UID)
		}
		clear(cr.stale)
	}
	p, err := ownedpods.Compute(in)
	if err != nil {
		cr.fail("Compute: %v", err)
	}
	cr.syncs++
	written := !crashes || cr.r.IntN(10) > 0
	if written && p.Skip == "" && p.StatusChanged {
		prev := cr.w.Status
		cr.checkWrite(&prev, &p.Status, cr.w)
		cr.applyStatus(p)
	}
	do := func() bool { return !crashes || cr.r.IntN(10) < 7 }
	if written {
		for _, a := range shuffled(cr.r, p.RemoveFinalizers) {
			if do() {
				cr.why = "remove: " + a.Reason
				cr.checkRemoval(a.Pod.Name)
				cr.noteRemoval(a.Pod.Name)
				if pod, ok := cr.pods[a.Pod.Name]; ok && crashes && cr.r.IntN(3) == 0 {
					cr.stale[pod.Name] = pod.DeepCopy()
				}
				cr.removeFinalizer(a.Pod.Name)
			}
		}
		for _, d := range shuffled(cr.r, p.Delete) {
			if do() {
				if d.RemoveFinalizerFirst {
					cr.why = "delete: " + d.Reason
					cr.checkRemoval(d.Pod.Name)
					cr.noteRemoval(d.Pod.Name)
				}
				cr.deletePod(d)
			}
		}
		for _, c := range p.Create {
			if do() {
				cr.create(c.Pod)
			}
		}
		for _, pod := range cr.pods {
			if _, seen := cr.attempt[pod.UID]; !seen {
				cr.attempt[pod.UID] = attemptOf(pod)
			}
		}
	}
	for _, name := range sortedNames(cr.pods) {
		kubelet(cr.pods[name])
	}
	cr.checkPods()
	cr.now = cr.now.Add(time.Second)
	if p.RequeueAfter > 0 {
		cr.now = cr.now.Add(p.RequeueAfter)
	}
	return p
}

func sortedNames(pods map[string]*corev1.Pod) []string {
	var out []string
	for n := range pods {
		out = append(out, n)
	}
	return sortStrings(out)
}

// randomKubelet moves pods along: pending pods start, running pods are ready,
// some succeed and a few fail.
func (cr *crashRun) randomKubelet(p *corev1.Pod) {
	if p.DeletionTimestamp != nil {
		if cr.r.IntN(3) == 0 {
			cr.terminate(p)
		}
		return
	}
	switch p.Status.Phase {
	case corev1.PodPending:
		if cr.r.IntN(2) == 0 {
			cr.run(p)
		}
	case corev1.PodRunning:
		switch n := cr.r.IntN(100); {
		case n < 4:
			cr.finish(p, 1)
		case n < 12:
			cr.finish(p, 0)
		}
	}
}

// finalKubelet lets every pod start and the launcher succeed.
func (cr *crashRun) finalKubelet(p *corev1.Pod) {
	if p.DeletionTimestamp != nil {
		cr.terminate(p)
		return
	}
	switch {
	case p.Status.Phase == corev1.PodPending:
		cr.run(p)
	case p.Status.Phase == corev1.PodRunning && p.Labels[plaingroup.LabelRoleName] == "launcher":
		cr.finish(p, 0)
	}
}

func TestComputeCrashSafety(t *testing.T) {
	seeds := 150
	if testing.Short() {
		seeds = 20
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		w := trainingJob(int32(1+r.IntN(4)), int32(r.IntN(3)))
		if r.IntN(2) == 0 {
			w.FailurePolicy.RestartStrategy = plaingroup.BlockingRecreate
		}
		if r.IntN(2) == 0 {
			w.Roles[1].DependsOn = nil
		}
		c := newCluster(t, w)
		c.linger = true
		cr := &crashRun{cluster: c, r: r,
			counted: map[string]sets.Set[types.UID]{"worker": sets.New[types.UID](), "launcher": sets.New[types.UID]()},
			attempt: map[types.UID]string{}, freed: map[string]map[corev1.PodPhase]int32{}, stale: map[string]*corev1.Pod{}}
		for range 150 {
			if cr.w.Status.TerminalState != "" {
				break
			}
			if r.IntN(50) == 0 {
				cr.w.Suspend = !cr.w.Suspend
			}
			cr.step(true, cr.randomKubelet)
		}
		cr.w.Suspend = false
		deleting := r.IntN(5) == 0
		cr.w.Deleting = deleting
		var p *ownedpods.Plan
		quiet := 0
		for range 200 {
			p = cr.step(false, cr.finalKubelet)
			if p.Skip != "" {
				break
			}
			if !p.StatusChanged && len(p.RemoveFinalizers)+len(p.Delete)+len(p.Create) == 0 && (deleting || cr.w.Status.TerminalState != "") {
				quiet++
				if quiet > 2 {
					break
				}
			}
		}
		st := cr.w.Status
		if !deleting && st.TerminalState == "" {
			t.Fatalf("seed %d: not finished after %d syncs: %+v; last %s", seed, cr.syncs, st, summary(p))
		}
		for _, pod := range cr.pods {
			if hasFinalizer(pod) {
				t.Fatalf("seed %d: pod %s keeps the finalizer after the group finished", seed, pod.Name)
			}
			if !deleting && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
				t.Fatalf("seed %d: pod %s runs after the group finished", seed, pod.Name)
			}
		}
		for _, rs := range st.Roles {
			if got, want := [2]int32{rs.Succeeded, rs.Failed}, [2]int32{cr.freed[rs.Name][corev1.PodSucceeded], cr.freed[rs.Name][corev1.PodFailed]}; got != want {
				t.Fatalf("seed %d: role %s counted %v (succeeded, failed), %v pods finished with the finalizer", seed, rs.Name, got, want)
			}
			if s, f := ledger(&rs.Job); s.Len()+f.Len() > 0 {
				t.Fatalf("seed %d: role %s left uncounted pods: %v %v", seed, rs.Name, sets.List(s), sets.List(f))
			}
		}
		if st.Restarts > w.FailurePolicy.MaxRestarts {
			t.Fatalf("seed %d: %d restarts, at most %d", seed, st.Restarts, w.FailurePolicy.MaxRestarts)
		}
	}
}
