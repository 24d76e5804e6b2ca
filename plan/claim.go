package plan

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/podfailurepolicy"
)

// claimed is the outcome of claim.
type claimed struct {
	// infos are the facts of the Job's pods (podInfo.pod: owned, or adopted in this
	// sync, a copy with the tracking finalizer when the orphan lacks it), in the
	// order listed. Later phases only read them.
	infos          []podInfo
	cl             classified // what the pass collected for the later phases
	adopt, release []PodAction
	// restarts are the container restarts of the Pending and Running pods, under
	// restartPolicy OnFailure (0 otherwise).
	restarts int64
	warnings warnings
	touched  uintptr // touch's sum, kept so that its loads are not dropped
}

// claim sorts the listed pods into the Job's own, orphans to adopt and pods to
// release, and reads the facts of each of the Job's pods (factReader) as it takes
// it, so that the listed pods are walked once: the later phases read the facts, and
// go back to a pod only for the few that finished with the tracking finalizer, are
// in the ledger, are created or deleted, or that a failure policy matches. A pod in
// an informer's cache is scattered over many cache lines far from the others, so
// each walk over the pods would cost their cache misses again. It modifies none of
// pods.
func claim(e *env, listed []*corev1.Pod) claimed {
	w, kind := e.wl, e.owner
	var out claimed
	var selector labels.Selector
	if w.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(w.Spec.Selector)
		if err != nil {
			out.warnings.addf("spec.selector: %v: no pod is adopted or released", err)
		} else {
			selector = s
		}
	}
	matches := selectorMatcher(w.Spec.Selector, selector)
	deleting := w.Deleting
	// Never grown, so pointers into it stay valid.
	out.infos = make([]podInfo, 0, len(listed))
	var memos []podfailurepolicy.Result // policyMatch's memos, one allocation
	if e.spec.failurePolicy != nil {
		memos = make([]podfailurepolicy.Result, len(listed))
	}
	var f factReader
	labelKey, indexKey := touchKeys(e)
	touched := uintptr(0)
	cache, uids := e.facts.open(e, len(listed))
	done := false // the loop ran to its end
	if cache != nil {
		defer func() { cache.close(done) }()
		out.cl.reserve(cache.lens)
	}
	var facts [touchBlock]podFacts
	var known [touchBlock]bool
	var unknown [touchBlock]*corev1.Pod
	for start := 0; start < len(listed); start += touchBlock {
		block := listed[start:min(len(listed), start+touchBlock)]
		if cache == nil {
			touched += touch(block, labelKey, indexKey)
		} else {
			// The known pods are not read at all; the others are loaded ahead.
			u := unknown[:0]
			for i, pod := range block {
				if pod == nil {
					continue
				}
				if facts[i], known[i] = cache.lookup(pod); !known[i] {
					u = append(u, pod)
				}
			}
			if len(u) > 0 {
				touched += touch(u, labelKey, indexKey)
			}
		}
		for i, pod := range block {
			if pod == nil {
				continue
			}
			pf := &facts[i]
			switch {
			case cache == nil:
				*pf = readFacts(e, pod, matches, false)
			case !known[i]:
				*pf = readFacts(e, pod, matches, true)
				cache.add(pod, *pf)
			}
			switch pf.ctrl {
			case ctrlOwner:
				if selector != nil && !pf.has(factMatches) && !pf.has(factDeleting) {
					if !deleting { // as upstream, a Job being deleted releases nothing
						out.release = append(out.release, PodAction{Pod: pod, Reason: "labels no longer match the selector"})
					}
					continue
				}
			case ctrlOther:
				continue // another controller's pod
			default:
				if selector == nil || deleting || pf.has(factDeleting) || !pf.has(factMatches) {
					continue
				}
				out.adopt = append(out.adopt, PodAction{Pod: pod, Reason: "orphan matching the selector"})
				if !pf.has(factFinalizer) {
					// Adoption adds the finalizer, so the pod is tracked from this sync
					// on, as upstream does; a copy, since the listed pod is not ours to
					// change. Its facts are the pod's but for the finalizer.
					pod = pod.DeepCopy()
					finalizers.EnsureOnPod(&pod.ObjectMeta, kind.Finalizer)
					adopted := *pf
					adopted.set(factFinalizer, true)
					pf = &adopted
				}
			}
			out.infos = append(out.infos, podInfo{})
			pi := &out.infos[len(out.infos)-1]
			f.read(e, pod, pf, &uids, pi)
			if memos != nil {
				pi.match = &memos[len(out.infos)-1]
			}
			out.cl.add(e, pi)
		}
	}
	done = true
	if cache != nil {
		cache.lens = out.cl.lens()
	}
	out.warnings.add(f.warnings)
	out.restarts = f.restarts
	out.touched = touched
	return out
}

// selectorMatcher returns whether a pod's labels match selector, compiled from sel,
// or nil when selector is nil (sel is nil or did not compile). A selector of matchLabels only, the
// shape of every Job's, is read with one lookup per label, where
// labels.Selector.Matches makes two; any other goes to selector.
func selectorMatcher(sel *metav1.LabelSelector, selector labels.Selector) func(map[string]string) bool {
	if selector == nil {
		return nil
	}
	if len(sel.MatchExpressions) > 0 || len(sel.MatchLabels) == 0 {
		return func(l map[string]string) bool { return selector.Matches(labels.Set(l)) }
	}
	// Compiled without error: each key and value is valid. A slice, since ranging
	// over a map costs more than the lookups.
	type label struct{ key, value string }
	want := make([]label, 0, len(sel.MatchLabels))
	for k, v := range sel.MatchLabels {
		want = append(want, label{k, v})
	}
	return func(l map[string]string) bool {
		for _, w := range want {
			if got, ok := l[w.key]; !ok || got != w.value {
				return false
			}
		}
		return true
	}
}

// touchBlock is how many pods claim loads ahead (touch) before it reads them: their
// memory stays in the processor's caches until read.
const touchBlock = 16

// touchKeys returns the keys touch looks up: the first label the selector
// matches, and the completion index annotation of an Indexed Job (or "").
func touchKeys(e *env) (label, index string) {
	if sel := e.wl.Spec.Selector; sel != nil {
		for k := range sel.MatchLabels {
			if label == "" || k < label {
				label = k // the first the selector tries
			}
		}
		if label == "" && len(sel.MatchExpressions) > 0 {
			label = sel.MatchExpressions[0].Key
		}
	}
	if e.spec.indexed {
		index = e.owner.IndexKey()
	}
	return label, index
}

// touch loads, for each of pods, most of the memory claim and factReader.read will
// read of it, and returns a meaningless sum of what it loaded. A pod in an
// informer's cache is a dozen allocations (the pod, its owner references,
// finalizers, label and annotation maps, each string, the container statuses) far
// from each other and from the other pods; read one pod after the other, each cache
// miss waits for the one before (about 1 µs a pod at 100,000 pods). touch loads a
// block of pods a level of pointers at a time, so that the misses of one level
// overlap, which roughly halves claim's time. It changes nothing and decides
// nothing: without it, Compute returns the same plan, later.
//
//go:noinline
func touch(pods []*corev1.Pod, labelKey, indexKey string) uintptr {
	var sum uintptr
	first := func(s string) uintptr {
		if s == "" {
			return 0
		}
		return uintptr(s[0])
	}
	// Level by level: each loop loads what the one before brought into the cache
	// points to, so the loads of one loop are independent of each other.
	for _, p := range pods {
		if p == nil {
			continue
		}
		sum += uintptr(len(p.OwnerReferences) + len(p.Finalizers) + len(p.Status.Phase) + len(p.UID) +
			len(p.Status.Conditions) + len(p.Status.ContainerStatuses))
		if p.DeletionTimestamp != nil {
			sum++
		}
	}
	for _, p := range pods {
		if p == nil {
			continue
		}
		sum += first(string(p.UID)) + first(string(p.Status.Phase)) + uintptr(len(p.Labels)+len(p.Annotations))
		if refs := p.OwnerReferences; len(refs) > 0 {
			sum += uintptr(len(refs[0].UID))
		}
		if f := p.Finalizers; len(f) > 0 {
			sum += uintptr(len(f[0]))
		}
		if c := p.Status.Conditions; len(c) > 0 {
			sum += uintptr(len(c[0].Type))
		}
		if c := p.Status.ContainerStatuses; len(c) > 0 && c[0].State.Terminated != nil {
			sum++
		}
	}
	for _, p := range pods {
		if p == nil {
			continue
		}
		if refs := p.OwnerReferences; len(refs) > 0 {
			sum += first(string(refs[0].UID))
			if c := refs[0].Controller; c != nil && *c {
				sum++
			}
		}
		if f := p.Finalizers; len(f) > 0 {
			sum += first(f[0])
		}
		if c := p.Status.Conditions; len(c) > 0 {
			sum += first(string(c[0].Type))
		}
		if c := p.Status.ContainerStatuses; len(c) > 0 && c[0].State.Terminated != nil {
			// The exit code and the finish time (backoff.FinishTime) may lie on two
			// cache lines.
			t := c[0].State.Terminated
			sum += uintptr(t.ExitCode)
			if !t.FinishedAt.IsZero() {
				sum++
			}
		}
	}
	if labelKey != "" || indexKey != "" {
		for _, p := range pods {
			if p == nil {
				continue
			}
			sum += first(p.Labels[labelKey])
			if indexKey != "" {
				sum += first(p.Annotations[indexKey])
			}
		}
	}
	return sum
}
