package plan

import (
	"math/bits"
	"reflect"

	corev1 "k8s.io/api/core/v1"
)

// factTable maps pods, by pointer, to their facts: an open-addressing hash table
// with linear probing, at most half full, of 32-byte slots (a pod's pointer and
// its facts, in one cache line). Its lookups are a few instructions with one
// cache miss, which the processor can overlap from one pod to the next (a Go
// map's lookup is a call and a chain of dependent loads). The zero value is
// empty.
type factTable struct {
	slots []factSlot
	n     int   // slots in use
	shift uint8 // 64 - log2(len(keys))
	// peak is the most pods held since the slots were made: kept when fewer
	// pods come, unless far fewer.
	peak int
	drop []*corev1.Pod // keep's list, kept for the next call
}

// factSlot is a slot of a factTable: a pod and its facts, or free (pod nil).
type factSlot struct {
	pod   *corev1.Pod
	facts podFacts
}

// home is the slot where a pod's probe starts: its address, hashed by a
// multiplication (Fibonacci hashing), which spreads the addresses of objects
// of one size evenly. The garbage collector does not move heap objects, and
// the slot holds the pod, so its address stays its own while it is in the
// table.
func (t *factTable) home(pod *corev1.Pod) int {
	const golden = 0x9e3779b97f4a7c15
	return int((uint64(reflect.ValueOf(pod).Pointer()) * golden) >> t.shift)
}

// find returns the slot of pod and true, or the free slot where it would go and
// false. The table has a free slot (it is never full).
func (t *factTable) find(pod *corev1.Pod) (int, bool) {
	if len(t.slots) == 0 {
		return -1, false
	}
	mask := len(t.slots) - 1
	for i := t.home(pod); ; i = (i + 1) & mask {
		switch t.slots[i].pod {
		case pod:
			return i, true
		case nil:
			return i, false
		}
	}
}

// insert adds pod, which the table does not hold, with its facts.
func (t *factTable) insert(pod *corev1.Pod, pf podFacts) {
	if 2*(t.n+1) > len(t.slots) {
		t.resize(2 * (t.n + 1))
	}
	i, _ := t.find(pod)
	t.slots[i] = factSlot{pod, pf}
	t.n++
	t.peak = max(t.peak, t.n)
}

// resize makes at least want slots (a power of two, at least 64) and moves the
// entries there.
func (t *factTable) resize(want int) {
	old := t.slots
	size := 1 << bits.Len(uint(max(64, want)-1))
	t.slots = make([]factSlot, size)
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	t.n, t.peak = 0, 0
	for _, s := range old {
		if s.pod != nil {
			j, _ := t.find(s.pod)
			t.slots[j] = s
			t.n++
		}
	}
	t.peak = t.n
}

// keep drops the entries whose facts keep says no to, then gives the table
// fewer slots when it holds far fewer pods than it did.
func (t *factTable) keep(keep func(*podFacts) bool) {
	drop := t.drop[:0]
	for i := range t.slots {
		if s := &t.slots[i]; s.pod != nil && !keep(&s.facts) {
			drop = append(drop, s.pod)
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
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].pod != nil; j = (j + 1) & mask {
		// The entry at j may fill the hole at i unless its home lies cyclically
		// in (i, j]: then a probe for it would stop at the hole.
		if h := t.home(t.slots[j].pod); (j-h)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = factSlot{}
	t.n--
}
