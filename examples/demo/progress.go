package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// progress turns snapshots of one Job and its pods, and the results of its syncs,
// into progress lines: one per change worth telling (a pod created, running,
// finished, counted; the Job's counters and conditions; a backoff wait). Each line
// starts with the time since start. Safe for concurrent use (the cluster mode feeds
// it from informer handlers and workers).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time

	jobSeen    bool
	perIndex   bool // the Job sets backoffLimitPerIndex
	counters   string
	conditions map[string]bool
	finished   bool
	pods       map[types.UID]podView
	backoff    string
	created    int
	done       chan struct{}
	closed     bool
}

type podView struct {
	name        string
	index       string // "" for a NonIndexed Job
	created     time.Time
	failed      time.Time // when it was seen failed
	phase       corev1.PodPhase
	tracked     bool // carries the tracking finalizer
	terminating bool
	deleted     bool
}

func newProgress(w io.Writer, start time.Time) *progress {
	return &progress{
		w: w, start: start, conditions: map[string]bool{}, pods: map[types.UID]podView{}, done: make(chan struct{}),
		counters: "active=0 ready=0 succeeded=0 failed=0", // a new Job's: not worth a line
	}
}

// Done is closed once the Job has finished and none of its pods carries the tracking
// finalizer any more.
func (p *progress) Done() <-chan struct{} { return p.done }

func (p *progress) printf(at time.Time, format string, args ...any) {
	fmt.Fprintf(p.w, "[%3ds] %s\n", int(at.Sub(p.start)/time.Second), fmt.Sprintf(format, args...))
}

// Job records a snapshot of the Job.
func (p *progress) Job(at time.Time, job *batchv1.Job) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.jobSeen {
		p.jobSeen = true
		s := job.Spec
		p.perIndex = s.BackoffLimitPerIndex != nil
		mode := ptr.Deref(s.CompletionMode, batchv1.NonIndexedCompletion)
		extra := ""
		if s.BackoffLimitPerIndex != nil {
			extra = fmt.Sprintf(", backoffLimitPerIndex=%d", *s.BackoffLimitPerIndex)
		}
		p.printf(at, "job %s/%s created: %s, completions=%d, parallelism=%d%s, managedBy=%s",
			job.Namespace, job.Name, mode, ptr.Deref(s.Completions, 1), ptr.Deref(s.Parallelism, 1), extra, plan.JobWorkload(job).Controller())
	}
	st := job.Status
	counters := fmt.Sprintf("active=%d ready=%d succeeded=%d failed=%d", st.Active, ptr.Deref(st.Ready, 0), st.Succeeded, st.Failed)
	if t := ptr.Deref(st.Terminating, 0); t > 0 {
		counters += fmt.Sprintf(" terminating=%d", t)
	}
	if st.CompletedIndexes != "" {
		counters += " completedIndexes=" + st.CompletedIndexes
	}
	if st.FailedIndexes != nil && *st.FailedIndexes != "" {
		counters += " failedIndexes=" + *st.FailedIndexes
	}
	if counters != p.counters {
		p.counters = counters
		p.printf(at, "job: %s", counters)
	}
	for _, c := range st.Conditions {
		key := string(c.Type) + "=" + string(c.Status) + "/" + c.Reason
		if p.conditions[key] {
			continue
		}
		p.conditions[key] = true
		line := fmt.Sprintf("condition %s=%s (%s)", c.Type, c.Status, c.Reason)
		if c.Message != "" {
			line += ": " + c.Message
		}
		p.printf(at, "%s", line)
	}
	if _, done := jobstatus.Finished(&st); done {
		p.finished = true
	}
	p.checkDone(at)
}

// Pod records a snapshot of a pod of the Job; deleted says it is its last state.
func (p *progress) Pod(at time.Time, pod *corev1.Pod, deleted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, seen := p.pods[pod.UID]
	if old.deleted {
		return
	}
	if !seen {
		if deleted {
			return
		}
		p.created++
		p.printf(at, "pod %s created%s", pod.Name, indexOf(pod))
		index := pod.Annotations[batchv1.JobCompletionIndexAnnotation]
		old = podView{name: pod.Name, index: index, created: at, phase: corev1.PodPending, tracked: true}
	}
	cur := old
	cur.phase, cur.tracked, cur.terminating, cur.deleted = pod.Status.Phase, owner.BatchJob.HasFinalizer(pod), pod.DeletionTimestamp != nil, deleted
	if cur.phase == corev1.PodFailed && old.phase != corev1.PodFailed {
		cur.failed = at
	}
	if cur.phase != old.phase {
		switch cur.phase {
		case corev1.PodRunning:
			p.printf(at, "pod %s running", pod.Name)
		case corev1.PodSucceeded:
			p.printf(at, "pod %s succeeded", pod.Name)
		case corev1.PodFailed:
			p.printf(at, "pod %s failed%s", pod.Name, failureOf(pod))
		}
	}
	if cur.terminating && !old.terminating {
		p.printf(at, "pod %s terminating", pod.Name)
	}
	if old.tracked && !cur.tracked {
		p.printf(at, "pod %s counted: tracking finalizer removed%s", pod.Name, p.whyLate(pod.UID, cur, at))
	}
	if deleted {
		p.printf(at, "pod %s deleted", pod.Name)
	}
	p.pods[pod.UID] = cur
	p.checkDone(at)
}

// Sync records the result of a sync of the Job: a new backoff wait, or an error.
func (p *progress) Sync(at time.Time, res reconcile.Result, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.printf(at, "sync error (retried): %v", err)
	}
	reason := ""
	if res.Plan != nil && strings.Contains(res.Plan.RequeueReason, "backoff") {
		reason = res.Plan.RequeueReason
	}
	if reason != "" && reason != p.backoff {
		p.printf(at, "backoff: next pod in %s (%s)", res.Plan.RequeueAfter.Round(time.Second), reason)
	}
	p.backoff = reason
}

// whyLate explains why the failed pod v (uid) is counted only now, when it is: under
// backoffLimitPerIndex the last failed pod of an index keeps its tracking finalizer,
// and stays out of status.failed, until the replacement pod of its index exists,
// because the replacement's failure count is worked out from it. The replacement
// waits out the per-index backoff first, hence the delay. It returns "" when the pod
// is counted for another reason (it succeeded, or its index failed for good).
func (p *progress) whyLate(uid types.UID, v podView, at time.Time) string {
	if !p.perIndex || v.phase != corev1.PodFailed || v.index == "" || v.failed.IsZero() {
		return ""
	}
	var replacement *podView
	for u, o := range p.pods {
		if u != uid && o.index == v.index && !o.created.Before(v.failed) && (replacement == nil || o.created.Before(replacement.created)) {
			replacement = &o
		}
	}
	if replacement == nil {
		return ""
	}
	return fmt.Sprintf(" (%ds after it failed: with backoffLimitPerIndex, the last failed pod of an index is counted"+
		" only once its replacement exists, here %s, created after the per-index backoff; the replacement carries"+
		" the index's failure count forward)", int(at.Sub(v.failed)/time.Second), replacement.name)
}

// checkDone closes done, with a summary line, once the Job has finished and all its
// pods are counted.
func (p *progress) checkDone(at time.Time) {
	if !p.finished || p.closed {
		return
	}
	for _, v := range p.pods {
		if v.tracked && !v.deleted {
			return
		}
	}
	p.printf(at, "done: %d pods created, every pod counted", p.created)
	close(p.done)
	p.closed = true
}

func indexOf(pod *corev1.Pod) string {
	if i, ok := pod.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
		return " (index " + i + ")"
	}
	return ""
}

func failureOf(pod *corev1.Pod) string {
	var parts []string
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			parts = append(parts, fmt.Sprintf("exit code %d", t.ExitCode))
			break
		}
	}
	if pod.Status.Reason != "" {
		parts = append(parts, pod.Status.Reason)
	}
	if slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue
	}) {
		parts = append(parts, "disrupted")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
