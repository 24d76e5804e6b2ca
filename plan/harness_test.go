package plan

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

// world is the multi-step harness: an in-memory Job and its pods, to which plans are
// applied the way a reconciler would (all calls succeed), with a hand-driven kubelet.
// After every sync it checks the invariants the Job controller promises.
//
// It is not reconciletest's Driver and Cluster, the one rig of the other
// simulations (issue 19): it applies Compute's plans itself, at once and with every
// call succeeding, so that a scenario fails on a wrong plan and not on reconcile's
// execution of it, and it injects no faults (there is no fault model to share).
// As an in-package test (package plan) it cannot import reconciletest, which
// imports plan: moving it there means making it and scenarios_test.go an external
// test package (they use one unexported name, isTerminal) and replacing its apply
// step with reconcile running against the Cluster. The executed path, with faults
// as outcomes of the Cluster's interceptor, is what reconcile's TestChaos and
// internal/sim check.
type world struct {
	t    *testing.T
	job  *batchv1.Job
	pods []*corev1.Pod // in creation order; removed pods are dropped
	now  time.Time
	rec  plainbackoff.Record
	seq  int
	opts Options

	counted   sets.Set[types.UID] // UIDs that left uncountedTerminatedPods
	created   int
	syncs     int
	lastPlan  *Plan
	elasticOK bool
}

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func newWorld(t *testing.T, spec batchv1.JobSpec) *world {
	t.Helper()
	labels := map[string]string{batchv1.JobNameLabel: "job", batchv1.ControllerUidLabel: "job-uid", "job-name": "job", "controller-uid": "job-uid"}
	if spec.Template.Spec.RestartPolicy == "" {
		spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	if len(spec.Template.Spec.Containers) == 0 {
		spec.Template.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox"}}
	}
	spec.Template.Labels = labels
	spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "job-uid"}}
	return &world{
		t:       t,
		job:     &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns", UID: "job-uid", CreationTimestamp: metav1.NewTime(t0)}, Spec: spec},
		now:     t0,
		counted: sets.New[types.UID](),
	}
}

func (w *world) advance(d time.Duration) { w.now = w.now.Add(d) }

// sync computes and applies one plan, checking every status write.
func (w *world) sync() *Plan {
	w.t.Helper()
	w.syncs++
	in := Input{Workload: JobWorkload(w.job), Pods: slices.Clone(w.pods), ControllerName: batchv1.JobControllerName, ExpectationsSatisfied: true, Backoff: w.rec, Now: w.now, Options: w.opts}
	p, err := Compute(in)
	if err != nil {
		w.t.Fatalf("sync %d: Compute: %v", w.syncs, err)
	}
	w.lastPlan = p
	if p.Skip != "" {
		return p
	}
	for _, a := range p.Adopt {
		pod := w.pod(a.Pod.Name)
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(w.job, batchv1.SchemeGroupVersion.WithKind("Job"))}
		finalizers.EnsureOnPod(&pod.ObjectMeta, finalizers.Name)
	}
	for _, a := range p.Release {
		w.pod(a.Pod.Name).OwnerReferences = nil
	}
	if p.RecordStatus != nil {
		w.writeStatus(*p.RecordStatus)
	}
	removed := sets.New[types.UID]()
	for _, a := range p.RemoveFinalizers {
		pod := w.pod(a.Pod.Name)
		if !owner.BatchJob.HasFinalizer(pod) {
			w.t.Fatalf("sync %d: finalizer removal for %s, which has none (sent twice?)", w.syncs, pod.Name)
		}
		w.removeFinalizer(pod)
		removed.Insert(pod.UID)
	}
	s := p.Settle(removed)
	if s.Changed {
		w.writeStatus(s.Status)
	}
	for _, d := range p.Delete {
		pod := w.pod(d.Pod.Name)
		if pod == nil {
			continue
		}
		if d.RemoveFinalizerFirst {
			w.removeFinalizer(pod)
		}
		w.deletePod(pod)
	}
	for _, c := range p.Create {
		w.createPod(c)
	}
	w.rec = p.Backoff
	w.gc()
	w.checkInvariants()
	return p
}

func (w *world) writeStatus(st batchv1.JobStatus) {
	w.t.Helper()
	next := w.job.DeepCopy()
	next.Status = st
	if errs := jobstatus.ValidateUpdate(w.job, next); len(errs) > 0 {
		w.t.Fatalf("sync %d: the API server would reject the status write: %v\nplan:\n%s", w.syncs, errs.ToAggregate(), w.lastPlan)
	}
	old := w.job.Status
	if !w.elasticOK && st.Succeeded < old.Succeeded {
		w.t.Fatalf("sync %d: succeeded went back from %d to %d", w.syncs, old.Succeeded, st.Succeeded)
	}
	if st.Failed < old.Failed {
		w.t.Fatalf("sync %d: failed went back from %d to %d", w.syncs, old.Failed, st.Failed)
	}
	// A UID leaves the ledger once and never comes back.
	now := sets.New[types.UID]()
	if u := st.UncountedTerminatedPods; u != nil {
		now.Insert(u.Succeeded...)
		now.Insert(u.Failed...)
	}
	if again := now.Intersection(w.counted); again.Len() > 0 {
		w.t.Fatalf("sync %d: UIDs %v are uncounted again after being counted", w.syncs, sets.List(again))
	}
	if u := old.UncountedTerminatedPods; u != nil {
		for _, uid := range append(slices.Clone(u.Succeeded), u.Failed...) {
			if !now.Has(uid) {
				w.counted.Insert(uid)
			}
		}
	}
	w.job = next
}

func (w *world) checkInvariants() {
	w.t.Helper()
	if w.job.Spec.CompletionMode == nil || *w.job.Spec.CompletionMode != batchv1.IndexedCompletion {
		return
	}
	seen := map[int]string{}
	for _, pod := range w.pods {
		if isTerminal(pod) || pod.DeletionTimestamp != nil {
			continue
		}
		ix, err := indexes.PodIndex(owner.BatchJob, pod)
		if err != nil {
			continue
		}
		if other, dup := seen[ix]; dup {
			w.t.Fatalf("sync %d: index %d has two active pods: %s and %s", w.syncs, ix, other, pod.Name)
		}
		seen[ix] = pod.Name
		done, _ := plainindexes.Parse(w.job.Status.CompletedIndexes, plainindexes.NoLimit)
		if done.Has(ix) && w.created > 0 && pod.CreationTimestamp.Time.Equal(w.now) {
			w.t.Fatalf("sync %d: pod %s created for index %d, which already succeeded", w.syncs, pod.Name, ix)
		}
	}
}

func (w *world) pod(name string) *corev1.Pod {
	for _, p := range w.pods {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func (w *world) removeFinalizer(pod *corev1.Pod) {
	pod.Finalizers = slices.DeleteFunc(slices.Clone(pod.Finalizers), func(f string) bool { return f == batchv1.JobTrackingFinalizer })
	if len(pod.Finalizers) == 0 {
		pod.Finalizers = nil
	}
}

// deletePod marks the pod deleted; it goes away once terminal (or never started) and
// without finalizers.
func (w *world) deletePod(pod *corev1.Pod) {
	if pod.DeletionTimestamp == nil {
		pod.DeletionTimestamp = ptr.To(metav1.NewTime(w.now))
		pod.DeletionGracePeriodSeconds = ptr.To[int64](30)
	}
}

// gc drops pods that are deleted, without finalizers, and done terminating.
func (w *world) gc() {
	w.pods = slices.DeleteFunc(w.pods, func(p *corev1.Pod) bool {
		return p.DeletionTimestamp != nil && len(p.Finalizers) == 0 && (isTerminal(p) || p.Status.Phase == corev1.PodPending)
	})
}

func (w *world) createPod(c Creation) {
	w.seq++
	w.created++
	pod := c.Pod.DeepCopy()
	pod.Name = pod.GenerateName + strconv.Itoa(w.seq)
	pod.UID = types.UID(fmt.Sprintf("pod-%d", w.seq))
	pod.CreationTimestamp = metav1.NewTime(w.now)
	pod.Status.Phase = corev1.PodPending
	w.pods = append(w.pods, pod)
}

// Kubelet actions.

func (w *world) active() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range w.pods {
		if !isTerminal(p) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func (w *world) terminating() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range w.pods {
		if !isTerminal(p) && p.DeletionTimestamp != nil {
			out = append(out, p)
		}
	}
	return out
}

func (w *world) byIndex(ix int) *corev1.Pod {
	for _, p := range w.active() {
		if i, err := indexes.PodIndex(owner.BatchJob, p); err == nil && i == ix {
			return p
		}
	}
	return nil
}

func (w *world) start(pod *corev1.Pod) {
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = ptr.To(metav1.NewTime(w.now))
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(w.now)}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(w.now)}}}}
}

func (w *world) terminate(pod *corev1.Pod, phase corev1.PodPhase, exitCode int32) {
	pod.Status.Phase = phase
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(w.now)}}
	restarts := int32(0)
	if len(pod.Status.ContainerStatuses) > 0 {
		restarts = pod.Status.ContainerStatuses[0].RestartCount
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", RestartCount: restarts, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: exitCode, StartedAt: metav1.NewTime(w.now), FinishedAt: metav1.NewTime(w.now),
	}}}}
}

func (w *world) succeed(pod *corev1.Pod)          { w.terminate(pod, corev1.PodSucceeded, 0) }
func (w *world) fail(pod *corev1.Pod, code int32) { w.terminate(pod, corev1.PodFailed, code) }

// evict fails the pod with a DisruptionTarget condition, as the eviction API does.
func (w *world) evict(pod *corev1.Pod) {
	w.terminate(pod, corev1.PodFailed, 137)
	pod.Status.Reason = "Evicted"
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", LastTransitionTime: metav1.NewTime(w.now)})
}

// restartContainer records a container restart of a running pod (restartPolicy
// OnFailure).
func (w *world) restartContainer(pod *corev1.Pod) {
	if len(pod.Status.ContainerStatuses) == 0 {
		w.start(pod)
	}
	pod.Status.ContainerStatuses[0].RestartCount++
}

// finishTerminating lets the kubelet end every terminating pod (it fails).
func (w *world) finishTerminating() {
	for _, p := range w.terminating() {
		w.terminate(p, corev1.PodFailed, 143)
	}
}

// runAll starts every pending pod.
func (w *world) runAll() {
	for _, p := range w.active() {
		if p.Status.Phase == corev1.PodPending {
			w.start(p)
		}
	}
}

// untilFinished syncs, lets kubelet act, and advances time, until the Job finishes.
func (w *world) untilFinished(maxSyncs int, kubelet func(w *world)) batchv1.JobConditionType {
	w.t.Helper()
	for range maxSyncs {
		p := w.sync()
		if t, done := jobstatus.Finished(&w.job.Status); done {
			return t
		}
		kubelet(w)
		w.finishTerminating()
		w.gc()
		if p.RequeueAfter > 0 {
			w.advance(p.RequeueAfter)
		} else {
			w.advance(time.Second)
		}
	}
	w.t.Fatalf("job did not finish within %d syncs; last plan:\n%s\nstatus: %+v", maxSyncs, w.lastPlan, w.job.Status)
	return ""
}

// assertDone checks the end state every finished Job must have.
func (w *world) assertDone(wantType batchv1.JobConditionType, wantReason string) {
	w.t.Helper()
	t, done := jobstatus.Finished(&w.job.Status)
	if !done || t != wantType {
		w.t.Fatalf("job finished with %q (done=%v), want %q", t, done, wantType)
	}
	cond := jobstatus.FindCondition(w.job.Status.Conditions, t)
	if cond.Reason != wantReason {
		w.t.Fatalf("condition %s reason = %q, want %q (message %q)", t, cond.Reason, wantReason, cond.Message)
	}
	// One more sync cleans up the finalizers of whatever is left.
	for range 3 {
		w.sync()
		w.gc()
	}
	for _, p := range w.pods {
		if owner.BatchJob.HasFinalizer(p) {
			w.t.Fatalf("pod %s still carries the tracking finalizer after the job finished", p.Name)
		}
	}
	if u := w.job.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		w.t.Fatalf("uncounted pods left after finishing: %+v", u)
	}
	if w.job.Status.Active != 0 || ptr.Deref(w.job.Status.Terminating, 0) != 0 {
		w.t.Fatalf("finished job has active=%d terminating=%d", w.job.Status.Active, ptr.Deref(w.job.Status.Terminating, 0))
	}
}
