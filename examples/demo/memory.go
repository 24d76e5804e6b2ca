package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// Shape of the demo Job, the same in both modes.
const (
	demoCompletions          = 4
	demoParallelism          = 2
	demoBackoffLimitPerIndex = 2
	// demoFailingIndex fails on its first demoFailures attempts.
	demoFailingIndex = "1"
	demoFailures     = 2
	// demoRunTime is how long a pod runs in the in-memory mode.
	demoRunTime = 3 * time.Second
)

// demoJob returns the demo Job: Indexed, 4 completions, 2 at a time, a per-index
// backoff limit of 2. Its container fails for index 1 until two attempts of that
// index have failed (it reads the failure count the controller gives each pod).
func demoJob(namespace, name, managedBy, image string) *batchv1.Job {
	script := `sleep 3; if [ "$JOB_COMPLETION_INDEX" = ` + demoFailingIndex + ` ] && [ "${FAILURES:-0}" -lt ` +
		strconv.Itoa(demoFailures) + ` ]; then echo "index $JOB_COMPLETION_INDEX fails (attempt $((FAILURES+1)))"; exit 1; fi; echo done`
	job := reconciletest.NewJob(namespace, name, demoCompletions, demoParallelism)
	if name == "" {
		job.GenerateName = "jobkit-demo-"
	}
	job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	job.Spec.BackoffLimitPerIndex = ptr.To[int32](demoBackoffLimitPerIndex)
	job.Spec.ManagedBy = ptr.To(managedBy)
	ct := &job.Spec.Template.Spec.Containers[0]
	ct.Image = image
	ct.Command = []string{"sh", "-c", script}
	ct.Env = []corev1.EnvVar{{Name: "FAILURES", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: "metadata.annotations['" + batchv1.JobIndexFailureCountAnnotation + "']"}}}}
	return job
}

// failsNow reports whether the demo container fails for pod: what its script
// decides from the index and the failure count annotation.
func failsNow(pod *corev1.Pod) bool {
	failures, _ := strconv.Atoi(pod.Annotations[batchv1.JobIndexFailureCountAnnotation])
	return pod.Annotations[batchv1.JobCompletionIndexAnnotation] == demoFailingIndex && failures < demoFailures
}

// demoScript is the in-memory kubelet: it starts each Pending pod (ready at once),
// and ends each pod that has run for demoRunTime as its container would.
func demoScript(now func() time.Time) func(*reconciletest.Kubelet, *corev1.Pod) error {
	return func(k *reconciletest.Kubelet, pod *corev1.Pod) error {
		if pod.DeletionTimestamp != nil {
			return nil
		}
		switch pod.Status.Phase {
		case corev1.PodPending:
			if err := k.Run(pod.Namespace, pod.Name); err != nil {
				return err
			}
			return k.SetReady(pod.Namespace, pod.Name, true)
		case corev1.PodRunning:
			if pod.Status.StartTime == nil || now().Sub(pod.Status.StartTime.Time) < demoRunTime {
				return nil
			}
			if failsNow(pod) {
				return k.Fail(pod.Namespace, pod.Name, 1)
			}
			return k.Succeed(pod.Namespace, pod.Name)
		}
		return nil
	}
}

// runMemory runs the demo Job on the in-memory cluster, on a simulated clock that
// moves one second per step, and writes its progress to w. The output is the same
// on every run.
func runMemory(ctx context.Context, w io.Writer, managedBy string) error {
	const namespace, name = "default", "demo"
	c := reconciletest.NewCluster(reconciletest.Options{Seed: 1})
	clk := c.Clock()
	p := newProgress(w, clk.Now())

	var writes []reconciletest.WatchEvent
	c.OnWrite(func(ev reconciletest.WatchEvent) { writes = append(writes, ev) })
	flush := func() {
		for _, ev := range writes {
			switch {
			case isJob(ev, name):
				p.Job(ev.Time, ev.Owner.(*batchv1.Job))
			case ev.Pod != nil:
				p.Pod(ev.Time, ev.Pod, ev.Type == watch.Deleted)
			}
		}
		writes = writes[:0]
	}

	r, err := reconcile.New(reconcile.Config{
		Name:                        managedBy,
		Clock:                       clk,
		FinalizerRemovalParallelism: 1, // API calls in plan order: a reproducible run
	}, c, reconcile.JobStatusWriter(c))
	if err != nil {
		return err
	}
	d := reconciletest.NewDriver(c, r)
	c.Kubelet().SetScript(demoScript(clk.Now))
	if _, err := c.Jobs().Create(demoJob(namespace, name, managedBy, "busybox:1.36")); err != nil {
		return err
	}
	flush()

	const maxSteps = 600
	for range maxSteps {
		if err := ctx.Err(); err != nil {
			return err
		}
		c.Cache().DeliverDue()
		_, res, syncErr := d.Sync(ctx, namespace, name)
		flush()
		p.Sync(clk.Now(), res, syncErr)
		if err := c.Kubelet().Step(); err != nil {
			return err
		}
		flush()
		select {
		case <-p.Done():
			return nil
		default:
		}
		clk.Step(time.Second)
	}
	return fmt.Errorf("the demo Job did not finish within %d simulated seconds", maxSteps)
}

// isJob reports whether ev is a change of the Job name.
func isJob(ev reconciletest.WatchEvent, name string) bool {
	j, ok := ev.Owner.(*batchv1.Job)
	return ok && j.Name == name
}
