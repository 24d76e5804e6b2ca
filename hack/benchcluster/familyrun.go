package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// familyRun is one family's Job under one controller, as the benchmark drives it.
type familyRun struct {
	cs        kubernetes.Interface
	namespace string
	name      string
	uid       types.UID
	indexed   bool
	timeout   time.Duration
	// own are the benchmark's writes that the API server's counters count as the
	// controller's (notController cannot tell them apart): its Job patches and
	// deletion, its pod relabelling and deletions. They are taken off.
	own requests
	// released is the pod the benchmark relabelled; all the pods of the label as
	// last listed.
	released string
	all      []corev1.Pod
}

// list lists the pods of the family's label (all) and those of them the Job
// controls and selects (its own).
func (r *familyRun) list(ctx context.Context) (all, own []corev1.Pod, err error) {
	list, err := r.cs.CoreV1().Pods(r.namespace).List(ctx, metav1.ListOptions{LabelSelector: "jobkit.dev/bench=" + r.name})
	if err != nil {
		return nil, nil, err
	}
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == r.uid && p.Labels[batchv1.ControllerUidLabel] == string(r.uid) {
			own = append(own, p)
		}
	}
	r.all = list.Items
	return list.Items, own, nil
}

// waitJob polls the Job and its pods every 100 ms until done holds, at most
// r.timeout.
func (r *familyRun) waitJob(ctx context.Context, done func(*batchv1.Job, []corev1.Pod) bool) error {
	deadline := time.Now().Add(r.timeout)
	for {
		j, err := r.cs.BatchV1().Jobs(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		_, own, err := r.list(ctx)
		if err != nil {
			return err
		}
		if done(j, own) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not reached after %v: status active=%d ready=%d terminating=%d succeeded=%d failed=%d %s, %d pods running",
				r.timeout, j.Status.Active, ptr.Deref(j.Status.Ready, 0), ptr.Deref(j.Status.Terminating, 0),
				j.Status.Succeeded, j.Status.Failed, conditionSummary(j.Status.Conditions), countRunning(own))
		}
		if err := sleepFor(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitEnd waits until the Job is finished as the family says (or gone) and no pod of
// its label holds the tracking finalizer.
func (r *familyRun) waitEnd(ctx context.Context, f familyCase) error {
	want := batchv1.JobComplete
	if f.failed {
		want = batchv1.JobFailed
	}
	deadline := time.Now().Add(r.timeout)
	for {
		j, err := r.cs.BatchV1().Jobs(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
		gone := apierrors.IsNotFound(err)
		if err != nil && !gone {
			return err
		}
		all, _, err := r.list(ctx)
		if err != nil {
			return err
		}
		switch {
		case f.gone && gone && held(all) == 0:
			return nil
		case !f.gone && gone:
			return fmt.Errorf("the Job is gone, want it %s", want)
		case !f.gone && isFinished(j):
			if !conditionTrue(j, want) {
				return fmt.Errorf("the Job ended %s, want %s", conditionSummary(j.Status.Conditions), want)
			}
			if held(all) == 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			state := "gone"
			if !gone {
				state = conditionSummary(j.Status.Conditions)
			}
			return fmt.Errorf("not ended after %v: the Job %s, %d pods hold the finalizer", r.timeout, state, held(all))
		}
		if err := sleepFor(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// position is the pod's place in its Job: its completion index, or without one its
// rank by name among pods.
func (r *familyRun) position(p corev1.Pod, pods []corev1.Pod) int {
	if r.indexed {
		i, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		if err != nil {
			return -1
		}
		return i
	}
	names := make([]string, len(pods))
	for i := range pods {
		names[i] = pods[i].Name
	}
	sort.Strings(names)
	return slices.Index(names, p.Name)
}

// finish ends the Job's running pods as end says (finishStep), as their kubelet
// would: phase, conditions and the container's terminated state with the exit code.
func (r *familyRun) finish(ctx context.Context, end func(position int) int32) error {
	_, own, err := r.list(ctx)
	if err != nil {
		return err
	}
	var running []corev1.Pod
	for _, p := range own {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			running = append(running, p)
		}
	}
	type ending struct {
		pod  corev1.Pod
		code int32
	}
	var ends []ending
	for _, p := range running {
		if code := end(r.position(p, running)); code >= 0 {
			ends = append(ends, ending{p, code})
		}
	}
	// Failures first: none finishes after the last success.
	slices.SortStableFunc(ends, func(a, b ending) int { return int(b.code) - int(a.code) })
	now := metav1.Now().Rfc3339Copy()
	for _, e := range ends {
		patch, err := podEndPatch(&e.pod, e.code, now)
		if err != nil {
			return err
		}
		if _, err := r.cs.CoreV1().Pods(r.namespace).Patch(ctx, e.pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			return fmt.Errorf("end pod %s: %w", e.pod.Name, err)
		}
	}
	return nil
}

// podEndPatch is the merge patch of pods/status that ends pod with exit code code (0:
// Succeeded) at now.
func podEndPatch(pod *corev1.Pod, code int32, now metav1.Time) ([]byte, error) {
	phase, reason, cReason := corev1.PodSucceeded, "PodCompleted", "Completed"
	if code != 0 {
		phase, reason, cReason = corev1.PodFailed, "PodFailed", "Error"
	}
	started := now
	if pod.Status.StartTime != nil {
		started = *pod.Status.StartTime
	}
	st := corev1.PodStatus{Phase: phase, StartTime: pod.Status.StartTime, Conditions: []corev1.PodCondition{
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
		{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: reason, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reason, LastTransitionTime: now},
	}}
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptr.To(false),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: cReason, StartedAt: started, FinishedAt: now}}})
	}
	return json.Marshal(map[string]any{"status": st})
}

// patchJob merge-patches the Job.
func (r *familyRun) patchJob(ctx context.Context, patch string) error {
	if _, err := r.cs.BatchV1().Jobs(r.namespace).Patch(ctx, r.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch the Job with %s: %w", patch, err)
	}
	r.own[requestKey{Verb: "PATCH", Resource: "jobs"}]++
	return nil
}

// deleteJob deletes the Job, then each of its pods, as the garbage collector would
// (none runs on this control plane).
func (r *familyRun) deleteJob(ctx context.Context) error {
	err := r.cs.BatchV1().Jobs(r.namespace).Delete(ctx, r.name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if err != nil {
		return fmt.Errorf("delete the Job: %w", err)
	}
	r.own[requestKey{Verb: "DELETE", Resource: "jobs"}]++
	all, _, err := r.list(ctx)
	if err != nil {
		return err
	}
	for _, p := range all {
		if err := r.cs.CoreV1().Pods(r.namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete pod %s: %w", p.Name, err)
		}
		r.own[requestKey{Verb: "DELETE", Resource: "pods"}]++
	}
	return nil
}

// release relabels the running pod of index out of the Job's selector.
func (r *familyRun) release(ctx context.Context, index int) error {
	_, own, err := r.list(ctx)
	if err != nil {
		return err
	}
	for _, p := range own {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && r.position(p, own) == index {
			patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"released"}}}`, batchv1.ControllerUidLabel)
			if _, err := r.cs.CoreV1().Pods(r.namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("relabel pod %s: %w", p.Name, err)
			}
			r.own[requestKey{Verb: "PATCH", Resource: "pods"}]++
			r.released = p.Name
			return nil
		}
	}
	return fmt.Errorf("no running pod of index %d", index)
}

// releasedDone tells whether the released pod, as last listed, has lost its
// controller reference and the tracking finalizer.
func (r *familyRun) releasedDone() bool {
	for _, p := range r.all {
		if p.Name == r.released {
			return metav1.GetControllerOf(&p) == nil && held([]corev1.Pod{p}) == 0
		}
	}
	return false
}
