package explain

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

// ErrNoJob is wrapped by the errors of Explain when it has no Job (or owner of
// another kind) to explain.
var ErrNoJob = errors.New("no job")

// ControllerFor returns the controller name a Job's own controller answers to: its
// spec.managedBy, or batchv1.JobControllerName when unset.
func ControllerFor(job *batchv1.Job) string {
	return ptr.Deref(job.Spec.ManagedBy, batchv1.JobControllerName)
}

// Explain computes the plan of the next sync of job with pods (the Job's pods and
// any others: pods that are not the Job's are listed as ignored) and explains it.
// It is ExplainWorkload of plan.JobWorkload(job), with the Job itself checked by
// the API's validation. It does not modify job or pods.
func Explain(job *batchv1.Job, pods []*corev1.Pod, opts Options) (*Report, error) {
	if job == nil {
		return nil, fmt.Errorf("%w: job is nil", ErrNoJob)
	}
	return explain(newWorkload(plan.JobWorkload(job), job, opts.Owner), pods, opts)
}

// ExplainWorkload is Explain for an owner of any kind, given as the plan.Workload
// its controller would build (its spec in Job terms, its status as a
// batchv1.JobStatus): this is the door for a custom resource whose fields are not
// named as a Job's, converted by the caller's own function (the one its controller
// uses). Options.Owner says which kind of controller reference makes a pod the
// owner's and which tracking finalizer counts it; the zero value is owner.BatchJob.
// The spec and status are validated as a batch/v1 Job's would be. It does not
// modify w (or what it points to) or pods.
func ExplainWorkload(w plan.Workload, pods []*corev1.Pod, opts Options) (*Report, error) {
	return explain(newWorkload(w, nil, opts.Owner), pods, opts)
}

// workload is the owner being explained: the Workload plan reads, its kind, and
// the same owner as a batch/v1 Job for the API's validation of spec and status.
type workload struct {
	plan.Workload
	kind owner.Kind
	// noun names the kind in messages: "Job" for a batch/v1 Job, else its Kind.
	noun string
	// job is the Job the workload came from, or one built from the Workload: only
	// its spec and status are read.
	job *batchv1.Job
}

func newWorkload(w plan.Workload, job *batchv1.Job, kind owner.Kind) *workload {
	if kind == (owner.Kind{}) {
		kind = owner.BatchJob
	}
	if job == nil {
		job = &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, UID: w.UID},
			Spec: batchv1.JobSpec{
				Parallelism:           w.Spec.Parallelism,
				Completions:           w.Spec.Completions,
				CompletionMode:        w.Spec.CompletionMode,
				BackoffLimit:          w.Spec.BackoffLimit,
				BackoffLimitPerIndex:  w.Spec.BackoffLimitPerIndex,
				MaxFailedIndexes:      w.Spec.MaxFailedIndexes,
				PodFailurePolicy:      w.Spec.PodFailurePolicy,
				SuccessPolicy:         w.Spec.SuccessPolicy,
				PodReplacementPolicy:  w.Spec.PodReplacementPolicy,
				Suspend:               w.Spec.Suspend,
				ActiveDeadlineSeconds: w.Spec.ActiveDeadlineSeconds,
				Selector:              w.Spec.Selector,
				ManagedBy:             w.Spec.ManagedBy,
			},
			Status: w.Status,
		}
		if w.Spec.Template != nil {
			job.Spec.Template = *w.Spec.Template
		}
	}
	noun := "Job"
	if !isBatchJob(kind) {
		noun = kind.Kind
	}
	return &workload{Workload: w, kind: kind, noun: noun, job: job}
}

// isBatchJob reports whether kind is that of batch Jobs (group batch, kind Job).
func isBatchJob(kind owner.Kind) bool {
	return kind.Group == owner.BatchJob.Group && kind.Kind == owner.BatchJob.Kind
}

// controller is the controller name the workload's own controller answers to.
func (w *workload) controller() string {
	return ptr.Deref(w.Spec.ManagedBy, batchv1.JobControllerName)
}

func explain(w *workload, pods []*corev1.Pod, opts Options) (*Report, error) {
	if err := w.kind.Validate(); err != nil {
		return nil, fmt.Errorf("Options.Owner: %w", err)
	}
	controller := opts.Controller
	if controller == "" {
		controller = w.controller()
	}
	r := &Report{Job: jobInfo(w), Controller: controller, Now: opts.Now.UTC()}
	if len(opts.Assume) > 0 {
		var err error
		pods, err = applyAssumptions(w, pods, opts.Assume, opts.Now)
		if err != nil {
			return nil, err
		}
		for _, a := range opts.Assume {
			r.Assumed = append(r.Assumed, a.String())
		}
	}
	p, err := plan.Compute(plan.Input{
		Workload:              &w.Workload,
		Pods:                  candidates(w, pods),
		ControllerName:        controller,
		ExpectationsSatisfied: !opts.ExpectationsUnsatisfied,
		Now:                   opts.Now,
		Options:               plan.Options{Backoff: opts.Backoff},
		Owner:                 w.kind,
	})
	if err != nil {
		return nil, fmt.Errorf("planning %s %s/%s: %w", strings.ToLower(w.noun), w.Namespace, w.Name, err)
	}
	c := classify(w, pods, p)
	r.Pods = c.pods
	r.Skip = p.Skip
	r.Warnings = p.Warnings
	if p.Skip == "" {
		r.Decisions = decisions(p)
		r.StatusChanges = diffStatus(&w.Status, &p.Status)
		if p.RequeueAfter > 0 {
			r.Requeue = &Requeue{After: Duration(p.RequeueAfter), Reason: p.RequeueReason}
		}
		r.IndexBackoff = indexBackoff(w, c, p, opts)
		noteKeptFinalizers(w, r, p)
	}
	r.Blockers = blockers(w, c, p, r, opts)
	r.Diagnostics = diagnose(w, pods, c, p, controller, len(opts.Assume) > 0)
	return r, nil
}

func jobInfo(w *workload) JobInfo {
	info := JobInfo{
		Namespace:   w.Namespace,
		Name:        w.Name,
		UID:         string(w.UID),
		ManagedBy:   ptr.Deref(w.Spec.ManagedBy, ""),
		Mode:        string(ptr.Deref(w.Spec.CompletionMode, batchv1.NonIndexedCompletion)),
		Completions: w.Spec.Completions,
		Parallelism: ptr.Deref(w.Spec.Parallelism, 1),
		Suspended:   ptr.Deref(w.Spec.Suspend, false),
		Deleting:    w.Deleting,
	}
	if w.kind != owner.BatchJob {
		info.APIVersion = w.kind.GroupVersionKind().GroupVersion().String()
		info.Kind = w.kind.Kind
		info.Finalizer = w.kind.Finalizer
	}
	if t, ok := jobstatus.Finished(&w.Status); ok {
		info.Finished = string(t)
	}
	return info
}

// candidates are the pods plan.Compute should see: those of the Job's namespace
// (plan ignores other controllers' pods itself).
func candidates(w *workload, pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if p != nil && p.Namespace == w.Namespace {
			out = append(out, p)
		}
	}
	return out
}

// classification is what Explain knows of the pods beyond the plan.
type classification struct {
	pods []Pod
	// own are the Job's pods as plan counts them: owned and still matching, plus
	// orphans to adopt.
	own []*corev1.Pod
	// owned counts the pods controlled by the Job by class: what the status counters
	// of the last sync counted (orphans are counted once adopted).
	owned map[Class]int
	// onlyFailed is podReplacementPolicy Failed with the API's default.
	onlyFailed bool
}

func onlyFailed(w *workload) bool {
	def := batchv1.TerminatingOrFailed
	if w.Spec.PodFailurePolicy != nil {
		def = batchv1.Failed
	}
	return ptr.Deref(w.Spec.PodReplacementPolicy, def) == batchv1.Failed
}

func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func classify(w *workload, pods []*corev1.Pod, p *plan.Plan) *classification {
	c := &classification{owned: map[Class]int{}, onlyFailed: onlyFailed(w)}
	var selector labels.Selector
	if w.Spec.Selector != nil {
		if s, err := metav1.LabelSelectorAsSelector(w.Spec.Selector); err == nil {
			selector = s
		}
	}
	adopt, release := actionSet(p.Adopt), actionSet(p.Release)
	uncounted := map[string]string{}
	if u := w.Status.UncountedTerminatedPods; u != nil {
		for _, uid := range u.Succeeded {
			uncounted[string(uid)] = "succeeded"
		}
		for _, uid := range u.Failed {
			uncounted[string(uid)] = "failed"
		}
	}
	indexed := ptr.Deref(w.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	var active []*corev1.Pod
	at := map[*corev1.Pod]int{}
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		out := Pod{Name: pod.Name, UID: string(pod.UID), Phase: string(pod.Status.Phase), Finalizer: w.kind.HasFinalizer(pod)}
		if out.Phase == "" {
			out.Phase = string(corev1.PodPending)
		}
		if indexed {
			if ix, err := indexes.PodIndex(pod); err == nil {
				out.Index = ptr.To(ix)
			}
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case pod.Namespace != w.Namespace:
			out.Classes, out.Note = []Class{ClassIgnored}, "namespace "+pod.Namespace
		case release[pod]:
			out.Classes = []Class{ClassReleased}
			out.Note = "labels no longer match the selector"
		case ref != nil && ref.UID != w.UID:
			out.Classes = []Class{ClassIgnored}
			if w.kind.Matches(ref) && ref.Name == w.Name {
				out.Note = fmt.Sprintf("controlled by an earlier %s %s (uid %s)", w.noun, ref.Name, ref.UID)
			} else {
				out.Note = fmt.Sprintf("controlled by %s %s", ref.Kind, ref.Name)
			}
		case ref == nil && !adopt[pod]:
			// An orphan the plan does not adopt: say why.
			if selector == nil || !selector.Matches(labels.Set(pod.Labels)) {
				out.Classes = []Class{ClassIgnored}
				out.Note = "no controller, and the " + w.noun + "'s selector does not match"
				break
			}
			out.Classes = []Class{ClassOrphan}
			switch {
			case p.Skip != "":
				out.Note = "not adopted: " + p.Skip
			case jobstatus.IsFinished(&w.Status):
				out.Note = "not adopted: the " + w.noun + " has finished"
			case w.Deleting:
				out.Note = "not adopted: the " + w.noun + " is being deleted"
			case pod.DeletionTimestamp != nil:
				out.Note = "not adopted: the pod is being deleted"
			}
		default:
			if ref == nil {
				out.Classes = append(out.Classes, ClassOrphan)
			}
			c.own = append(c.own, pod)
			terminal := isTerminal(pod)
			deleting := pod.DeletionTimestamp != nil
			switch {
			case !terminal && !deleting:
				out.Classes = append(out.Classes, ClassActive)
				if isReady(pod) {
					out.Classes = append(out.Classes, ClassReady)
				}
				active = append(active, pod)
				at[pod] = len(c.pods)
			case !terminal:
				out.Classes = append(out.Classes, ClassTerminating)
			case pod.Status.Phase == corev1.PodSucceeded:
				out.Classes = append(out.Classes, ClassSucceeded)
			default:
				out.Classes = append(out.Classes, ClassFailed)
			}
			finished := terminal || (deleting && !c.onlyFailed)
			if finished && out.Finalizer {
				out.Classes = append(out.Classes, ClassUncounted)
				if kind, ok := uncounted[out.UID]; ok {
					out.Note = "in status.uncountedTerminatedPods." + kind
				} else {
					out.Note = "not yet in status.uncountedTerminatedPods"
				}
			}
		}
		c.pods = append(c.pods, out)
	}
	if indexed && w.Spec.Completions != nil {
		for _, s := range indexes.Strays(active, int(*w.Spec.Completions)).Remove {
			i := at[s.Pod]
			switch s.Reason {
			case indexes.StrayDuplicate:
				c.pods[i].Classes = append(c.pods[i].Classes, ClassDuplicateIndex)
				c.pods[i].Note = fmt.Sprintf("another active pod of index %d is kept", s.Index)
			case indexes.StrayOutOfRange:
				c.pods[i].Classes = append(c.pods[i].Classes, ClassStray)
				c.pods[i].Note = fmt.Sprintf("index %d at or above completions %d", s.Index, *w.Spec.Completions)
			default:
				c.pods[i].Classes = append(c.pods[i].Classes, ClassStray)
				c.pods[i].Note = "no valid completion index"
			}
		}
	}
	for _, pod := range c.pods {
		if slices.Contains(pod.Classes, ClassOrphan) {
			continue
		}
		for _, cl := range pod.Classes {
			c.owned[cl]++
		}
	}
	return c
}

// decisions lists the plan's actions in execution order.
func decisions(p *plan.Plan) []Decision {
	var out []Decision
	for _, a := range p.Adopt {
		out = append(out, Decision{Action: ActionAdopt, Pod: a.Pod.Name, Reason: a.Reason})
	}
	for _, a := range p.Release {
		out = append(out, Decision{Action: ActionRelease, Pod: a.Pod.Name, Reason: a.Reason})
	}
	if rs := p.RecordStatus; rs != nil {
		var ns, nf int
		if u := rs.UncountedTerminatedPods; u != nil {
			ns, nf = len(u.Succeeded), len(u.Failed)
		}
		what := fmt.Sprintf("status.uncountedTerminatedPods succeeded=%d failed=%d", ns, nf)
		if rs.CompletedIndexes != "" {
			what += fmt.Sprintf(" completedIndexes=%q", rs.CompletedIndexes)
		}
		if rs.FailedIndexes != nil && *rs.FailedIndexes != "" {
			what += fmt.Sprintf(" failedIndexes=%q", *rs.FailedIndexes)
		}
		out = append(out, Decision{Action: ActionRecord, What: what,
			Reason: "finished pods are written to the status before their finalizers go, so each is counted exactly once"})
	}
	for _, a := range p.RemoveFinalizers {
		out = append(out, Decision{Action: ActionRemoveFinalizer, Pod: a.Pod.Name, Reason: a.Reason})
	}
	for _, d := range p.Delete {
		dec := Decision{Action: ActionDelete, Pod: d.Pod.Name, Reason: d.Reason}
		if d.RemoveFinalizerFirst {
			dec.What = "its tracking finalizer removed first, so it is not counted as failed"
		}
		out = append(out, dec)
	}
	for _, cr := range p.Create {
		dec := Decision{Action: ActionCreate, Reason: cr.Reason}
		if cr.Index >= 0 {
			dec.Index = ptr.To(cr.Index)
		}
		if cr.Pod != nil && cr.Pod.GenerateName != "" {
			dec.What = "generateName " + cr.Pod.GenerateName
		}
		out = append(out, dec)
	}
	for _, cc := range p.Conditions {
		out = append(out, Decision{Action: ActionCondition, What: fmt.Sprintf("%s=%s", cc.Type, cc.Status),
			Reason: strings.TrimSpace(cc.Reason + ": " + cc.Message)})
	}
	for _, e := range p.Events {
		out = append(out, Decision{Action: ActionEvent, What: e.Type + " " + e.Reason, Reason: e.Message})
	}
	return out
}

// indexBackoff finds the indexes of a Job with backoffLimitPerIndex whose
// replacement waits for the per-index backoff. The plan computes this internally
// but only exposes the earliest wait (RequeueAfter); the rule is the same: the last
// failed pod of an index that is neither finished nor active, with its failure
// count annotations.
func indexBackoff(w *workload, c *classification, p *plan.Plan, opts Options) []IndexWait {
	if w.Spec.BackoffLimitPerIndex == nil || w.Spec.Completions == nil ||
		ptr.Deref(w.Spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
		return nil
	}
	completions := int(*w.Spec.Completions)
	done, _ := indexes.Parse(p.Status.CompletedIndexes, completions)
	if p.Status.FailedIndexes != nil {
		failed, _ := indexes.Parse(*p.Status.FailedIndexes, completions)
		done = done.Union(failed)
	}
	created := map[int]bool{}
	for _, cr := range p.Create {
		created[cr.Index] = true
	}
	busy := map[int]bool{}
	last := map[int]*corev1.Pod{}
	for _, pod := range c.own {
		ix, err := indexes.PodIndex(pod)
		if err != nil || ix >= completions || done.Has(ix) {
			continue
		}
		if !isTerminal(pod) && pod.DeletionTimestamp == nil {
			busy[ix] = true
			continue
		}
		if !isFailedForBackoff(pod, c.onlyFailed) {
			continue
		}
		if prev, ok := last[ix]; !ok || later(pod, prev) {
			last[ix] = pod
		}
	}
	var out []IndexWait
	for ix, pod := range last {
		if busy[ix] || created[ix] {
			continue
		}
		left, _ := backoff.IndexRemaining(pod, opts.Backoff, opts.Now)
		if left <= 0 {
			continue
		}
		fc, _ := indexes.PodFailureCount(pod)
		out = append(out, IndexWait{Index: ix, Failures: int(fc.Failed) + int(fc.Ignored) + 1, Remaining: Duration(left)})
	}
	slices.SortFunc(out, func(a, b IndexWait) int {
		if a.Remaining != b.Remaining {
			return int(a.Remaining - b.Remaining)
		}
		return a.Index - b.Index
	})
	return out
}

func isFailedForBackoff(pod *corev1.Pod, onlyFailed bool) bool {
	if pod.Status.Phase == corev1.PodFailed {
		return true
	}
	return !onlyFailed && pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded
}

// later says whether failed pod a is a later failure of its index than b, by the
// rule plan documents for the pod whose replacement is due: at least as many
// recorded failures and a finish time not before b's.
func later(a, b *corev1.Pod) bool {
	fa, _ := indexes.PodFailureCount(a)
	fb, _ := indexes.PodFailureCount(b)
	return fb.Total() <= fa.Total() && !backoff.FinishTime(a).Before(backoff.FinishTime(b))
}

// wantActive is the number of active pods the spec asks for, with the succeeded
// count of the planned status.
func wantActive(w *workload, st *batchv1.JobStatus) int32 {
	parallelism := ptr.Deref(w.Spec.Parallelism, 1)
	completions := w.Spec.Completions
	if w.Spec.Parallelism == nil && completions == nil {
		completions = ptr.To[int32](1)
	}
	if completions == nil {
		if st.Succeeded > 0 {
			return st.Active
		}
		return parallelism
	}
	return max(0, min(*completions-st.Succeeded, parallelism))
}

// blockers says what keeps the Job from progressing when the plan creates and
// deletes nothing.
func blockers(w *workload, c *classification, p *plan.Plan, r *Report, opts Options) []string {
	if p.Skip != "" {
		if strings.HasPrefix(p.Skip, "spec.managedBy") {
			return []string{fmt.Sprintf("the %s is managed by another controller: %s (explain as that controller with --managed-by=%s)", w.noun, p.Skip, w.controller())}
		}
		if jobstatus.IsFinished(&w.Status) {
			return []string{"the " + w.noun + " has finished (" + r.Job.Finished + ") and none of its pods carries the tracking finalizer: nothing is left to do"}
		}
		return []string{p.Skip}
	}
	if len(p.Create) > 0 || len(p.Delete) > 0 {
		return nil
	}
	var out []string
	if jobstatus.IsFinished(&w.Status) {
		return []string{"the " + w.noun + " has finished (" + r.Job.Finished + "); only the tracking finalizers of its pods are left to remove"}
	}
	if w.Deleting {
		out = append(out, "the "+w.noun+" is being deleted: the controller only counts its finished pods and removes their finalizers")
	}
	if opts.ExpectationsUnsatisfied {
		out = append(out, "expectations: creations or deletions of this controller are not yet observed in its cache; it creates, deletes and finishes nothing until they are")
	}
	for _, cc := range []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet} {
		cond := jobstatus.FindCondition(p.Status.Conditions, cc)
		if cond == nil || cond.Status != corev1.ConditionTrue {
			continue
		}
		if _, ok := jobstatus.Finished(&p.Status); ok {
			continue
		}
		var wait []string
		if n := ptr.Deref(p.Status.Terminating, 0); n > 0 {
			wait = append(wait, fmt.Sprintf("%d terminating pod(s) to go", n))
		}
		if u := p.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
			wait = append(wait, fmt.Sprintf("%d uncounted pod(s) to be counted", len(u.Succeeded)+len(u.Failed)))
		}
		if p.Status.Active > 0 {
			wait = append(wait, fmt.Sprintf("%d active pod(s) to be deleted", p.Status.Active))
		}
		if len(wait) == 0 {
			wait = append(wait, "the finalizer removals of this sync to succeed")
		}
		out = append(out, fmt.Sprintf("the %s is finishing (%s, %s); the terminal condition waits for %s", w.noun, cc, cond.Reason, strings.Join(wait, ", ")))
	}
	if len(out) > 0 {
		return out
	}
	if ptr.Deref(w.Spec.Suspend, false) {
		return []string{"the " + w.noun + " is suspended (spec.suspend is true): no pod is created until it is resumed"}
	}
	if r.Requeue != nil && strings.HasPrefix(r.Requeue.Reason, "pod failure backoff") {
		out = append(out, fmt.Sprintf("waiting for the %s: %s left", r.Requeue.Reason, r.Requeue.After))
	}
	for _, w := range r.IndexBackoff {
		out = append(out, fmt.Sprintf("waiting for per-index backoff of index %d: %s left", w.Index, w.Remaining))
	}
	want := wantActive(w, &p.Status)
	occupied := p.Status.Active
	if c.onlyFailed && ptr.Deref(p.Status.Terminating, 0) > 0 {
		occupied += ptr.Deref(p.Status.Terminating, 0)
		out = append(out, fmt.Sprintf("waiting for %d terminating pod(s) to finish before replacing them (podReplacementPolicy Failed)", ptr.Deref(p.Status.Terminating, 0)))
	}
	if len(out) > 0 {
		return out
	}
	if occupied >= want && p.Status.Active > 0 {
		return []string{fmt.Sprintf("all %d wanted pod(s) are active (parallelism %d): waiting for them to finish", want, ptr.Deref(w.Spec.Parallelism, 1))}
	}
	if want == 0 && p.Status.Active == 0 {
		return []string{"no pod is wanted (parallelism 0 or every completion reached)"}
	}
	return []string{"nothing blocks progress that the plan can see"}
}

// actionSet indexes the pods of plan actions, so that a lookup per pod stays O(1).
func actionSet(as []plan.PodAction) map[*corev1.Pod]bool {
	out := make(map[*corev1.Pod]bool, len(as))
	for _, a := range as {
		out[a.Pod] = true
	}
	return out
}

// noteKeptFinalizers says why an uncounted pod keeps its tracking finalizer in this
// sync, when the plan does not remove it.
func noteKeptFinalizers(w *workload, r *Report, p *plan.Plan) {
	removed := map[string]bool{}
	for _, a := range p.RemoveFinalizers {
		removed[a.Pod.Name] = true
	}
	for _, d := range p.Delete {
		if d.RemoveFinalizerFirst {
			removed[d.Pod.Name] = true
		}
	}
	perIndex := w.Spec.BackoffLimitPerIndex != nil
	for i := range r.Pods {
		pod := &r.Pods[i]
		if !slices.Contains(pod.Classes, ClassUncounted) || removed[pod.Name] {
			continue
		}
		switch {
		case perIndex && slices.Contains(pod.Classes, ClassFailed) && pod.Index != nil:
			pod.Note = "keeps its finalizer until its index's replacement exists, which inherits the failure count"
		default:
			pod.Note += "; its finalizer is not removed in this sync"
		}
	}
}
