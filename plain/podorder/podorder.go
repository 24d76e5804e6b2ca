package podorder

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
)

// Phase is a pod's phase as the removal order ranks it.
type Phase uint8

const (
	// PhasePending: not started yet. Any phase other than Unknown and Running ranks
	// here too, as upstream (active pods are never Succeeded or Failed).
	PhasePending Phase = iota
	// PhaseUnknown: the node stopped reporting the pod's state.
	PhaseUnknown
	// PhaseRunning: started on its node.
	PhaseRunning
)

// Pod holds the facts of one active pod that the removal order reads. The zero value is
// an unassigned, pending, not-ready pod created at an unknown time (which counts as the
// newest).
type Pod struct {
	// Assigned: the pod is placed on a node (spec.nodeName is set).
	Assigned bool
	// Phase is the pod's phase.
	Phase Phase
	// Ready: the pod is ready (its PodReady condition is True).
	Ready bool
	// ReadySince is when the pod became ready; read only when Ready. The zero time is
	// unknown and counts as the most recent of all.
	ReadySince time.Time
	// Restarts is the highest restart count over the pod's regular containers.
	Restarts int32
	// SidecarRestarts is the highest restart count over its sidecars (restartable init
	// containers).
	SidecarRestarts int32
	// Created is the pod's creation time. The zero time is unknown and counts as the
	// newest of all.
	Created time.Time
	// Namespace, Name and UID identify the pod and break the remaining ties (jobkit's
	// addition): the order is total, so the same pods sort the same way whatever order
	// they arrive in.
	Namespace, Name, UID string
}

// Compare reports the removal order of two active pods: a negative number when a is to
// be removed before b, a positive number when b is to be removed before a, and 0 only
// when a and b have the same namespace, name and UID. See the package documentation for
// the rules. Compare does not modify the pods and does not allocate.
func Compare(a, b *Pod) int {
	ka, kb := keyOf(a), keyOf(b)
	return compareKeys(&ka, &kb)
}

// SortFunc sorts items in place into removal order, where facts returns what the order
// reads of an item: items[0] is the first to remove. facts is called once per item,
// so a caller that derives the facts from a larger object (a Kubernetes pod) pays for
// it n times, not n log n. SortFunc costs O(n log n) and allocates one compact key and
// one pointer per item; it modifies nothing but the order of items.
func SortFunc[T any](items []T, facts func(T) Pod) {
	if len(items) < 2 {
		return
	}
	type entry struct {
		item T
		key  key
	}
	entries := make([]entry, len(items))
	ptrs := make([]*entry, len(items))
	for i, it := range items {
		f := facts(it)
		entries[i] = entry{item: it, key: keyOf(&f)}
		ptrs[i] = &entries[i]
	}
	slices.SortFunc(ptrs, func(a, b *entry) int { return compareKeys(&a.key, &b.key) })
	for i, e := range ptrs {
		items[i] = e.item
	}
}

// stamp is a point in time that orders with plain integer comparison. The zero time
// maps to the largest stamp, so that "later first" puts it first: an unknown time
// counts as the most recent one.
type stamp struct {
	sec  int64
	nsec int32
}

func stampOf(t time.Time) stamp {
	if t.IsZero() {
		return stamp{sec: math.MaxInt64, nsec: math.MaxInt32}
	}
	return stamp{sec: t.Unix(), nsec: int32(t.Nanosecond())}
}

// compareLaterFirst orders a later stamp before an earlier one.
func compareLaterFirst(a, b stamp) int {
	if c := cmp.Compare(b.sec, a.sec); c != 0 {
		return c
	}
	return cmp.Compare(b.nsec, a.nsec)
}

// key is what the removal order reads from a pod, in a form that compares fast.
type key struct {
	namespace, name string
	uid             string
	readyAt         stamp // only meaningful when ready
	createdAt       stamp
	restarts        int32
	sidecarRestarts int32
	// class packs rules 1 to 3 into one number that orders by plain comparison:
	// bit 3 assigned, bits 1-2 the phase rank, bit 0 ready.
	class uint8
}

func (k *key) ready() bool { return k.class&1 != 0 }

func keyOf(p *Pod) key {
	phase := p.Phase
	if phase > PhaseRunning {
		phase = PhasePending
	}
	k := key{
		namespace:       p.Namespace,
		name:            p.Name,
		uid:             p.UID,
		createdAt:       stampOf(p.Created),
		restarts:        p.Restarts,
		sidecarRestarts: p.SidecarRestarts,
		class:           uint8(phase) << 1,
	}
	if p.Assigned {
		k.class |= 1 << 3
	}
	if p.Ready {
		k.class |= 1
		k.readyAt = stampOf(p.ReadySince)
	}
	return k
}

func compareKeys(a, b *key) int {
	if c := cmp.Compare(a.class, b.class); c != 0 {
		return c
	}
	if a.ready() {
		if c := compareLaterFirst(a.readyAt, b.readyAt); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(b.restarts, a.restarts); c != 0 {
		return c
	}
	if c := cmp.Compare(b.sidecarRestarts, a.sidecarRestarts); c != 0 {
		return c
	}
	if c := compareLaterFirst(a.createdAt, b.createdAt); c != 0 {
		return c
	}
	if c := strings.Compare(a.namespace, b.namespace); c != 0 {
		return c
	}
	if c := strings.Compare(a.name, b.name); c != 0 {
		return c
	}
	return strings.Compare(a.uid, b.uid)
}
