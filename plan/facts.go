package plan

import (
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/internal/podutil"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

// podFacts are what claim and factReader read of one pod: what the pod alone
// decides, given the owner's UID, selector, kind and completion mode (factKey).
// Everything else of a podInfo is derived from them and the sync (read). A
// FactCache keeps them from one sync to the next: 24 bytes and no pointer, so
// that a pod's pointer and its facts fill half a cache line, the garbage
// collector has nothing to scan in the facts and a write of them needs no write
// barrier.
type podFacts struct {
	// finish is backoff.FinishTime in Unix nanoseconds, when finishIn is not
	// finishUnread; otherwise factReader.read reads it where a rule needs it.
	finish   int64
	restarts int32 // the container restarts of a Pending or Running pod (at most MaxInt32)
	index    int32 // completion index; plainindexes.Unknown when none or bad
	// uidHash is a hash of the UID (FactCache.hashUID), when has(factHashed): the
	// UID of a pod of a FactCache is read only when its hash is among those of
	// the sync's sets of UIDs (or collides with one, about one pod in 65,536 per
	// UID in the sets).
	uidHash  uint16
	stamp    uint16 // the FactCache's generation that last listed the pod
	ctrl     podController
	finishIn finishZone
	flags    factFlags
}

// factFlags are the yes-or-no facts of a pod.
type factFlags uint8

const (
	factMatches   factFlags = 1 << iota // the owner has a selector and the pod's labels match it
	factBadIndex                        // Indexed and the annotation is missing or bad
	factFinalizer                       // carries the owner kind's tracking finalizer
	factSucceeded                       // phase Succeeded
	factFailed                          // phase Failed
	factDeleting                        // deletionTimestamp set
	factReady                           // the Ready condition is True
	factHashed                          // uidHash is set
)

func (pf *podFacts) has(f factFlags) bool { return pf.flags&f != 0 }

func (pf *podFacts) set(f factFlags, yes bool) {
	if yes {
		pf.flags |= f
	} else {
		pf.flags &^= f
	}
}

// uidSets says which pods' UIDs a sync's sets of UIDs (env.pending,
// uncountedSucceeded and uncountedFailed) may hold, so that the UID of a pod is
// read only when they may: a pod's UID is a string of its own, another cache miss.
type uidSets struct {
	any bool // some set is not empty
	// hashes are the hashes of the sets' UIDs (FactCache.hashUID), with a
	// FactCache; nil otherwise.
	hashes map[uint16]struct{}
}

// has says whether the sets may hold the UID of the pod whose facts are pf.
func (u *uidSets) has(pf *podFacts) bool {
	if !u.any {
		return false
	}
	if u.hashes == nil || !pf.has(factHashed) {
		return true
	}
	_, ok := u.hashes[pf.uidHash]
	return ok
}

// finishZone says how podFacts.finish becomes the time.Time FinishTime returned.
type finishZone uint8

const (
	finishUnread finishZone = iota // not kept: read it from the pod
	finishLocal                    // time.Unix(0, finish), in time.Local
	finishUTC                      // the same, in UTC
)

// keepFinish sets pf.finish to t when it can be turned back into a time equal
// to t (==: the same instant, location and no monotonic reading), as the times
// decoded from the API are.
func (pf *podFacts) keepFinish(t time.Time) {
	n := t.UnixNano()
	switch {
	case time.Unix(0, n) == t:
		pf.finish, pf.finishIn = n, finishLocal
	case time.Unix(0, n).UTC() == t:
		pf.finish, pf.finishIn = n, finishUTC
	}
}

// finishTime returns the finish time kept by keepFinish, or reads it from pod.
func (pf *podFacts) finishTime(pod *corev1.Pod) time.Time {
	switch pf.finishIn {
	case finishLocal:
		return time.Unix(0, pf.finish)
	case finishUTC:
		return time.Unix(0, pf.finish).UTC()
	}
	return backoff.FinishTime(pod)
}

// podController says whose pod it is, by its controller reference.
type podController uint8

const (
	ctrlOrphan podController = iota // no controller reference
	ctrlOwner                       // the owner's (reference with its UID)
	ctrlOther                       // another controller's
)

// readFacts reads the facts of pod (match: the owner's selector, nil when it
// has none). whole reads every fact, for a FactCache; otherwise the finish time
// is left to factReader.read, which reads it where a rule needs it, and the
// restarts are read only under restartPolicy OnFailure.
func readFacts(e *env, pod *corev1.Pod, match func(map[string]string) bool, whole bool) podFacts {
	f := podFacts{index: plainindexes.Unknown}
	switch ref := metav1.GetControllerOfNoCopy(pod); { // no copy: three allocations per pod saved
	case ref == nil:
		f.ctrl = ctrlOrphan
	case ref.UID == e.wl.UID:
		f.ctrl = ctrlOwner
	default:
		f.ctrl = ctrlOther
		return f // never read: another controller's pod is skipped
	}
	f.set(factDeleting, pod.DeletionTimestamp != nil)
	if match != nil {
		f.set(factMatches, match(pod.Labels))
	}
	if e.spec.indexed {
		if ix, err := indexes.PodIndex(e.owner, pod); err == nil {
			f.index = int32(ix) // at most MaxInt32 (parseIndexAnnotation)
		} else {
			f.set(factBadIndex, true)
		}
	}
	f.set(factFinalizer, e.owner.HasFinalizer(pod))
	phase := pod.Status.Phase
	f.set(factSucceeded, phase == corev1.PodSucceeded)
	f.set(factFailed, phase == corev1.PodFailed)
	f.set(factReady, phase != corev1.PodSucceeded && phase != corev1.PodFailed && !f.has(factDeleting) && podutil.IsReady(pod))
	if (whole || e.spec.onFailure) && (phase == corev1.PodRunning || phase == corev1.PodPending) {
		var n int64
		for _, s := range pod.Status.InitContainerStatuses {
			n += int64(s.RestartCount)
		}
		for _, s := range pod.Status.ContainerStatuses {
			n += int64(s.RestartCount)
		}
		// Saturated, which decides the same: the backoff limit is at most MaxInt32
		// (pastBackoffLimitOnFailure).
		f.restarts = int32(min(n, math.MaxInt32))
	}
	if whole {
		f.keepFinish(backoff.FinishTime(pod))
	}
	return f
}

// factReader derives the podInfo of the pods, one at a time.
type factReader struct {
	badIndexes int // index warnings so far (at most 5 are reported)
	warnings   warnings
	// restarts sums the container restarts of Pending and Running pods, read only
	// under restartPolicy OnFailure (pastBackoffLimitOnFailure).
	restarts int64
}

// read fills in pi with the facts of pod, pf; uids are the UIDs of the sync's
// sets of UIDs (see uidSets).
func (f *factReader) read(e *env, pod *corev1.Pod, pf *podFacts, uids *uidSets, pi *podInfo) {
	pi.pod = pod
	pi.index = plainindexes.Unknown
	if e.spec.indexed {
		if !pf.has(factBadIndex) {
			pi.index = int(pf.index)
			pi.validIndex = pi.index < int(deref(e.spec.completions))
		} else if f.badIndexes < 5 {
			f.badIndexes++
			if _, err := indexes.PodIndex(e.owner, pod); err != nil {
				f.warnings.addf("%v", err)
			}
		}
	}
	pi.finalizer = pf.has(factFinalizer)
	if pi.finalizer {
		pi.tracked = true
		// Lookups in empty sets read not the UID; with a FactCache, neither do
		// those of a UID whose hash none of the sets holds.
		if uids.has(pf) {
			pi.tracked = !e.pending.Has(pod.UID)
			pi.inUncountedSucceeded = e.uncountedSucceeded.Has(pod.UID)
			pi.inUncountedFailed = e.uncountedFailed.Has(pod.UID)
		}
	}
	pi.succeeded = pf.has(factSucceeded)
	phaseFailed := pf.has(factFailed)
	terminal := pi.succeeded || phaseFailed
	deleting := pf.has(factDeleting)
	pi.active = !terminal && !deleting
	pi.terminating = !terminal && deleting
	pi.ready = pi.active && pf.has(factReady)
	pi.failed = phaseFailed || (!e.spec.onlyFailed && deleting && !pi.succeeded)
	// The pods the backoff record is rebuilt from (Indexed: with a valid index;
	// pods without one are strays, they do not tell the Job's history).
	if !e.spec.indexed || pi.validIndex {
		pi.backoffSuccess = pi.succeeded
		// A pod being deleted without the finalizer is mostly one this controller
		// stopped (scale-down, suspend, a finishing Job), which is no failure: a
		// resumed Job must not wait out a backoff for it. A counted failure deleted
		// by someone else is left out too; it leaves the API at the end of its grace
		// period anyway.
		pi.backoffFailure = !pi.succeeded && !(deleting && !pi.finalizer) &&
			(phaseFailed || (!e.spec.onlyFailed && deleting))
	}
	if pi.backoffSuccess || pi.backoffFailure || (pi.tracked && pi.failed) {
		pi.finish = pf.finishTime(pod)
	}
	if e.spec.onFailure {
		f.restarts += int64(pf.restarts)
	}
}
