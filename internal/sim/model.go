package sim

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// The reference model. It is built from the cluster's write log (every stored
// version of every object, in order) and shares no code with the packages it
// checks: it parses index strings and annotations, matches pod failure policies and
// reads conditions itself.
//
// A pod is counted by its state at the write that removes its tracking finalizer
// (the controller's patch carries the pod's resourceVersion, so that state is the
// one the controller decided on):
//
//   - Succeeded: a success (Indexed: its index, when below completions);
//   - Failed: a failure, unless an Ignore rule of the pod failure policy matches it;
//   - being deleted before finishing, with podReplacementPolicy not Failed: a failure;
//   - still running while the Job has FailureTarget (the Job fails and stops it): a
//     failure;
//   - otherwise (scale-down, suspend, the success criteria met, a pod without a
//     valid index): not counted.

// outcome is what the model decided for a pod.
type outcome uint8

const (
	tracked      outcome = iota // carries the finalizer (or never had it and is not the Job's)
	wonSucceeded                // counted as a success
	wonFailed                   // counted as a failure
	notCounted                  // lost its finalizer without being counted
)

func (o outcome) String() string {
	return [...]string{"tracked", "succeeded", "failed", "not counted"}[o]
}

// podState is the model's record of one pod.
type podState struct {
	ordinal   int
	uid       types.UID
	name      string
	last      *corev1.Pod // the latest stored version (shared with the cluster; read only)
	index     int         // completion index, -1 when none
	finalizer bool
	outcome   outcome
	gone      bool
	adopted   bool // an orphan the controller adopted, not a pod it created
	released  bool // the controller released it: no longer the owner's
}

type model struct {
	w   *world
	job *batchv1.Job // latest stored version
	uid types.UID

	pods  map[types.UID]*podState
	order []*podState

	succeeded, failed int          // NonIndexed successes; failures (both modes)
	succeededIx       map[int]bool // Indexed: succeeded indexes below completions
	failures          map[int]int  // Indexed: failures counted against backoffLimitPerIndex
	failIndex         map[int]bool // Indexed: a FailIndex rule matched a failure
	dup               map[int]bool // Indexed: the failure count of the index became uncertain
	maxCompletions    int          // the largest spec.completions the Job had
	// view holds, during a sync, the resourceVersion of each pod in the
	// controller's cache when the sync started: what the controller saw.
	view map[types.UID]string

	inS, inF map[types.UID]bool    // the stored uncountedTerminatedPods
	counted  map[types.UID]outcome // UIDs that left an uncounted list once counted, and as what

	deleted             bool // the owner was deleted
	adoptions, releases int
}

func newModel(w *world) *model {
	return &model{
		w:           w,
		pods:        map[types.UID]*podState{},
		succeededIx: map[int]bool{},
		failures:    map[int]int{},
		failIndex:   map[int]bool{},
		dup:         map[int]bool{},
		inS:         map[types.UID]bool{},
		inF:         map[types.UID]bool{},
		counted:     map[types.UID]outcome{},
	}
}

// observe is the cluster's write hook. It runs under the cluster's lock.
func (m *model) observe(ev reconciletest.WatchEvent) {
	switch {
	case ev.Owner != nil:
		switch o := ev.Owner.(type) {
		case *batchv1.Job:
			m.observeJob(ev.Type, o)
		case *reconciletest.Task:
			m.observeJob(ev.Type, jobView(o))
		}
		return
	}
	if m.job == nil {
		return
	}
	pod := ev.Pod
	ps := m.pods[pod.UID]
	if !ownedBy(pod, m.uid) {
		// A pod of the owner that loses its controller reference was released.
		switch {
		case ps == nil:
		case ev.Type == watch.Deleted:
			ps.gone = true // its name may be a new pod's
		case !ps.released:
			m.release(ps, pod)
		}
		return
	}
	if ps == nil {
		m.checkOwner(pod)
		ps = &podState{ordinal: len(m.order) + 1, uid: pod.UID, name: pod.Name, index: podIndex(pod), finalizer: m.hasFinalizer(pod)}
		m.pods[pod.UID] = ps
		m.order = append(m.order, ps)
		if ev.Type == watch.Added {
			m.created(ps, pod)
		} else {
			m.adopt(ps, pod)
		}
		ps.last = pod
		return
	}
	if ps.released {
		return
	}
	prev := ps.last
	ps.last = pod
	if ev.Type == watch.Deleted {
		ps.gone = true
	}
	if ps.finalizer && !m.hasFinalizer(pod) {
		ps.finalizer = false
		if m.deleted {
			// The owner is gone: the orphan cleanup removes the finalizer and
			// nothing is counted any more.
			ps.outcome = notCounted
			return
		}
		m.classify(ps, prev)
	}
}

// created checks a new pod.
func (m *model) created(ps *podState, pod *corev1.Pod) {
	if m.deleted && !(m.w.inSync && m.w.syncOwner == m.uid) {
		m.w.violate(InvCreatedAfterDelete, "pod #%d %s created for the deleted %v", ps.ordinal, pod.Name, m.w.kind)
	}
	if !m.indexed() || ps.index < 0 {
		return
	}
	for _, o := range m.order[:len(m.order)-1] {
		if o.index == ps.index && !o.gone && !o.released && o.last != nil && isActive(o.last) {
			m.w.violate(InvTwoLivePods, "pod #%d %s created for index %d, which holds pod #%d %s (%s)",
				ps.ordinal, pod.Name, ps.index, o.ordinal, o.name, describePod(o.last))
			return
		}
	}
	if done := parseIndexes(m.job.Status.CompletedIndexes); done[ps.index] {
		m.w.violate(InvSucceededIndexCreated, "pod #%d %s created for index %d, already in completedIndexes %q",
			ps.ordinal, pod.Name, ps.index, m.job.Status.CompletedIndexes)
	}
	// The chain of failure counts of an index is only predictable while its pods
	// follow one another: note indexes where a new pod joins an active one or more
	// than one earlier failure.
	active, failedLike := 0, 0
	for _, o := range m.order[:len(m.order)-1] {
		if o.index != ps.index || !o.finalizer || o.released || o.last == nil {
			continue
		}
		switch {
		case isActive(o.last):
			active++
		case o.last.Status.Phase == corev1.PodFailed || (o.last.DeletionTimestamp != nil && !isTerminal(o.last)):
			failedLike++
		}
	}
	if active > 0 || failedLike > 1 {
		m.dup[ps.index] = true
	}
	// A pod created while the controller's cache showed an earlier pod of the
	// index in an older state (or not at all) was created blind: its failure
	// count cannot follow the chain.
	if m.view != nil {
		for _, o := range m.order[:len(m.order)-1] {
			if o.index == ps.index && o.finalizer && !o.gone && o.last != nil && m.view[o.uid] != o.last.ResourceVersion {
				m.dup[ps.index] = true
			}
		}
	}
}

func (m *model) podName(uid types.UID) string {
	if ps := m.pods[uid]; ps != nil {
		return fmt.Sprintf("#%d %s", ps.ordinal, ps.name)
	}
	return string(uid)
}

func (m *model) indexed() bool {
	return m.job != nil && m.job.Spec.CompletionMode != nil && *m.job.Spec.CompletionMode == batchv1.IndexedCompletion
}

// quiet says whether nothing is in flight: no uncounted UID, and no finished or
// deleted pod still carrying the finalizer. The counters must then equal the model.
func (m *model) quiet() bool {
	if u := m.job.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		return false
	}
	for _, ps := range m.order {
		if ps.finalizer && !ps.gone && !ps.released && !isActive(ps.last) {
			return false
		}
	}
	return true
}

// checkQuiet compares the Job's counters with the model when the Job is quiet.
func (m *model) checkQuiet() {
	if m.job == nil || m.deleted || !m.quiet() {
		return
	}
	st := &m.job.Status
	if int(st.Failed) != m.failed {
		m.w.violate(InvCount, "quiet Job: status.failed is %d, the model counts %d", st.Failed, m.failed)
	}
	if !m.indexed() {
		if int(st.Succeeded) != m.succeeded {
			m.w.violate(InvCount, "quiet Job: status.succeeded is %d, the model counts %d", st.Succeeded, m.succeeded)
		}
		return
	}
	completions := int(deref32(m.job.Spec.Completions, 0))
	got := parseIndexes(st.CompletedIndexes)
	var want []int
	for ix := range m.succeededIx {
		if ix < completions {
			want = append(want, ix)
		}
	}
	slices.Sort(want)
	if g := formatIndexes(got, completions); g != formatIndexes(toSet(want), completions) {
		m.w.violate(InvCount, "quiet Job: completedIndexes is %q, the model has %q", g, formatIndexes(toSet(want), completions))
	}
	if m.job.Spec.BackoffLimitPerIndex == nil {
		return
	}
	failed := parseIndexes(deref(st.FailedIndexes))
	for ix := range completions {
		switch want := m.indexFails(ix) && !m.succeededIx[ix]; {
		case m.dup[ix]:
			if failed[ix] && m.failures[ix] == 0 && !m.failIndex[ix] {
				m.w.violate(InvCount, "quiet Job: failedIndexes %q holds index %d, which never failed", deref(st.FailedIndexes), ix)
			}
		case failed[ix] != want:
			m.w.violate(InvCount, "quiet Job: failedIndexes %q, index %d: got %v, the model says %v (%d failures, backoffLimitPerIndex %d, FailIndex %v)",
				deref(st.FailedIndexes), ix, failed[ix], want, m.failures[ix], *m.job.Spec.BackoffLimitPerIndex, m.failIndex[ix])
		}
	}
}

// activeCount returns the active pods of the Job and whether an index has two.
func (m *model) activeCount() (active int, dupIndex int) {
	dupIndex = -1
	seen := map[int]bool{}
	for _, ps := range m.order {
		if ps.gone || ps.released || !isActive(ps.last) {
			continue
		}
		active++
		if ps.index >= 0 && m.indexed() {
			if seen[ps.index] && dupIndex < 0 {
				dupIndex = ps.index
			}
			seen[ps.index] = true
		}
	}
	return active, dupIndex
}

// anySucceeded says whether a pod of the Job has succeeded.
func (m *model) anySucceeded() bool {
	for _, ps := range m.order {
		if ps.outcome == wonSucceeded || (!ps.released && ps.last != nil && ps.last.Status.Phase == corev1.PodSucceeded) {
			return true
		}
	}
	return false
}
