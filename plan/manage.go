package plan

import (
	"fmt"
	"hash/fnv"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/owner"
	plainactive "github.com/jobkit/jobkit/plain/active"
	"github.com/jobkit/jobkit/podorder"
)

// manage decides the creations or deletions that bring the active pods to what the
// spec wants. It never both creates and deletes in one sync.
func (c *computation) manage() {
	var active []*podInfo
	for _, pi := range c.pods {
		if pi.active {
			active = append(active, pi)
		}
	}
	if c.spec.suspended {
		c.removeActive(c.removalOrder(active, len(active)), "job suspended")
		return
	}
	want := c.wantActive()
	rm := c.removalOrder(active, max(0, int(c.active)-int(want)))
	if len(rm) > 0 {
		c.removeActive(rm, "")
		return
	}
	occupied := c.active
	if c.spec.onlyFailed {
		occupied += c.terminating
	}
	diff := int(want) - int(occupied)
	if diff <= 0 {
		return
	}
	if c.spec.perIndex == nil {
		if left := backoff.RemainingForRecord(c.plan.Backoff, c.opts.Backoff, c.now); left > 0 {
			c.requeue(max(left, c.opts.minRequeue()), fmt.Sprintf("pod failure backoff after %d consecutive failure(s)", c.plan.Backoff.Failures))
			return
		}
	}
	diff = min(diff, c.opts.maxCreates())
	if !c.spec.indexed {
		for range diff {
			c.create(indexes.Unknown, nil, "too few active pods")
		}
		return
	}
	c.createIndexed(active, diff)
}

// wantActive is the number of active pods the Job should have (plain/active).
func (c *computation) wantActive() int32 {
	completions := plainactive.NoCompletions
	if c.spec.completions != nil {
		completions = int(*c.spec.completions)
	}
	return int32(plainactive.Want(plainactive.Job{
		Completions: completions,
		Parallelism: int(c.spec.parallelism),
		Succeeded:   int(c.succeeded),
		Active:      int(c.active),
		Suspended:   c.spec.suspended,
	}))
}

type removal struct {
	pi     *podInfo
	reason string
}

// removalOrder picks at least n active pods to remove: for Indexed Jobs first the
// strays and duplicates, then pods in the upstream removal order.
func (c *computation) removalOrder(active []*podInfo, n int) []removal {
	if n <= 0 && !c.spec.indexed {
		return nil // only Indexed Jobs have strays to remove regardless of n
	}
	byPod := make(map[*corev1.Pod]*podInfo, len(active))
	pods := make([]*corev1.Pod, len(active))
	for i, pi := range active {
		pods[i] = pi.pod
		byPod[pi.pod] = pi
	}
	var out []removal
	left := pods
	if c.spec.indexed {
		res := indexes.Strays(pods, int(*c.spec.completions))
		for _, s := range res.Remove {
			out = append(out, removal{pi: byPod[s.Pod], reason: strayReason(s)})
		}
		left = res.Kept
	}
	if len(out) < n {
		left = append([]*corev1.Pod(nil), left...)
		podorder.Sort(left)
		for _, pod := range left[:min(len(left), n-len(out))] {
			out = append(out, removal{pi: byPod[pod], reason: "too many active pods"})
		}
	}
	return out
}

func strayReason(s indexes.Stray) string {
	switch s.Reason {
	case indexes.StrayNoIndex:
		return "no valid completion index"
	case indexes.StrayOutOfRange:
		return "index " + strconv.Itoa(s.Index) + " at or above completions"
	default:
		return "duplicate pod for index " + strconv.Itoa(s.Index)
	}
}

// removeActive deletes active pods after removing their finalizer, so they are not
// counted as failed.
func (c *computation) removeActive(rm []removal, reason string) {
	for _, r := range rm[:min(len(rm), c.opts.maxDeletes())] {
		why := r.reason
		if reason != "" {
			why = reason
		}
		c.plan.Delete = append(c.plan.Delete, Deletion{Pod: r.pi.pod, RemoveFinalizerFirst: true, Reason: why})
		c.active--
		c.terminating++
		if r.pi.ready {
			c.ready--
		}
	}
}

// createIndexed picks the indexes to create, honouring per-index backoff.
func (c *computation) createIndexed(active []*podInfo, diff int) {
	completions := int(*c.spec.completions)
	activeIx := make([]int, 0, len(active))
	for _, pi := range active {
		if pi.index >= 0 {
			activeIx = append(activeIx, pi.index)
		}
	}
	exclude := []indexes.Intervals{c.succeededIx, indexes.FromIndexes(activeIx), c.failedIx}
	if c.spec.onlyFailed {
		var term []int
		for _, pi := range c.pods {
			if pi.terminating && pi.index >= 0 {
				term = append(term, pi.index)
			}
		}
		exclude = append(exclude, indexes.FromIndexes(term))
	}
	candidates := indexes.FirstPending(completions, diff, exclude...)
	if c.spec.perIndex == nil {
		for _, ix := range candidates {
			c.create(ix, nil, "index pending")
		}
		return
	}
	var wait []int
	var minLeft int64 = -1
	for _, ix := range candidates {
		prev := c.delayed[ix]
		var prevPod *corev1.Pod
		if prev != nil {
			prevPod = prev.pod
		}
		left, err := backoff.IndexRemaining(prevPod, c.opts.Backoff, c.now)
		if err != nil {
			c.warn("%v", err)
		}
		if left > 0 {
			wait = append(wait, ix)
			if minLeft < 0 || int64(left) < minLeft {
				minLeft = int64(left)
			}
			continue
		}
		reason := "index pending"
		if prev != nil {
			reason = "replaces failed pod " + prevPod.Name
		}
		c.create(ix, prev, reason)
	}
	if len(wait) > 0 && minLeft > 0 {
		// Upstream requeues only when no index can start now and relies on the events
		// of the new pods otherwise; requeueing for the earliest waiting index in
		// both cases costs nothing and does not depend on those events.
		c.requeue(max(durationOf(minLeft), c.opts.minRequeue()), fmt.Sprintf("per-index backoff of %d indexes", len(wait)))
	}
}

// create builds one pod from the template.
func (c *computation) create(index int, replaced *podInfo, reason string) {
	job := c.job
	tmpl := &job.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    job.Namespace,
			GenerateName: job.Name + "-",
			Labels:       copyMap(tmpl.Labels),
			Annotations:  copyMap(tmpl.Annotations),
			Finalizers:   append([]string(nil), tmpl.Finalizers...),
			OwnerReferences: []metav1.OwnerReference{
				owner.BatchJob.NewControllerRef(job),
			},
		},
	}
	tmpl.Spec.DeepCopyInto(&pod.Spec)
	finalizers.EnsureOnPod(&pod.ObjectMeta)
	if index >= 0 {
		indexes.ShapePod(pod, job.Name, index)
		var fc indexes.FailureCount
		if c.spec.perIndex != nil {
			var prev *corev1.Pod
			ignored := false
			if replaced != nil {
				prev = replaced.pod
				ignored = c.spec.failurePolicy != nil && !c.policyMatch(replaced).CountsTowardBackoff
			}
			// A bad annotation of prev was already reported with its backoff.
			fc, _ = indexes.ReplacementFailureCount(prev, ignored)
			indexes.SetFailureCountAnnotations(pod, fc)
		}
		// The name is decided here rather than generated by the API server: the same
		// decision on the next sync (the cache not showing the pod yet) gives the same
		// name, so a creation that timed out after the pod was stored is answered
		// AlreadyExists when sent again, and an index never gets two pods.
		pod.Name = indexes.PodName(job.Name, string(job.UID), index, strconv.FormatUint(c.podsOfIndex(index), 36))
	}
	c.plan.Create = append(c.plan.Create, Creation{Pod: pod, Index: index, Reason: reason})
	c.active++
}

// podsOfIndex is a digest of the set of UIDs of the Job's pods of index in the
// cache, whatever their state: the same until a pod of the index appears or goes.
// A pod created under a name derived from it is in the cache, and changes it, from
// its first event until it is gone from the API server, where its name is free again;
// before its first event, the digest, and the name, are those of its creation.
func (c *computation) podsOfIndex(index int) uint64 {
	if c.podsPerIndex == nil {
		// Indexes are below completions (at most 100,000 for an Indexed Job): one
		// slice, where a map would allocate per thousand pods.
		c.podsPerIndex = make([]uint64, int(ptr.Deref(c.spec.completions, 0)))
		for _, pi := range c.pods {
			if pi.validIndex && pi.index < len(c.podsPerIndex) {
				h := fnv.New64a()
				h.Write([]byte(pi.pod.UID))
				c.podsPerIndex[pi.index] += h.Sum64() // order-free: a sum of the UIDs' hashes
			}
		}
	}
	if index >= len(c.podsPerIndex) {
		return 0
	}
	return c.podsPerIndex[index]
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
