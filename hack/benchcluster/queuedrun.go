package main

import (
	"context"
	"fmt"
	"io"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/jobstatus"
)

// queuedBench is what every run of the queued benchmark shares.
type queuedBench struct {
	*groupBench
	c queuedCase
}

// queuedResult is what one run of the queued case under one side measured.
type queuedResult struct {
	Case queuedCase
	Side string
	// Duration is from the first create call to the last owner's finished condition
	// seen through a watch.
	Duration time.Duration
	// Admitted is the number of Workloads seen admitted; Rate their admissions per
	// second (admissionRate); PeakPods the most pods admitted at once (one CPU each:
	// the quota in use, admissionTracker).
	Admitted      int
	Rate          float64
	PeakPods      int64
	Requests      requests
	OtherRequests requests
	CPU           map[string]float64 // by process: "kueue" and the side's controller
	RSS           map[string]int64   // peak, by process
	APIServerCPU  float64
	Problems      []string
}

// ours is the name of the side's own controller process.
func (r queuedResult) ours() string {
	switch r.Side {
	case queuedKCM:
		return "kcm"
	case queuedJobkit:
		return "jobkit"
	}
	return "trainingjob"
}

func (r queuedResult) line() string {
	return fmt.Sprintf("%s %s: %.1f s, %d admitted, %.2f admissions/s, peak %d pods admitted at once, CPU kueue %.1f s %s %.1f s, kube-apiserver %.1f s\n  writes: %s",
		r.Case.Name(), r.Side, r.Duration.Seconds(), r.Admitted, r.Rate, r.PeakPods,
		r.CPU["kueue"], r.ours(), r.CPU[r.ours()], r.APIServerCPU, writesLine(r.Requests))
}

// createQueues creates the ResourceFlavor, the ClusterQueue and the LocalQueue, or
// updates them to the case's quota.
func (q *queuedBench) createQueues(ctx context.Context) error {
	gvrs := []schema.GroupVersionResource{resourceFlavorResource, clusterQueueResource, localQueueResource}
	for i, u := range q.c.kueueObjects(q.namespace) {
		r := q.dyn.Resource(gvrs[i])
		var err error
		if u.GetNamespace() != "" {
			_, err = r.Namespace(u.GetNamespace()).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "benchcluster", Force: true})
		} else {
			_, err = r.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "benchcluster", Force: true})
		}
		if err != nil {
			return fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// cleanup deletes the owners, their pods and their Workloads, finalizers removed (no
// controller runs between two runs).
func (q *queuedBench) cleanup(ctx context.Context) error {
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	sel := metav1.ListOptions{LabelSelector: queuedLabel}
	for _, gvr := range []schema.GroupVersionResource{trainingJobResource, workloadResource} {
		r := q.dyn.Resource(gvr).Namespace(q.namespace)
		list, err := r.List(ctx, metav1.ListOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) {
				continue // the CRD is not installed
			}
			return err
		}
		for _, u := range list.Items {
			if gvr == trainingJobResource && u.GetLabels()[queuedLabel] == "" {
				continue
			}
			if len(u.GetFinalizers()) > 0 {
				if _, err := r.Patch(ctx, u.GetName(), types.MergePatchType, unfinalize, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			}
			if err := r.Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return cleanupLabel(ctx, q.cs, q.namespace, sel.LabelSelector)
}

// run runs the case under side and measures it; seq numbers the run.
func (q *queuedBench) run(ctx context.Context, side string, seq int) (queuedResult, error) {
	res := queuedResult{Case: q.c, Side: side}
	if _, settled, err := q.settle(ctx); err != nil {
		return res, err
	} else if !settled {
		fmt.Fprintln(q.log, "the control plane was still busy; running anyway")
	}
	run := fmt.Sprintf("%03d-%s", seq, side)
	procs := map[string]*running{}
	defer func() {
		for name, p := range procs {
			if err := p.stop(); err != nil {
				fmt.Fprintf(q.log, "stop %s: %v\n", name, err)
			}
		}
		if err := q.cleanup(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(q.log, "cleanup: %v\n", err)
		}
	}()
	for _, s := range q.sides[side] {
		p, err := s.Start(ctx, run)
		if err != nil {
			return res, err
		}
		procs[s.Name] = p
	}
	before, err := q.snapshot(ctx, procs)
	if err != nil {
		return res, err
	}
	ww, err := q.dyn.Resource(workloadResource).Namespace(q.namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return res, err
	}
	defer ww.Stop()
	var ow watch.Interface
	if side == queuedOwner {
		ow, err = q.dyn.Resource(trainingJobResource).Namespace(q.namespace).Watch(ctx, metav1.ListOptions{LabelSelector: queuedLabel})
	} else {
		ow, err = q.cs.BatchV1().Jobs(q.namespace).Watch(ctx, metav1.ListOptions{LabelSelector: queuedLabel})
	}
	if err != nil {
		return res, err
	}
	defer ow.Stop()
	start := time.Now()
	if err := q.createOwners(ctx, side, seq); err != nil {
		return res, err
	}
	t := newAdmissionTracker()
	finished := map[string]string{} // owner -> its finished condition
	limit := time.After(q.timeout)
	var end time.Time
	for len(finished) < q.c.Owners {
		select {
		case ev, ok := <-ww.ResultChan():
			if !ok {
				return res, fmt.Errorf("the watch of the Workloads ended")
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type != watch.Error {
				t.observe(u, time.Now())
			}
		case ev, ok := <-ow.ResultChan():
			if !ok {
				return res, fmt.Errorf("the watch of the owners ended")
			}
			if name, cond := ownerFinished(ev); cond != "" {
				if _, seen := finished[name]; !seen {
					finished[name], end = cond, time.Now()
				}
			}
		case <-limit:
			return res, fmt.Errorf("%d of %d owners finished in %v, %d admitted", len(finished), q.c.Owners, q.timeout, len(t.admitted))
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	res.Duration = end.Sub(start)
	time.Sleep(time.Second) // the last writes after the moment measured (Workloads finished)
	res.RSS = map[string]int64{}
	for n, p := range procs {
		if res.RSS[n], err = peakRSS(p.pid()); err != nil {
			return res, err
		}
	}
	after, err := q.snapshot(ctx, procs)
	if err != nil {
		return res, err
	}
	res.CPU = map[string]float64{}
	for n, v := range after.cpu {
		res.CPU[n] = v - before.cpu[n]
	}
	res.APIServerCPU = after.api - before.api
	res.Requests, res.OtherRequests = requests{}, requests{}
	for k, v := range after.requests.sub(before.requests) {
		if queuedNotController(k) {
			res.OtherRequests[k] = v
		} else {
			res.Requests[k] = v
		}
	}
	res.Admitted, res.Rate, res.PeakPods = len(t.admitted), admissionRate(start, t.admitted), t.peak
	res.Problems = append(res.Problems, q.check(ctx, res, finished)...)
	return res, nil
}

// createOwners creates the case's owners for side, createWorkers at a time, their
// pods spread over the nodes.
func (q *queuedBench) createOwners(ctx context.Context, side string, seq int) error {
	return inParallel(q.c.Owners, createWorkers, func(i int) error {
		name := fmt.Sprintf("q%d-%d", seq, i)
		node := q.nodes[i%len(q.nodes)]
		switch side {
		case queuedOwner:
			u, err := q.c.trainingJob(name, q.namespace, node)
			if err != nil {
				return err
			}
			_, err = q.dyn.Resource(trainingJobResource).Namespace(q.namespace).Create(ctx, u, metav1.CreateOptions{})
			return err
		case queuedJobkit:
			_, err := q.cs.BatchV1().Jobs(q.namespace).Create(ctx, q.c.job(name, q.namespace, managedByJobkit, node), metav1.CreateOptions{})
			return err
		default:
			_, err := q.cs.BatchV1().Jobs(q.namespace).Create(ctx, q.c.job(name, q.namespace, "", node), metav1.CreateOptions{})
			return err
		}
	})
}

// ownerFinished is the name of the owner of ev and its finished condition's type,
// empty while it has none.
func ownerFinished(ev watch.Event) (string, string) {
	if ev.Type == watch.Error || ev.Type == watch.Deleted {
		return "", ""
	}
	switch o := ev.Object.(type) {
	case *batchv1.Job:
		if t, done := jobstatus.Finished(&o.Status); done {
			return o.Name, string(t)
		}
	case *unstructured.Unstructured:
		return o.GetName(), finishedCondition(o)
	}
	return "", ""
}

// check is what a run must have left: every owner complete, every Workload admitted
// once, never more admitted at once than the quota allows, every pod succeeded.
func (q *queuedBench) check(ctx context.Context, res queuedResult, finished map[string]string) []string {
	var problems []string
	for name, cond := range finished {
		if cond != "Complete" {
			problems = append(problems, fmt.Sprintf("owner %s finished %s, want Complete", name, cond))
		}
	}
	if res.Admitted != q.c.Owners {
		problems = append(problems, fmt.Sprintf("%d Workloads admitted, want %d", res.Admitted, q.c.Owners))
	}
	if res.PeakPods > int64(q.c.quota()) {
		problems = append(problems, fmt.Sprintf("%d pods admitted at once, the quota allows %d", res.PeakPods, q.c.quota()))
	}
	pods, err := q.cs.CoreV1().Pods(q.namespace).List(ctx, metav1.ListOptions{LabelSelector: queuedLabel})
	if err != nil {
		return append(problems, err.Error())
	}
	succeeded := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded {
			succeeded++
		}
	}
	if want := q.c.Owners * q.c.Pods; succeeded != want {
		problems = append(problems, fmt.Sprintf("%d pods succeeded, want %d", succeeded, want))
	}
	return problems
}

// writeQueuedTable prints the table of the runs (one line a run) and each run's
// writes by verb and resource.
func writeQueuedTable(w io.Writer, rs []queuedResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: %d owners of %d pods, a ClusterQueue admitting %d at a time\n\n", rs[0].Case.Name(), rs[0].Case.Owners, rs[0].Case.Pods, rs[0].Case.Admitted)
	fmt.Fprintln(w, "| side | all finished (s) | admissions/s | writes | without events | Kueue CPU (s) | ours CPU (s) | Kueue peak RSS (MiB) | ours peak RSS (MiB) | kube-apiserver CPU (s) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		// Reads are left out: the processes list and watch once, before the first
		// snapshot.
		var writes, events float64
		for k, v := range r.Requests {
			if isWrite(k.Verb) {
				writes += v
				if k.Resource == "events" {
					events += v
				}
			}
		}
		fmt.Fprintf(w, "| %s | %.1f | %.2f | %.0f | %.0f | %.1f | %.1f | %.0f | %.0f | %.1f |\n", queuedSideName(r.Side), r.Duration.Seconds(), r.Rate,
			writes, writes-events, r.CPU["kueue"], r.CPU[r.ours()], mib(r.RSS["kueue"]), mib(r.RSS[r.ours()]), r.APIServerCPU)
	}
	fmt.Fprintln(w)
	for _, r := range rs {
		fmt.Fprintf(w, "- %s writes: %s\n", queuedSideName(r.Side), writesLine(r.Requests))
	}
}

// queuedSideName is the side as the table names it.
func queuedSideName(side string) string {
	switch side {
	case queuedKCM:
		return "Job controller of kube-controller-manager + Kueue"
	case queuedJobkit:
		return "jobkit-clientgo (spec.managedBy) + Kueue"
	}
	return "TrainingJobs: trainingjob-controller --kueue + Kueue"
}

// admissionTracker follows the Workloads through a watch: when each was first seen
// admitted, and the most pods admitted at once. A Workload holds quota for its pod
// sets' pods from its admission until it finishes, less its reclaimable pods (Kueue
// gives those back as the owner no longer needs them: a Job's pods that succeeded
// beyond what it still needs), so the next owner may be admitted before the last one
// finished.
type admissionTracker struct {
	admitted map[string]time.Time
	inUse    map[string]int64 // pods by Workload
	peak     int64
}

func newAdmissionTracker() *admissionTracker {
	return &admissionTracker{admitted: map[string]time.Time{}, inUse: map[string]int64{}}
}

// observe takes Workload u as seen at now.
func (t *admissionTracker) observe(u *unstructured.Unstructured, now time.Time) {
	name := u.GetName()
	admitted := workloadCondition(u, "Admitted")
	if _, seen := t.admitted[name]; admitted && !seen {
		t.admitted[name] = now
	}
	t.inUse[name] = 0
	if admitted && !workloadCondition(u, "Finished") {
		t.inUse[name] = max(podSetsCount(u, "spec", "podSets")-podSetsCount(u, "status", "reclaimablePods"), 0)
	}
	var n int64
	for _, pods := range t.inUse {
		n += pods
	}
	t.peak = max(t.peak, n)
}

// podSetsCount sums the count of each item of the list at path in u.
func podSetsCount(u *unstructured.Unstructured, path ...string) int64 {
	items, _, _ := unstructured.NestedSlice(u.Object, path...)
	var n int64
	for _, it := range items {
		m, _ := it.(map[string]any)
		switch c := m["count"].(type) {
		case int64:
			n += c
		case float64:
			n += int64(c)
		}
	}
	return n
}

// workloadCondition tells whether the Workload u has condition typ true.
func workloadCondition(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}
