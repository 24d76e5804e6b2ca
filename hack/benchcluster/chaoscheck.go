package main

import (
	"context"
	"fmt"
	"io"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/jobstatus"
)

// watch starts the watches of the run's pods and Jobs that feed the history. A watch
// that ends resumes from the last resourceVersion it delivered. A restarted
// kube-apiserver's watch cache starts at the current revision and answers an older
// one with 410 Gone: the watch then lists again, and the history takes the listed
// objects in (history.resyncPods says when a missed version could change a count).
func (c *chaos) watch(ctx context.Context) error {
	sel := metav1.ListOptions{LabelSelector: labelChaos}
	pods := c.cs.CoreV1().Pods(c.namespace)
	jobs := c.cs.BatchV1().Jobs(c.namespace)
	listPods := func(ctx context.Context) (string, error) {
		l, err := pods.List(ctx, sel)
		if err == nil {
			c.hist.resyncPods(l.Items)
		}
		return resourceVersionOf(l, err)
	}
	listJobs := func(ctx context.Context) (string, error) {
		l, err := jobs.List(ctx, sel)
		if err == nil {
			c.hist.resyncJobs(l.Items)
		}
		return resourceVersionOf(l, err)
	}
	podRV, err := listPods(ctx)
	if err != nil {
		return err
	}
	jobRV, err := listJobs(ctx)
	if err != nil {
		return err
	}
	go c.follow(ctx, "pods", podRV, pods.Watch, listPods, func(t watch.EventType, o runtime.Object) bool {
		p, ok := o.(*corev1.Pod)
		if ok {
			c.hist.observePod(t, p)
		}
		return ok
	})
	go c.follow(ctx, "Jobs", jobRV, jobs.Watch, listJobs, func(t watch.EventType, o runtime.Object) bool {
		j, ok := o.(*batchv1.Job)
		if ok {
			c.hist.observeJob(t, j)
		}
		return ok
	})
	return nil
}

func resourceVersionOf(l metav1.ListInterface, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return l.GetResourceVersion(), nil
}

// follow watches kind from rv until ctx ends, resuming after each end of the watch
// and listing again (relist) when rv is too old.
func (c *chaos) follow(ctx context.Context, kind, rv string,
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
	relist func(context.Context) (string, error),
	observe func(watch.EventType, runtime.Object) bool) {
	for ctx.Err() == nil {
		w, err := watchFn(ctx, metav1.ListOptions{LabelSelector: labelChaos, ResourceVersion: rv, AllowWatchBookmarks: true})
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			rv = c.relist(ctx, kind, relist, rv)
			continue
		}
		if err != nil {
			_ = sleepFor(ctx, 200*time.Millisecond) // kube-apiserver restarting
			continue
		}
		expired := false
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				if err := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					expired = true
				} else {
					c.hist.gap("the watch of the %s: %v", kind, err)
				}
				break
			}
			if m, err := meta.Accessor(ev.Object); err == nil {
				rv = m.GetResourceVersion()
			}
			if ev.Type != watch.Bookmark && !observe(ev.Type, ev.Object) {
				c.hist.gap("the watch of the %s: an event of %T", kind, ev.Object)
			}
		}
		w.Stop()
		if expired {
			rv = c.relist(ctx, kind, relist, rv)
		}
	}
}

func (c *chaos) relist(ctx context.Context, kind string, relist func(context.Context) (string, error), old string) string {
	for ctx.Err() == nil {
		rv, err := relist(ctx)
		if err == nil {
			c.logf("the watch of the %s: resourceVersion %s too old (kube-apiserver restarted), listed again at %s", kind, old, rv)
			return rv
		}
		_ = sleepFor(ctx, 200*time.Millisecond)
	}
	return old
}

// check compares the end state with the history: one line per problem.
func (c *chaos) check(ctx context.Context) ([]string, error) {
	var problems []string
	jobs, err := c.cs.BatchV1().Jobs(c.namespace).List(ctx, metav1.ListOptions{LabelSelector: labelChaos})
	if err != nil {
		return nil, err
	}
	byName := map[string]*batchv1.Job{}
	for i := range jobs.Items {
		byName[jobs.Items[i].Name] = &jobs.Items[i]
	}
	c.hist.mu.Lock()
	jobRecords := map[string]jobRecord{}
	for uid, r := range c.hist.jobs {
		jobRecords[string(uid)] = *r
	}
	problems = append(problems, c.hist.gaps...)
	c.hist.mu.Unlock()
	for _, pj := range c.plan {
		c.mu.Lock()
		uid := c.created[pj.Name]
		c.mu.Unlock()
		pods := c.hist.podsOf(uid)
		j := byName[pj.Name]
		if pj.Shape == shapeDelete {
			if j != nil {
				problems = append(problems, fmt.Sprintf("%s: deleted, still there", pj.Name))
			}
			problems = append(problems, checkJobPods(pj.Name, pods, pj.Indexed, jobRecords[string(uid)].FinishedRV)...)
			continue
		}
		if j == nil {
			problems = append(problems, fmt.Sprintf("%s: gone", pj.Name))
			continue
		}
		problems = append(problems, checkFinishedJob(j, pj.wantCondition(), pods)...)
		if want, ok := pj.exactCounts(); ok {
			got := counts{Succeeded: j.Status.Succeeded, Failed: j.Status.Failed}
			if pj.Indexed {
				got.CompletedIndexes = j.Status.CompletedIndexes
			}
			if got != want {
				problems = append(problems, fmt.Sprintf("%s: succeeded=%d failed=%d completedIndexes=%q, its shape (%s) says %d, %d and %q",
					pj.Name, got.Succeeded, got.Failed, got.CompletedIndexes, pj.Shape, want.Succeeded, want.Failed, want.CompletedIndexes))
			}
		}
		problems = append(problems, checkJobPods(pj.Name, pods, pj.Indexed, jobRecords[string(uid)].FinishedRV)...)
	}
	pods, err := c.cs.CoreV1().Pods(c.namespace).List(ctx, metav1.ListOptions{LabelSelector: labelChaos})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		if hasTrackingFinalizer(&p) {
			problems = append(problems, fmt.Sprintf("pod %s holds %s", p.Name, batchv1.JobTrackingFinalizer))
		}
		if !podutil.IsTerminal(&p) {
			problems = append(problems, fmt.Sprintf("pod %s left %s", p.Name, p.Status.Phase))
		}
	}
	if !c.proc.exited() {
		problems = append(problems, fmt.Sprintf("the controller (pid %d) still runs", c.proc.pid()))
	}
	return problems, nil
}

// checkFinishedJob checks a Job's final status against the history of its pods.
func checkFinishedJob(j *batchv1.Job, want batchv1.JobConditionType, pods []podRecord) []string {
	var problems []string
	add := func(format string, args ...any) {
		problems = append(problems, j.Name+": "+fmt.Sprintf(format, args...))
	}
	st := j.Status
	var finished []string
	for i, cond := range st.Conditions {
		if _, done := jobstatus.Finished(&batchv1.JobStatus{Conditions: st.Conditions[i : i+1]}); done {
			finished = append(finished, string(cond.Type)+"("+cond.Reason+")")
			if cond.Type != want {
				add("finished %s (%s: %s), want %s", cond.Type, cond.Reason, cond.Message, want)
			}
		}
	}
	if len(finished) != 1 {
		add("finished conditions %v, want exactly one (%s)", finished, want)
	}
	if st.Active != 0 || ptr.Deref(st.Terminating, 0) != 0 || ptr.Deref(st.Ready, 0) != 0 {
		add("active=%d terminating=%d ready=%d after finishing", st.Active, ptr.Deref(st.Terminating, 0), ptr.Deref(st.Ready, 0))
	}
	if u := st.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		add("uncountedTerminatedPods left: %d succeeded, %d failed", len(u.Succeeded), len(u.Failed))
	}
	indexed := j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
	got := counts{Succeeded: st.Succeeded, Failed: st.Failed}
	if indexed {
		got.CompletedIndexes = st.CompletedIndexes
	}
	if w := expectedCounts(pods, indexed, ptr.Deref(j.Spec.Completions, 1)); got != w {
		add("status succeeded=%d failed=%d completedIndexes=%q, its pods' history says %d, %d and %q (%d pods)",
			got.Succeeded, got.Failed, got.CompletedIndexes, w.Succeeded, w.Failed, w.CompletedIndexes, len(pods))
	}
	return problems
}

// report prints the kills and the checks.
func (c *chaos) report(out io.Writer, problems []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pods := c.hist.createdCount()
	fmt.Fprintf(out, "\nchaos: seed %d, %d Jobs, %d pods, %d kills and restarts in %.0fs:\n", c.o.seed, len(c.plan), pods, len(c.kills), time.Since(c.start).Seconds())
	for _, k := range c.kills {
		fmt.Fprintln(out, "  "+k)
	}
	checks := []string{
		"every Job not deleted finished with the condition its shape asks for, active, terminating and ready 0, no uncounted pod",
		"succeeded, failed and completedIndexes equal what the pods' history says, and what the shape fixes (complete, suspend, retry-index, fail-index)",
		"no index with two succeeded pods",
		"no pod created after its Job finished",
		"no pod holds the tracking finalizer; no pod left running; the pods of deleted Jobs are gone",
		"the watches of the history saw every event",
	}
	for _, ch := range checks {
		fmt.Fprintln(out, "check: "+ch)
	}
	if len(problems) == 0 {
		fmt.Fprintln(out, "chaos: PASS")
		return
	}
	for _, p := range problems {
		fmt.Fprintln(out, "CHECK FAILED: "+p)
	}
	fmt.Fprintf(out, "chaos: FAIL (%d problems); rerun the same Jobs and kill moments with --seed %d\n", len(problems), c.o.seed)
}

// ensureNamespace creates namespace unless it exists.
func ensureNamespace(ctx context.Context, cs kubernetes.Interface, namespace string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	return nil
}

// retry calls f until it succeeds or ctx ends, every 200 ms: kube-apiserver may be
// restarting.
func retry(ctx context.Context, what string, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		if sleepFor(ctx, 200*time.Millisecond) != nil {
			return fmt.Errorf("%s: %w (and %w)", what, err, ctx.Err())
		}
	}
}

func sleepFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func sleepUntil(ctx context.Context, at time.Time) error { return sleepFor(ctx, time.Until(at)) }
