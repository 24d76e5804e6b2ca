package reconciletest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
)

// latencyModel is RunLatency's model of the API server, installed on its Cluster:
// an interceptor that gives every write the latency L (reads get it through the
// Cluster's readDelay) and turns the first creations into timeouts, a kubelet that
// runs and succeeds each created pod at once, and the counts of the calls.
type latencyModel struct {
	c       *Cluster
	latency time.Duration

	mu                                sync.Mutex
	timeouts                          int
	lose                              bool
	creates, patches, deletes, status int
	// complete holds when each Job's status first said Complete, by name;
	// tracked the pods that carry the Job tracking finalizer.
	complete map[string]time.Time
	tracked  map[types.UID]bool
	// err is the first error of the kubelet, which ends the run.
	err error

	// hold, when set, says which pods only run: they become Running and Ready when
	// created and never finish on their own (the workers of the figures of several
	// roles); the others move on as below.
	hold func(*corev1.Pod) bool

	// The release scenario (LatencyOptions.Release): pods run without succeeding
	// until the pod of index releaseIndex, released once every index runs, has its
	// replacement.
	pods                   int
	releaseIndex           int // -1: no release
	running                int
	releasedName           string
	releasedAt, replacedAt time.Time
}

// newLatencyModel installs the model of opts on c.
func newLatencyModel(c *Cluster, opts LatencyOptions) *latencyModel {
	m := &latencyModel{c: c, latency: opts.Latency, timeouts: opts.CreateTimeouts, lose: opts.TimeoutsNotStored,
		pods: opts.Pods, releaseIndex: -1, complete: map[string]time.Time{}, tracked: map[types.UID]bool{}}
	if opts.Release {
		m.releaseIndex = opts.Pods / 2
	}
	c.SetInterceptor(m.intercept)
	c.mu.Lock()
	c.readDelay = opts.Latency
	c.onCreate = m.run
	c.mu.Unlock()
	c.OnWrite(m.written)
	return m
}

// intercept is the interceptor: every call takes L; a creation among the first
// CreateTimeouts times out, stored unless TimeoutsNotStored. The status writes
// counted are a Job's and those of the owners of the Cluster's Store.
func (m *latencyModel) intercept(call Call) Outcome {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := Outcome{Delay: m.latency}
	switch call.Op {
	case OpCreatePod:
		m.creates++
		if m.timeouts > 0 {
			m.timeouts--
			out.Err, out.AfterWrite = TimeoutError(), !m.lose
		}
	case OpPatchPod:
		m.patches++
	case OpDeletePod:
		m.deletes++
	case OpUpdateJobStatus, OpUpdateStatus:
		m.status++
	}
	return out
}

// run is the kubelet of the latency runs: a created pod runs and succeeds at once.
// In the release scenario it only runs, until the released index's replacement is
// created: then every pod succeeds.
func (m *latencyModel) run(pod *corev1.Pod) {
	k := m.c.Kubelet()
	err := k.Run(pod.Namespace, pod.Name)
	if err == nil {
		err = m.next(pod)
	}
	if err != nil {
		m.mu.Lock()
		m.err = cmp.Or(m.err, fmt.Errorf("latency kubelet: %w", err))
		m.mu.Unlock()
	}
}

// releasePatch relabels a pod so that it no longer matches its Job's selector, as
// another actor would: the Job's controller then releases it.
var releasePatch = []byte(`{"metadata":{"labels":{"` + labelControllerUID + `":"released"}}}`)

// next moves the running pod on: a held pod becomes Ready and stays; another
// succeeds, or, in the release scenario, waits, is released, or (the replacement)
// ends the wait of every pod.
func (m *latencyModel) next(pod *corev1.Pod) error {
	k := m.c.Kubelet()
	if m.hold != nil && m.hold(pod) {
		return k.SetReady(pod.Namespace, pod.Name, true)
	}
	if m.releaseIndex < 0 {
		return k.Succeed(pod.Namespace, pod.Name)
	}
	index := pod.Annotations[batchv1.JobCompletionIndexAnnotation]
	m.mu.Lock()
	var release, replaced bool
	switch {
	case !m.replacedAt.IsZero():
		m.mu.Unlock()
		return k.Succeed(pod.Namespace, pod.Name)
	case !m.releasedAt.IsZero():
		replaced = index == strconv.Itoa(m.releaseIndex)
		if replaced {
			m.replacedAt = time.Now()
		}
	default:
		if index == strconv.Itoa(m.releaseIndex) {
			m.releasedName = pod.Name
		}
		m.running++
		if release = m.running == m.pods; release {
			m.releasedAt = time.Now()
		}
	}
	name := m.releasedName
	m.mu.Unlock()
	if release {
		_, err := m.c.PatchPodAs(pod.Namespace, name, releasePatch)
		return err
	}
	if !replaced {
		return nil
	}
	for _, p := range m.c.ListPods(pod.Namespace) {
		if p.Name != name && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			if err := k.Succeed(p.Namespace, p.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// replacement returns the time from the release to the replacement's creation,
// zero without a replacement.
func (m *latencyModel) replacement() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.releasedAt.IsZero() || m.replacedAt.IsZero() {
		return 0
	}
	return m.replacedAt.Sub(m.releasedAt)
}

// failed returns the kubelet's first error.
func (m *latencyModel) failed() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// written notes when a Job's status first says Complete, and which pods carry
// the tracking finalizer: the end of the run.
func (m *latencyModel) written(ev WatchEvent) {
	if p := ev.Pod; p != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		if ev.Type != watch.Deleted && owner.BatchJob.HasFinalizer(p) {
			m.tracked[p.UID] = true
		} else {
			delete(m.tracked, p.UID)
		}
		return
	}
	job, ok := ev.Owner.(*batchv1.Job)
	if !ok || !jobstatus.IsConditionTrue(job.Status.Conditions, batchv1.JobComplete) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.complete[job.Name]; !ok {
		m.complete[job.Name] = time.Now()
	}
}

// isComplete reports whether the Job named name has been Complete.
func (m *latencyModel) isComplete(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.complete[name]
	return ok
}

// finished reports whether jobs Jobs are Complete and no pod carries the
// tracking finalizer.
func (m *latencyModel) finished(jobs int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.complete) >= jobs && len(m.tracked) == 0
}

// completionTimes returns the time from start to each Complete Job of names,
// sorted.
func (m *latencyModel) completionTimes(names []string, start time.Time) []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []time.Duration
	for _, n := range names {
		if at, ok := m.complete[n]; ok {
			out = append(out, at.Sub(start))
		}
	}
	slices.Sort(out)
	return out
}

type callCounts struct{ creates, patches, deletes, status int }

func (m *latencyModel) snapshot() callCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	return callCounts{m.creates, m.patches, m.deletes, m.status}
}

// fill copies the counts into r; the conflicts come from the call log, which
// holds what each caller got.
func (m *latencyModel) fill(r *LatencyResult) {
	calls := m.c.Calls()
	m.mu.Lock()
	defer m.mu.Unlock()
	r.Creates, r.Patches, r.Deletes, r.StatusWrites = m.creates, m.patches, m.deletes, m.status
	r.Writes = m.creates + m.patches + m.deletes + m.status
	for _, call := range calls {
		if apierrors.IsConflict(call.Err) {
			r.Conflicts++
		}
	}
}

// startInformer starts the informer of a latency run: a goroutine, counted in wg,
// that delivers each watch event of c's Cache when it is due (its clock set to the
// bubble's time first), until ctx ends.
func startInformer(ctx context.Context, c *Cluster, wg *sync.WaitGroup) {
	wrote := make(chan struct{}, 1)
	c.OnWrite(func(WatchEvent) {
		select {
		case wrote <- struct{}{}:
		default:
		}
	})
	clk, cache := c.Clock(), c.Cache()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			clk.SetTime(time.Now())
			cache.DeliverDue()
			next, ok := cache.NextDue()
			var timer <-chan time.Time
			if ok {
				timer = time.After(time.Until(next))
			}
			select {
			case <-ctx.Done():
				return
			case <-wrote:
			case <-timer:
			}
		}
	}()
}
