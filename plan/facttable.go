package plan

import (
	"math/bits"
	"reflect"

	corev1 "k8s.io/api/core/v1"
)

// factTable maps pods, by pointer, to their facts: an open-addressing hash table
// with linear probing, at most half full. Its lookups are a few instructions
// with one cache miss for the key and one for the facts beside it, which the
// processor can overlap from one pod to the next (a Go map's lookup is a call
// and a chain of dependent loads); its facts hold no pointer. The zero value is
// empty.
type factTable struct {
	keys  []*corev1.Pod // nil: a free slot
	facts []podFacts    // the facts of keys[i]
	n     int           // slots in use
	shift uint8         // 64 - log2(len(keys))
	// peak is the most pods held since the slots were made: kept when fewer
	// pods come, unless far fewer.
	peak int
	drop []*corev1.Pod // keep's list, kept for the next call
}

// home is the slot where a pod's probe starts: its address, hashed by a
// multiplication (Fibonacci hashing), which spreads the addresses of objects
// of one size evenly. The garbage collector does not move heap objects, and
// keys holds the pod, so its address stays its own while it is in the table.
func (t *factTable) home(pod *corev1.Pod) int {
	const golden = 0x9e3779b97f4a7c15
	return int((uint64(reflect.ValueOf(pod).Pointer()) * golden) >> t.shift)
}

// find returns the slot of pod and true, or the free slot where it would go and
// false. The table has a free slot (it is never full).
func (t *factTable) find(pod *corev1.Pod) (int, bool) {
	if len(t.keys) == 0 {
		return -1, false
	}
	mask := len(t.keys) - 1
	for i := t.home(pod); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case pod:
			return i, true
		case nil:
			return i, false
		}
	}
}

// insert adds pod, which the table does not hold, with its facts.
func (t *factTable) insert(pod *corev1.Pod, pf podFacts) {
	if 2*(t.n+1) > len(t.keys) {
		t.resize(2 * (t.n + 1))
	}
	i, _ := t.find(pod)
	t.keys[i], t.facts[i] = pod, pf
	t.n++
	t.peak = max(t.peak, t.n)
}

// resize makes at least want slots (a power of two, at least 64) and moves the
// entries there.
func (t *factTable) resize(want int) {
	keys, facts := t.keys, t.facts
	size := 1 << bits.Len(uint(max(64, want)-1))
	t.keys, t.facts = make([]*corev1.Pod, size), make([]podFacts, size)
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	t.n, t.peak = 0, 0
	for i, pod := range keys {
		if pod != nil {
			j, _ := t.find(pod)
			t.keys[j], t.facts[j] = pod, facts[i]
			t.n++
		}
	}
	t.peak = t.n
}

// keep drops the entries whose facts keep says no to, then gives the table
// fewer slots when it holds far fewer pods than it did.
func (t *factTable) keep(keep func(*podFacts) bool) {
	drop := t.drop[:0]
	for i, pod := range t.keys {
		if pod != nil && !keep(&t.facts[i]) {
			drop = append(drop, pod)
		}
	}
	for _, pod := range drop {
		t.remove(pod)
	}
	clear(drop) // holds no pod
	t.drop = drop[:0]
	if t.peak > 1024 && t.n < t.peak/4 {
		t.resize(4 * t.n)
	}
}

// remove drops pod, which the table holds: the entries after it in its run move
// back where a probe finds them (backward-shift deletion).
func (t *factTable) remove(pod *corev1.Pod) {
	i, ok := t.find(pod)
	if !ok {
		return
	}
	mask := len(t.keys) - 1
	for j := (i + 1) & mask; t.keys[j] != nil; j = (j + 1) & mask {
		// The entry at j may fill the hole at i unless its home lies cyclically
		// in (i, j]: then a probe for it would stop at the hole.
		if h := t.home(t.keys[j]); (j-h)&mask >= (j-i)&mask {
			t.keys[i], t.facts[i] = t.keys[j], t.facts[j]
			i = j
		}
	}
	t.keys[i], t.facts[i] = nil, podFacts{}
	t.n--
}
