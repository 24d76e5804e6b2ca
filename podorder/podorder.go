package podorder

import (
	"cmp"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/internal/podutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Compare reports the removal order of two active pods: a negative number when a is to
// be removed before b, a positive number when b is to be removed before a, and 0 only
// when a and b have the same namespace, name and UID. See the package documentation for
// the rules. Compare does not modify the pods; both must be non-nil.
//
// Compare has the signature that slices.SortFunc and slices.SortStableFunc expect.
func Compare(a, b *corev1.Pod) int {
	ka, kb := keyOf(a), keyOf(b)
	return compareKeys(&ka, &kb)
}

// Sort sorts pods in place into removal order: pods[0] is the first to remove and the
// last pod is the one to keep longest. It reorders the slice but never modifies a pod.
// Every element must be non-nil. Sort costs O(n log n) and allocates one key per pod,
// which makes it several times faster than slices.SortFunc(pods, Compare) on large
// slices.
func Sort(pods []*corev1.Pod) {
	if len(pods) < 2 {
		return
	}
	keys := make([]key, len(pods))
	ptrs := make([]*key, len(pods))
	for i, p := range pods {
		keys[i] = keyOf(p)
		ptrs[i] = &keys[i]
	}
	slices.SortFunc(ptrs, compareKeys)
	for i, k := range ptrs {
		pods[i] = k.pod
	}
}

// stamp is a point in time that orders with plain integer comparison. The zero
// metav1.Time maps to the largest stamp, so that "later first" puts it first: the
// package treats an unknown time as the most recent one.
type stamp struct {
	sec  int64
	nsec int32
}

func stampOf(t metav1.Time) stamp {
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

// key is what the removal order reads from a pod, computed once per pod by Sort.
type key struct {
	pod             *corev1.Pod
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

// phaseRank gives Pending < Unknown < Running; other phases rank as Pending, as in
// upstream, where a missing map entry reads as 0.
func phaseRank(p corev1.PodPhase) uint8 {
	switch p {
	case corev1.PodUnknown:
		return 1
	case corev1.PodRunning:
		return 2
	}
	return 0
}

func keyOf(p *corev1.Pod) key {
	k := key{
		pod:       p,
		namespace: p.Namespace,
		name:      p.Name,
		uid:       string(p.UID),
		createdAt: stampOf(p.CreationTimestamp),
		class:     phaseRank(p.Status.Phase) << 1,
	}
	if p.Spec.NodeName != "" {
		k.class |= 1 << 3
	}
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type == corev1.PodReady {
			if c.Status == corev1.ConditionTrue {
				k.class |= 1
				k.readyAt = stampOf(c.LastTransitionTime)
			}
			break
		}
	}
	for i := range p.Status.ContainerStatuses {
		k.restarts = max(k.restarts, p.Status.ContainerStatuses[i].RestartCount)
	}
	for i := range p.Status.InitContainerStatuses {
		s := &p.Status.InitContainerStatuses[i]
		if s.RestartCount > k.sidecarRestarts && podutil.IsSidecarStatus(p, i, s.Name) {
			k.sidecarRestarts = s.RestartCount
		}
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
