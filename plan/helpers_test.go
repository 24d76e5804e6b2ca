package plan

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
)

// Builders shared by the decision tables, the Settle and String tests and the
// benchmarks. Every name starts with tb, so that a builder reads as one at the call
// site. (The multi-step scenarios, in package plan_test, have their own.)

// tbNow is the time of every sync in the tables.
var tbNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

const tbJobUID = types.UID("job-uid")

// tbAgo returns tbNow minus d.
func tbAgo(d time.Duration) time.Time { return tbNow.Add(-d) }

func tbTime(t time.Time) *metav1.Time { return ptr.To(metav1.NewTime(t)) }

// tbLabels are the labels the API server puts on the template of Job "job".
func tbLabels() map[string]string {
	return map[string]string{
		batchv1.JobNameLabel:       "job",
		batchv1.ControllerUidLabel: string(tbJobUID),
		"job-name":                 "job",
		"controller-uid":           string(tbJobUID),
	}
}

// tbJob returns a defaulted NonIndexed Job ns/job with completions and parallelism 1,
// started an hour before tbNow, with an empty ledger, then applies mods.
func tbJob(mods ...func(*batchv1.Job)) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns", UID: tbJobUID, CreationTimestamp: metav1.NewTime(tbAgo(time.Hour))},
		Spec: batchv1.JobSpec{
			Parallelism:          ptr.To[int32](1),
			Completions:          ptr.To[int32](1),
			BackoffLimit:         ptr.To[int32](6),
			CompletionMode:       ptr.To(batchv1.NonIndexedCompletion),
			Suspend:              ptr.To(false),
			PodReplacementPolicy: ptr.To(batchv1.TerminatingOrFailed),
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: string(tbJobUID)}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: tbLabels()},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				},
			},
		},
		Status: batchv1.JobStatus{
			StartTime:               tbTime(tbAgo(time.Hour)),
			Ready:                   ptr.To[int32](0),
			Terminating:             ptr.To[int32](0),
			UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
		},
	}
	for _, m := range mods {
		m(j)
	}
	return j
}

func tbCompletions(n int32) func(*batchv1.Job) {
	return func(j *batchv1.Job) { j.Spec.Completions = ptr.To(n) }
}

func tbNoCompletions(j *batchv1.Job) { j.Spec.Completions = nil }

func tbParallelism(n int32) func(*batchv1.Job) {
	return func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To(n) }
}

// tbSize sets completions and parallelism.
func tbSize(completions, parallelism int32) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		j.Spec.Completions = ptr.To(completions)
		j.Spec.Parallelism = ptr.To(parallelism)
	}
}

func tbBackoffLimit(n int32) func(*batchv1.Job) {
	return func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To(n) }
}

func tbIndexed(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) }

// tbPerIndex makes the Job Indexed with backoffLimitPerIndex (and maxFailedIndexes
// when max >= 0), and the backoffLimit the API defaults to in that case.
func tbPerIndex(limit int32, max int32) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		tbIndexed(j)
		j.Spec.BackoffLimitPerIndex = ptr.To(limit)
		j.Spec.BackoffLimit = ptr.To[int32](2147483647)
		if max >= 0 {
			j.Spec.MaxFailedIndexes = ptr.To(max)
		}
		if j.Status.FailedIndexes == nil {
			j.Status.FailedIndexes = ptr.To("")
		}
	}
}

// tbFailurePolicy sets a pod failure policy and the replacement policy Failed it
// implies.
func tbFailurePolicy(rules ...batchv1.PodFailurePolicyRule) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: rules}
		j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	}
}

func tbExitRule(action batchv1.PodFailurePolicyAction, codes ...int32) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{
		Action:      action,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: codes},
	}
}

func tbConditionRule(action batchv1.PodFailurePolicyAction, t corev1.PodConditionType) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{
		Action:          action,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: t, Status: corev1.ConditionTrue}},
	}
}

func tbSuccessPolicy(rules ...batchv1.SuccessPolicyRule) func(*batchv1.Job) {
	return func(j *batchv1.Job) { j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: rules} }
}

func tbReplaceFailed(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) }

func tbSuspend(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }

func tbOnFailure(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }

func tbDeadline(seconds int64) func(*batchv1.Job) {
	return func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To(seconds) }
}

func tbManagedBy(name string) func(*batchv1.Job) {
	return func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To(name) }
}

func tbJobDeleting(j *batchv1.Job) {
	j.DeletionTimestamp = tbTime(tbAgo(time.Second))
	j.Finalizers = []string{"orphan"}
}

func tbStartedAt(t time.Time) func(*batchv1.Job) {
	return func(j *batchv1.Job) { j.Status.StartTime = tbTime(t) }
}

func tbNotStarted(j *batchv1.Job) { j.Status.StartTime = nil }

// tbStatus edits the Job's status.
func tbStatus(f func(*batchv1.JobStatus)) func(*batchv1.Job) {
	return func(j *batchv1.Job) { f(&j.Status) }
}

// tbCond returns a True condition set an hour before tbNow.
func tbCond(t batchv1.JobConditionType, reason, message string) batchv1.JobCondition {
	at := metav1.NewTime(tbAgo(time.Hour))
	return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastProbeTime: at, LastTransitionTime: at}
}

func tbWithCond(c batchv1.JobCondition) func(*batchv1.Job) {
	return func(j *batchv1.Job) { j.Status.Conditions = append(j.Status.Conditions, c) }
}

// tbPod returns a running, not ready pod of Job "job", scheduled on a node, created
// ten minutes before tbNow and carrying the tracking finalizer; its UID is its name.
func tbPod(name string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Namespace:         "ns",
			UID:               types.UID(name),
			Labels:            tbLabels(),
			CreationTimestamp: metav1.NewTime(tbAgo(10 * time.Minute)),
			Finalizers:        []string{batchv1.JobTrackingFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "Job", Name: "job", UID: tbJobUID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{NodeName: "node-1", RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main"}}},
		Status: corev1.PodStatus{
			Phase:             corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

// tbPods returns n pods named prefix-0 ... prefix-(n-1).
func tbPods(prefix string, n int, mods ...func(*corev1.Pod)) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = tbPod(prefix+"-"+strconv.Itoa(i), mods...)
	}
	return out
}

// tbIndexedPods returns one pod per listed index, named prefix-<index>.
func tbIndexedPods(prefix string, ixs []int, mods ...func(*corev1.Pod)) []*corev1.Pod {
	out := make([]*corev1.Pod, len(ixs))
	for i, ix := range ixs {
		out[i] = tbPod(prefix+"-"+strconv.Itoa(ix), append([]func(*corev1.Pod){tbIx(ix)}, mods...)...)
	}
	return out
}

func tbPhase(ph corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase = ph }
}

func tbPending(p *corev1.Pod) {
	p.Status.Phase = corev1.PodPending
	p.Status.ContainerStatuses = nil
}

// tbTerminated ends the pod's container with code at time at.
func tbTerminated(ph corev1.PodPhase, code int32, at time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = ph
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name:  "main",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(at)}},
		}}
	}
}

// tbSucceeded ends the pod successfully half an hour before tbNow.
var tbSucceeded = tbTerminated(corev1.PodSucceeded, 0, tbAgo(30*time.Minute))

// tbFailed ends the pod with exit code 1 half an hour before tbNow, long enough
// ago for any backoff to have passed.
var tbFailed = tbTerminated(corev1.PodFailed, 1, tbAgo(30*time.Minute))

func tbFailedWith(code int32) func(*corev1.Pod) {
	return tbTerminated(corev1.PodFailed, code, tbAgo(30*time.Minute))
}

func tbFailedAgo(d time.Duration) func(*corev1.Pod) {
	return tbTerminated(corev1.PodFailed, 1, tbAgo(d))
}

func tbReadySince(t time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t)})
	}
}

var tbReady = tbReadySince(tbAgo(5 * time.Minute))

func tbPodCondition(t corev1.PodConditionType) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue})
	}
}

// tbDeleted marks the pod as being deleted a minute before tbNow.
func tbDeleted(p *corev1.Pod) {
	p.DeletionTimestamp = tbTime(tbAgo(time.Minute))
	p.DeletionGracePeriodSeconds = ptr.To[int64](30)
}

func tbNoFinalizer(p *corev1.Pod) { p.Finalizers = nil }

func tbOrphan(p *corev1.Pod) { p.OwnerReferences = nil }

func tbOwnedBy(uid types.UID) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: uid, Controller: ptr.To(true)}}
	}
}

func tbPodLabels(l map[string]string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels = l }
}

func tbIx(ix int) func(*corev1.Pod) {
	return tbIxString(strconv.Itoa(ix))
}

func tbIxString(s string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[batchv1.JobCompletionIndexAnnotation] = s
		p.Labels[batchv1.JobCompletionIndexAnnotation] = s
	}
}

func tbFailureCount(failed, ignored int) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(failed)
		if ignored > 0 {
			p.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(ignored)
		}
	}
}

func tbRestarts(n int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for i := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[i].RestartCount = n
		}
	}
}

func tbInitRestarts(n int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, corev1.ContainerStatus{Name: "init", RestartCount: n})
	}
}

func tbCreatedAt(t time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t) }
}

func tbUnscheduled(p *corev1.Pod) { p.Spec.NodeName = "" }

// tbInput is the input of a sync at tbNow by the default controller with expectations
// satisfied.
func tbInput(job *batchv1.Job, pods ...*corev1.Pod) Input {
	return Input{Workload: JobWorkload(job), Pods: pods, ControllerName: batchv1.JobControllerName, ExpectationsSatisfied: true, Now: tbNow}
}

// inputJob returns the batch/v1 Job in's Workload was converted from, or nil.
func inputJob(in Input) *batchv1.Job {
	if in.Workload == nil {
		return nil
	}
	job, _ := in.Workload.Object.(*batchv1.Job)
	return job
}

// tbWithStatus returns a copy of job with status st.
func tbWithStatus(job *batchv1.Job, st batchv1.JobStatus) *batchv1.Job {
	out := job.DeepCopy()
	out.Status = *st.DeepCopy()
	return out
}

// tbCompute runs Compute, requires success and checks the promises every plan keeps
// (tbCheckPlan).
func tbCompute(t *testing.T, in Input) *Plan {
	t.Helper()
	p, err := Compute(in)
	require.NoError(t, err, "Compute")
	require.NotNil(t, p, "Compute returned a nil plan")
	tbCheckPlan(t, in, p)
	if job := inputJob(in); job != nil {
		// The same owner converted again, from a copy of the Job, plans the same.
		asCopy := in
		asCopy.Workload = JobWorkload(job.DeepCopy())
		pw, err := Compute(asCopy)
		require.NoError(t, err, "Compute with a copy of the Job")
		if diff := cmp.Diff(p, pw); diff != "" {
			t.Errorf("a copy of the Job plans differently (-Job +copy):\n%s", diff)
		}
	}
	tbSameWithFacts(t, in, p)
	return p
}

// tbSameWithFacts checks that Compute plans in as p with a FactCache, both when
// the FactCache knows none of the pods and when it knows them all (the second
// sync of the same list).
func tbSameWithFacts(t *testing.T, in Input, p *Plan) {
	t.Helper()
	in.Facts = new(FactCache)
	for _, sync := range []string{"first", "second"} {
		pf, err := Compute(in)
		require.NoError(t, err, "Compute with a FactCache, %s sync", sync)
		if diff := cmp.Diff(p, pf); diff != "" {
			t.Errorf("the %s sync with a FactCache plans differently (-without +with):\n%s", sync, diff)
		}
	}
}

// tbCheckPlan checks what holds for every plan:
//   - the API server accepts its status writes in order: RecordStatus, then Status;
//   - StatusChanged says whether Status differs from the Job's status, except
//     a change of active, ready and terminating alone while expectations are
//     unsatisfied (deferred);
//   - Settle with every removal succeeding yields Status;
//   - it never both creates and deletes, and respects the caps;
//   - no pod gets two finalizer patches (RemoveFinalizers and a deletion with
//     RemoveFinalizerFirst), and no pod is deleted twice;
//   - a skipped plan is empty.
func tbCheckPlan(t *testing.T, in Input, p *Plan) {
	t.Helper()
	if p.Skip != "" {
		empty := &Plan{Skip: p.Skip}
		if diff := cmp.Diff(empty, p); diff != "" {
			t.Errorf("skipped plan is not empty (-want +got):\n%s", diff)
		}
		return
	}
	prev := inputJob(in)
	if p.RecordStatus != nil {
		next := tbWithStatus(inputJob(in), *p.RecordStatus)
		if errs := jobstatus.ValidateUpdate(prev, next); len(errs) > 0 {
			t.Errorf("API server rejects RecordStatus: %v\nplan:\n%s", errs.ToAggregate(), p)
		}
		prev = next
	}
	final := tbWithStatus(inputJob(in), p.Status)
	if errs := jobstatus.ValidateUpdate(prev, final); len(errs) > 0 {
		t.Errorf("API server rejects Status: %v\nplan:\n%s", errs.ToAggregate(), p)
	}
	differs := !equality.Semantic.DeepEqual(&p.Status, &inputJob(in).Status)
	deferred := differs && !in.ExpectationsSatisfied && onlyPodCountsDiffer(&p.Status, &inputJob(in).Status)
	if got, want := p.StatusChanged, differs && !deferred; got != want {
		t.Errorf("StatusChanged = %v, want %v (Status differs from the Job's: %v; only in active, ready, terminating with unsatisfied expectations: %v)", got, want, differs, deferred)
	}

	removed := sets.New[types.UID]()
	for _, a := range p.RemoveFinalizers {
		removed.Insert(a.Pod.UID)
	}
	s := p.Settle(removed)
	if diff := cmp.Diff(p.Status, s.Status); diff != "" {
		t.Errorf("Settle(all removals) differs from Status (-Status +Settle):\n%s", diff)
	}

	if len(p.Create) > 0 && len(p.Delete) > 0 {
		t.Errorf("plan both creates %d and deletes %d pods", len(p.Create), len(p.Delete))
	}
	if max := orDefault(in.Options.MaxCreatesPerSync, DefaultMaxCreatesPerSync); len(p.Create) > max {
		t.Errorf("plan creates %d pods, more than the cap %d", len(p.Create), max)
	}
	// A finishing Job deletes all its active pods at once, as upstream; other
	// deletions (scale-down, suspend, strays) respect the cap.
	capped := 0
	for _, d := range p.Delete {
		if d.RemoveFinalizerFirst {
			capped++
		}
	}
	if max := orDefault(in.Options.MaxDeletesPerSync, DefaultMaxDeletesPerSync); capped > max {
		t.Errorf("plan deletes %d pods, more than the cap %d", capped, max)
	}
	if inputJob(in).DeletionTimestamp != nil && (len(p.Create) > 0 || len(p.Delete) > 0 || len(p.Adopt) > 0 || len(p.Release) > 0) {
		t.Errorf("plan for a Job being deleted creates %d, deletes %d, adopts %d, releases %d pods", len(p.Create), len(p.Delete), len(p.Adopt), len(p.Release))
	}
	patched := map[types.UID]int{}
	for _, a := range p.RemoveFinalizers {
		patched[a.Pod.UID]++
	}
	deleted := map[types.UID]int{}
	for _, d := range p.Delete {
		deleted[d.Pod.UID]++
		if d.RemoveFinalizerFirst && owner.BatchJob.HasFinalizer(d.Pod) {
			patched[d.Pod.UID]++
		}
	}
	for uid, n := range patched {
		if n > 1 {
			t.Errorf("pod %s gets %d finalizer patches, want 1", uid, n)
		}
	}
	for uid, n := range deleted {
		if n > 1 {
			t.Errorf("pod %s is deleted %d times", uid, n)
		}
	}
	// Strings must not panic and must be stable.
	if a, b := p.String(), p.String(); a != b {
		t.Errorf("String is not stable:\n%s\n---\n%s", a, b)
	}
}

// tbNames returns the names of the pods of actions, in order.
func tbNames[T any](xs []T, pod func(T) *corev1.Pod) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, pod(x).Name)
	}
	return out
}

func tbActionNames(as []PodAction) []string {
	return tbNames(as, func(a PodAction) *corev1.Pod { return a.Pod })
}

func tbDeleteNames(ds []Deletion) []string {
	return tbNames(ds, func(d Deletion) *corev1.Pod { return d.Pod })
}

func tbCreateIndexes(cs []Creation) []int {
	out := make([]int, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Index)
	}
	return out
}

// tbUIDs returns the UIDs as strings (nil for an empty list), in order.
func tbUIDs(uids []types.UID) []string {
	if len(uids) == 0 {
		return nil
	}
	out := make([]string, len(uids))
	for i, u := range uids {
		out[i] = string(u)
	}
	return out
}

// tbCondOf returns a short description of the condition of type t in st ("" when
// absent): "Status/Reason/Message".
func tbCondOf(st *batchv1.JobStatus, t batchv1.JobConditionType) string {
	c := jobstatus.FindCondition(st.Conditions, t)
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s/%s/%s", c.Status, c.Reason, c.Message)
}

// tbCondTypes lists the types of the True conditions of st, in order.
func tbCondTypes(st *batchv1.JobStatus) []batchv1.JobConditionType {
	var out []batchv1.JobConditionType
	for _, c := range st.Conditions {
		if c.Status == corev1.ConditionTrue {
			out = append(out, c.Type)
		}
	}
	return out
}

// tbInputCase is a named input, for the tests that run over every table.
type tbInputCase struct {
	name string
	in   Input
}

// tbDeepCopyInput returns a copy of in sharing nothing with it.
func tbDeepCopyInput(in Input) Input {
	out := in
	if job := inputJob(in); job != nil {
		out.Workload = JobWorkload(job.DeepCopy())
	}
	if in.Pods != nil {
		out.Pods = make([]*corev1.Pod, len(in.Pods))
		for i, p := range in.Pods {
			out.Pods[i] = p.DeepCopy()
		}
	}
	if in.PendingFinalizerRemovals != nil {
		out.PendingFinalizerRemovals = in.PendingFinalizerRemovals.Clone()
	}
	return out
}

// tbPodNames returns prefix-0 ... prefix-(n-1).
func tbPodNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + "-" + strconv.Itoa(i)
	}
	return out
}

// tbSeq returns 0 ... n-1.
func tbSeq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
