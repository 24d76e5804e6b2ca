package plan

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/owner"
)

// FactCache remembers, from one sync of an owner to the next, what Compute read of
// each of its pods, keyed by the pod's pointer: a pod listed again costs one
// lookup of its pointer instead of the reads of its controller reference, labels,
// annotations, finalizers and status, each a cache miss for a pod scattered in an
// informer's memory. Give the same FactCache to every Compute of one owner
// (Input.Facts); package reconcile keeps one per owner key when
// Config.ImmutablePods is set. The zero value is ready to use.
//
// The contract: a pod passed to Compute with a FactCache is never changed in
// place, by anyone, while the FactCache may be used again: a new version of a pod
// is a new object. That is how an informer's cache holds pods (client-go stores
// each version it decodes as a new object and hands out its pointers, which must
// not be written), and not how a test that edits a pod between two syncs does;
// such callers give no FactCache, and Compute reads every pod. A pod changed in
// place under a FactCache is planned from the facts of its old version.
//
// What a fact depends on besides the pod (the owner's UID, its selector, its
// completion mode, the owner kind's finalizer and index annotation) is checked
// once per Compute, and every fact is dropped when it changed. The cache holds
// the facts of the pods of the last Compute only: a pod that is not listed again
// is dropped at the end of the Compute that did not list it, so the cache keeps
// no pod alive that the informer dropped, past the owner's next sync. It costs 64
// to 128 bytes per pod (a hash table of 32-byte slots, a quarter to half full),
// made again smaller when the owner keeps under a quarter of its pods.
//
// A FactCache is safe for concurrent use: a Compute that finds it in use by
// another reads its pods without it.
type FactCache struct {
	mu sync.Mutex
	// key is what the facts depend on besides the pods (valid when keyed).
	key   factKey
	keyed bool
	// The facts of the pods of the last Compute, stamped with gen, the number of
	// the Compute that last listed them.
	table factTable
	gen   uint16 // wraps: after a Compute every fact has the stamp gen
	// marked counts the facts stamped by the running Compute.
	marked int
	// seed hashes the UIDs; uids holds the hashes of the running Compute's sets
	// of UIDs (uidSets).
	seed maphash.Seed
	uids map[uint16]struct{}
	// lens are the lengths of the last Compute's lists (classified), which the
	// next one reserves: no list grows by copies in a steady sync.
	lens listLens
}

// factKey is what podFacts depend on besides the pod.
type factKey struct {
	uid      types.UID
	kind     owner.Kind
	indexed  bool
	selector *metav1.LabelSelector // a copy; nil when the owner has none
}

func (k factKey) equal(o factKey) bool {
	return k.uid == o.uid && k.kind == o.kind && k.indexed == o.indexed && equalSelectors(k.selector, o.selector)
}

func equalSelectors(a, b *metav1.LabelSelector) bool {
	if a == nil || b == nil {
		return a == b
	}
	return maps.Equal(a.MatchLabels, b.MatchLabels) &&
		slices.EqualFunc(a.MatchExpressions, b.MatchExpressions, func(x, y metav1.LabelSelectorRequirement) bool {
			return x.Key == y.Key && x.Operator == y.Operator && slices.Equal(x.Values, y.Values)
		})
}

// open locks c for one Compute of e listing n pods and returns it with the sets
// of UIDs of the sync, or nil when c is nil or in use. The facts kept under
// another key are dropped.
func (c *FactCache) open(e *env, n int) (*FactCache, uidSets) {
	uids := uidSets{any: e.pending.Len()+e.uncountedSucceeded.Len()+e.uncountedFailed.Len() > 0}
	if c == nil || !c.mu.TryLock() {
		return nil, uids
	}
	key := factKey{uid: e.wl.UID, kind: e.owner, indexed: e.spec.indexed, selector: e.wl.Spec.Selector}
	if !c.keyed || !c.key.equal(key) {
		key.selector = key.selector.DeepCopy()
		c.key, c.keyed = key, true
		c.table = factTable{}
		c.seed = maphash.MakeSeed()
	}
	if c.table.n == 0 && 2*n > len(c.table.slots) {
		c.table.resize(2 * n) // the first Compute: no growth on the way
	}
	c.gen, c.marked = c.gen+1, 0
	if c.uids == nil {
		c.uids = map[uint16]struct{}{}
	}
	clear(c.uids)
	for _, set := range [...]sets.Set[types.UID]{e.pending, e.uncountedSucceeded, e.uncountedFailed} {
		for uid := range set {
			c.uids[c.hashUID(uid)] = struct{}{}
		}
	}
	uids.hashes = c.uids
	return c, uids
}

func (c *FactCache) hashUID(uid types.UID) uint16 { return uint16(maphash.String(c.seed, string(uid))) }

// lookup returns the facts of pod known from an earlier Compute, marked as
// listed in this one.
func (c *FactCache) lookup(pod *corev1.Pod) (podFacts, bool) {
	i, ok := c.table.find(pod)
	if !ok {
		return podFacts{}, false
	}
	pf := &c.table.slots[i].facts
	if pf.stamp != c.gen {
		pf.stamp = c.gen
		c.marked++
	}
	return *pf, true
}

// add keeps pf, the facts of pod read in this Compute, which lookup did not
// know.
func (c *FactCache) add(pod *corev1.Pod, pf podFacts) {
	pf.uidHash = c.hashUID(pod.UID)
	pf.set(factHashed, true)
	pf.stamp = c.gen
	c.table.insert(pod, pf)
	c.marked++
}

// close ends the Compute open began: the facts of the pods it did not list are
// dropped, and c is unlocked. A Compute that did not finish (done false: it
// panicked) may leave facts it did not read in full: all are dropped.
func (c *FactCache) close(done bool) {
	defer c.mu.Unlock()
	if !done {
		c.table, c.keyed = factTable{}, false
		return
	}
	if c.table.n > c.marked {
		c.table.keep(func(pf *podFacts) bool { return pf.stamp == c.gen })
	}
}
