package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
)

// bench holds what every run shares.
type bench struct {
	cs         kubernetes.Interface
	kubeconfig string
	logDir     string
	namespace  string
	nodes      []string
	// others are the processes whose CPU is reported beside the controller's.
	others  map[string]int // name -> pid
	timeout time.Duration
	log     io.Writer
	// profileDir, when set (--profile), receives each run's CPU and heap profiles,
	// of the controller and of kube-apiserver (through apiserver, its URL, and
	// apiserverClient, the benchmark's authenticated client).
	profileDir      string
	apiserver       string
	apiserverClient *http.Client
}

// result is what one run measured.
type result struct {
	Case       jobCase
	Controller string
	Limits     qps
	Duration   time.Duration
	Requests   requests // the controller's, see notController
	// OtherRequests are the rest over the run: kwok's, kube-apiserver's own and the
	// benchmark's (notController).
	OtherRequests requests
	CPU           float64 // controller CPU seconds
	PeakRSS       int64   // bytes
	OtherCPU      map[string]float64
	Problems      []string // failed checks
	Timeline      timeline // when the pods were created and finished
	// Settled is how long the run waited for the control plane to be idle first.
	Settled time.Duration
	// Syncs is the controller's job_controller_job_syncs_total at the end (it starts
	// fresh for every run).
	Syncs float64
	// CPUParts is the controller's CPU profile by part (cpuParts), in seconds; nil
	// without --profile.
	CPUParts map[string]float64
	// JobTimes are the seconds from each Job's create call to its finished
	// condition, sorted (jobLatencies).
	JobTimes []float64
	// Events are the watch events of pods and Jobs over the run (watchEventsMetric):
	// what each controller's informers received.
	Events float64
}

// snapshot is the state of the counters at one moment.
type snapshot struct {
	at       time.Time
	requests requests
	cpu      float64
	others   map[string]float64
	events   map[string]float64 // watch events by resource (watchEventsMetric)
}

func (b *bench) snapshot(ctx context.Context, pid int) (snapshot, error) {
	s := snapshot{at: time.Now(), others: map[string]float64{}}
	raw, err := b.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		return s, fmt.Errorf("scrape kube-apiserver /metrics: %w", err)
	}
	defer raw.Close()
	text, err := io.ReadAll(raw)
	if err != nil {
		return s, fmt.Errorf("scrape kube-apiserver /metrics: %w", err)
	}
	if s.requests, err = parseRequests(bytes.NewReader(text)); err != nil {
		return s, err
	}
	if s.events, err = parseCounterBy(bytes.NewReader(text), watchEventsMetric, "resource"); err != nil {
		return s, err
	}
	if s.cpu, err = cpuSeconds(pid); err != nil {
		return s, err
	}
	for name, p := range b.others {
		if s.others[name], err = cpuSeconds(p); err != nil {
			return s, fmt.Errorf("%s: %w", name, err)
		}
	}
	return s, nil
}

// run runs case c under controller ctrl with limits and measures it.
func (b *bench) run(ctx context.Context, ctrl controller, c jobCase, limits qps, seq int) (result, error) {
	res := result{Case: c, Controller: ctrl.Name, Limits: limits}
	if len(b.others) > 0 {
		waited, settled, err := b.settle(ctx)
		if err != nil {
			return res, err
		}
		if !settled {
			fmt.Fprintf(b.log, "the control plane was still busy after %v; running anyway\n", waited.Round(time.Second))
		}
		res.Settled = waited
	}
	proc, err := ctrl.start(ctx, b.kubeconfig, b.logDir, fmt.Sprintf("%03d-%s", seq, c.Name), limits)
	if err != nil {
		return res, err
	}
	defer func() {
		if err := proc.stop(); err != nil {
			fmt.Fprintf(b.log, "stop %s: %v\n", ctrl.Name, err)
		}
		if err := b.cleanup(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(b.log, "cleanup: %v\n", err)
		}
	}()
	before, err := b.snapshot(ctx, proc.pid())
	if err != nil {
		return res, err
	}
	jobs := b.cs.BatchV1().Jobs(b.namespace)
	w, err := jobs.Watch(ctx, metav1.ListOptions{LabelSelector: "jobkit.dev/bench=" + c.Name})
	if err != nil {
		return res, err
	}
	defer w.Stop()
	var prof, apiProf *profiler
	var prefix string
	if proc.profile != "" {
		prefix = filepath.Join(b.profileDir, fmt.Sprintf("%03d-%s-%s", seq, c.Name, ctrl.Name))
		prof = startProfiler(proc.profile, prefix, nil)
		if b.apiserverClient != nil {
			apiProf = startProfiler(b.apiserver, prefix+"-apiserver", b.apiserverClient)
		}
	}
	start := time.Now()
	created, err := b.createJobs(ctx, c, ctrl.ManagedBy, seq)
	if err != nil {
		return res, err
	}
	finished, err := b.waitFinished(ctx, w, c.Jobs)
	if err != nil {
		return res, err
	}
	var last time.Time
	for _, at := range finished {
		if at.After(last) {
			last = at
		}
	}
	res.Duration = last.Sub(start)
	res.JobTimes = jobLatencies(created, finished, start)
	time.Sleep(time.Second) // the last writes after the condition (events) land
	if prof != nil {
		files, err := prof.finish()
		if err != nil {
			return res, err
		}
		fmt.Fprintf(b.log, "profiles of %s under %s: %s in %s\n", c.Name, ctrl.Name, files, b.profileDir)
		if res.CPUParts, err = readCPUParts(prefix + "-cpu-*.pb.gz"); err != nil {
			return res, err
		}
	}
	if apiProf != nil {
		files, err := apiProf.finish()
		if err != nil {
			return res, fmt.Errorf("kube-apiserver: %w", err)
		}
		fmt.Fprintf(b.log, "kube-apiserver profiles of %s under %s: %s\n", c.Name, ctrl.Name, files)
	}
	rss, err := peakRSS(proc.pid())
	if err != nil {
		return res, err
	}
	if res.Syncs, err = proc.syncs(ctx); err != nil {
		return res, err
	}
	after, err := b.snapshot(ctx, proc.pid())
	if err != nil {
		return res, err
	}
	res.PeakRSS = rss
	res.CPU = after.cpu - before.cpu
	res.OtherCPU = map[string]float64{}
	for name, v := range after.others {
		res.OtherCPU[name] = v - before.others[name]
	}
	res.Events = watchEvents(after.events) - watchEvents(before.events)
	res.Requests, res.OtherRequests = requests{}, requests{}
	for k, v := range after.requests.sub(before.requests) {
		if notController(k) {
			res.OtherRequests[k] = v
		} else {
			res.Requests[k] = v
		}
	}
	pods, err := b.cs.CoreV1().Pods(b.namespace).List(ctx, metav1.ListOptions{LabelSelector: "jobkit.dev/bench=" + c.Name})
	if err != nil {
		return res, err
	}
	res.Timeline = podTimeline(pods.Items, start)
	res.Problems, err = b.check(ctx, c, pods.Items)
	return res, err
}

// waitFinished waits until n Jobs of the watch have a finished condition and returns
// when each was first seen finished, by name.
func (b *bench) waitFinished(ctx context.Context, w watch.Interface, n int) (map[string]time.Time, error) {
	done := map[string]time.Time{}
	timeout := time.After(b.timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("the watch of the Jobs ended with %d of %d finished", len(done), n)
			}
			if ev.Type == watch.Error {
				return nil, fmt.Errorf("watch of the Jobs: %v", apierrors.FromObject(ev.Object))
			}
			j, ok := ev.Object.(*batchv1.Job)
			if !ok || !isFinished(j) {
				continue
			}
			if _, seen := done[j.Name]; !seen {
				done[j.Name] = time.Now()
			}
			if len(done) == n {
				return done, nil
			}
		case <-timeout:
			return nil, fmt.Errorf("%d of %d Jobs finished after %v", len(done), n, b.timeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func isFinished(j *batchv1.Job) bool {
	_, done := jobstatus.Finished(&j.Status)
	return done
}

// check compares the finished Jobs with what the case expects and looks for pods
// (the case's, listed after the run) still holding the tracking finalizer.
func (b *bench) check(ctx context.Context, c jobCase, pods []corev1.Pod) ([]string, error) {
	var problems []string
	list, err := b.cs.BatchV1().Jobs(b.namespace).List(ctx, metav1.ListOptions{LabelSelector: "jobkit.dev/bench=" + c.Name})
	if err != nil {
		return nil, err
	}
	if len(list.Items) != c.Jobs {
		problems = append(problems, fmt.Sprintf("%d Jobs, want %d", len(list.Items), c.Jobs))
	}
	w := c.want()
	for _, j := range list.Items {
		st := j.Status
		if st.Succeeded != w.Succeeded || st.Failed != w.Failed {
			problems = append(problems, fmt.Sprintf("%s: succeeded=%d failed=%d, want %d and %d", j.Name, st.Succeeded, st.Failed, w.Succeeded, w.Failed))
		}
		if st.Active != 0 || ptr.Deref(st.Terminating, 0) != 0 {
			problems = append(problems, fmt.Sprintf("%s: active=%d terminating=%d after finishing", j.Name, st.Active, ptr.Deref(st.Terminating, 0)))
		}
		var cond *batchv1.JobCondition
		for i := range st.Conditions {
			if st.Conditions[i].Type == w.Condition && st.Conditions[i].Status == corev1.ConditionTrue {
				cond = &st.Conditions[i]
			}
		}
		if cond == nil || cond.Reason != w.Reason {
			problems = append(problems, fmt.Sprintf("%s: no condition %s with reason %s: %v", j.Name, w.Condition, w.Reason, conditionSummary(st.Conditions)))
		}
	}
	held := 0
	succeeded := map[types.UID]int32{}
	for _, p := range pods {
		if owner.BatchJob.HasFinalizer(&p) {
			held++
		}
		if ref := metav1.GetControllerOf(&p); ref != nil && p.Status.Phase == corev1.PodSucceeded {
			succeeded[ref.UID]++
		}
	}
	if held > 0 {
		problems = append(problems, fmt.Sprintf("%d pods still hold %s", held, batchv1.JobTrackingFinalizer))
	}
	// Each succeeded pod is counted once: a Job whose status.succeeded differs from
	// its pods in phase Succeeded lost a completion or counted one twice.
	for _, j := range list.Items {
		if n := succeeded[j.UID]; n != j.Status.Succeeded {
			problems = append(problems, fmt.Sprintf("%s: status.succeeded=%d but %d of its pods succeeded", j.Name, j.Status.Succeeded, n))
		}
	}
	return problems, nil
}

func conditionSummary(cs []batchv1.JobCondition) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// cleanup deletes the benchmark's Jobs and pods and waits until the pods are gone.
func (b *bench) cleanup(ctx context.Context) error {
	return cleanupLabel(ctx, b.cs, b.namespace, "jobkit.dev/bench")
}

// cleanupLabel deletes the Jobs and pods of namespace that carry the label key and
// waits until the pods are gone. No garbage collector runs, so the pods are deleted
// here, at once (grace period 0), their finalizers removed first should a controller
// have left one.
func cleanupLabel(ctx context.Context, cs kubernetes.Interface, namespace, key string) error {
	sel := metav1.ListOptions{LabelSelector: key}
	if err := cs.BatchV1().Jobs(namespace).DeleteCollection(ctx,
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}, sel); err != nil {
		return fmt.Errorf("delete the Jobs: %w", err)
	}
	pods := cs.CoreV1().Pods(namespace)
	list, err := pods.List(ctx, sel)
	if err != nil {
		return err
	}
	var held []string
	for _, p := range list.Items {
		if len(p.Finalizers) > 0 {
			held = append(held, p.Name)
		}
	}
	// 16 at a time: a run stopped early leaves 20,000 pods holding the finalizer.
	if err := inParallel(len(held), createWorkers, func(i int) error {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := pods.Patch(ctx, held[i], "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("remove the finalizers of pod %s: %w", held[i], err)
		}
		return nil
	}); err != nil {
		return err
	}
	// Deleting thousands of pods outlasts the request's 60 s (a timeout, or on a
	// loaded machine an HTTP/2 stream reset); the server goes on, and the loop below
	// waits for it, asking again every 30 s while pods are left.
	deleteAll := func() error {
		err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, sel)
		if err != nil && (apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || !isAPIStatus(err)) {
			return nil
		}
		return err
	}
	if err := deleteAll(); err != nil {
		return fmt.Errorf("delete the pods: %w", err)
	}
	// 20,000 pods take kube-apiserver minutes to delete on a loaded machine.
	for i := range 9000 {
		left, err := pods.List(ctx, metav1.ListOptions{LabelSelector: key, Limit: 1})
		if err != nil {
			return err
		}
		if len(left.Items) == 0 {
			return nil
		}
		if i%300 == 299 {
			if err := deleteAll(); err != nil {
				return fmt.Errorf("delete the pods: %w", err)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("pods labelled %s left after 15 minutes", key)
}
