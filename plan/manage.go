package plan

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/podorder"
)

// actions are the deletions and creations of a sync (never both).
type actions struct {
	delete []Deletion
	// deletedReady is the number of ready pods among those of delete (all active).
	deletedReady int32
	create       []Creation
	requeue      requeue
	warnings     warnings
}

// deleteActiveForFinish deletes every active pod of a finishing Job (active:
// classified.active), uncapped as upstream (they are all counted in this sync, so
// they must all go); their finalizers stay until they are counted.
func deleteActiveForFinish(kind owner.Kind, active []*podInfo, v *verdict) actions {
	var out actions
	reason := noun(kind) + " finishing: " + v.reason
	for _, pi := range active {
		out.delete = append(out.delete, Deletion{Pod: pi.pod, Reason: reason})
		if pi.ready {
			out.deletedReady++
		}
	}
	return out
}

// manageInput is what manage reads beyond the env.
type manageInput struct {
	cl        *classified // the pods, as the pass classified them
	counts    podCounts   // as observed in the cache
	succeeded int32       // indexOutcomes.succeededCount
	backoff   plainbackoff.Record
	indexes   indexOutcomes
}

// manager builds the actions of manage.
type manager struct {
	*env
	in           manageInput
	out          actions
	podsPerIndex []uint64           // built by digestIndexes: a digest of the UIDs of each index's pods
	ident        *metav1.ObjectMeta // the owner as controller references name it, built once
	// activeIx are the indexes of the active pods that removalOrder keeps, when
	// it sorted them out (Indexed; keptActive), so that createIndexed does not
	// sort them again.
	activeIx   plainindexes.Intervals
	keptActive bool
}

// manage decides the creations or deletions that bring the active pods to what the
// spec wants. It never both creates and deletes in one sync.
func manage(e *env, in manageInput) actions {
	c := &manager{env: e, in: in, ident: e.wl.identity()}
	c.manage()
	return c.out
}

func (c *manager) manage() {
	active := c.in.cl.active
	if c.spec.suspended {
		c.removeActive(c.removalOrder(active, len(active)), noun(c.owner)+" suspended")
		return
	}
	want := c.wantActive()
	rm := c.removalOrder(active, max(0, int(c.in.counts.active)-int(want)))
	if len(rm) > 0 {
		c.removeActive(rm, "")
		return
	}
	occupied := c.in.counts.active
	if c.spec.onlyFailed {
		occupied += c.in.counts.terminating
	}
	diff := int(want) - int(occupied)
	if diff <= 0 {
		return
	}
	if c.spec.perIndex == nil {
		if left := c.in.backoff.Remaining(c.opts.Backoff, c.now); left > 0 {
			c.out.requeue.at(max(left, c.opts.minRequeue()), fmt.Sprintf("pod failure backoff after %d consecutive failure(s)", c.in.backoff.Failures))
			return
		}
	}
	diff = min(diff, c.opts.maxCreates())
	if !c.spec.indexed {
		for range diff {
			c.create(plainindexes.Unknown, nil, "too few active pods")
		}
		return
	}
	c.createIndexed(active, diff)
}

// wantActive is the number of active pods the Job should have (plain/active).
func (c *manager) wantActive() int32 {
	return wantActive(c.spec.completions, c.spec.parallelism, c.spec.suspended, c.in.succeeded, c.in.counts.active)
}

type removal struct {
	pi     *podInfo
	reason string
}

// removalOrder picks at least n active pods to remove: for Indexed Jobs first the
// strays and duplicates, then pods in the upstream removal order.
func (c *manager) removalOrder(active []*podInfo, n int) []removal {
	if n <= 0 && !c.spec.indexed {
		return nil // only Indexed Jobs have strays to remove regardless of n
	}
	var out []removal
	left := active
	if c.spec.indexed {
		// indexes.Strays over the indexes read with the facts: the annotations are
		// not read again.
		ix := make([]int, len(active))
		for i, pi := range active {
			ix[i] = pi.index
		}
		res := plainindexes.Strays(ix, int(*c.spec.completions), func(i, j int) int { return podorder.Compare(active[i].pod, active[j].pod) })
		c.activeIx, c.keptActive = res.Active, true
		for _, s := range res.Remove {
			out = append(out, removal{pi: active[s.Pos], reason: strayReason(s.Index, s.Reason)})
		}
		if len(out) >= n {
			return out
		}
		left = make([]*podInfo, len(res.Kept))
		for k, i := range res.Kept {
			left[k] = active[i]
		}
	}
	if len(out) < n {
		byPod := make(map[*corev1.Pod]*podInfo, len(left))
		pods := make([]*corev1.Pod, len(left))
		for i, pi := range left {
			pods[i] = pi.pod
			byPod[pi.pod] = pi
		}
		left := pods
		podorder.Sort(left)
		for _, pod := range left[:min(len(left), n-len(out))] {
			out = append(out, removal{pi: byPod[pod], reason: "too many active pods"})
		}
	}
	return out
}

func strayReason(index int, reason plainindexes.StrayReason) string {
	switch reason {
	case plainindexes.StrayNoIndex:
		return "no valid completion index"
	case plainindexes.StrayOutOfRange:
		return "index " + strconv.Itoa(index) + " at or above completions"
	default:
		return "duplicate pod for index " + strconv.Itoa(index)
	}
}

// removeActive deletes active pods after removing their finalizer, so they are not
// counted as failed.
func (c *manager) removeActive(rm []removal, reason string) {
	for _, r := range rm[:min(len(rm), c.opts.maxDeletes())] {
		why := r.reason
		if reason != "" {
			why = reason
		}
		c.out.delete = append(c.out.delete, Deletion{Pod: r.pi.pod, RemoveFinalizerFirst: true, Reason: why})
		if r.pi.ready {
			c.out.deletedReady++
		}
	}
}
