package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/jobstatus"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/podfailurepolicy"
	"github.com/jobkit/jobkit/successpolicy"
)

// Condition messages and reasons the upstream controller writes.
const (
	MessageBackoffLimitExceeded     = "Job has reached the specified backoff limit"
	MessageDeadlineExceeded         = "Job was active longer than specified deadline"
	MessageMaxFailedIndexesExceeded = "Job has exceeded the specified maximal number of failed indexes"
	MessageFailedIndexes            = "Job has failed indexes"
	MessageCompletionsReached       = "Reached expected number of succeeded pods"
	ReasonSuspended                 = "JobSuspended"
	MessageSuspended                = "Job suspended"
	ReasonResumed                   = "JobResumed"
	MessageResumed                  = "Job resumed"
)

// ErrInvalidJob is wrapped by the errors Compute returns for a Job it cannot plan.
var ErrInvalidJob = errors.New("invalid job")

// Compute decides one sync of a Job. It is pure: it reads in, performs no I/O,
// reads no clock and modifies neither the Job nor the pods.
//
// It returns an error wrapping ErrInvalidJob for input it cannot plan (nil Job, empty
// ControllerName, an unknown completion mode, an Indexed Job without completions,
// negative counts); bad data it can work around (an unparsable completedIndexes, a
// pod with a bad index annotation) is reported in Plan.Warnings instead, with the
// valid part kept.
//
// Cost: O(n log n) in the number of pods plus the length of the status strings.
func Compute(in Input) (*Plan, error) {
	if in.Job == nil {
		return nil, fmt.Errorf("%w: job is nil", ErrInvalidJob)
	}
	if in.ControllerName == "" {
		return nil, fmt.Errorf("%w: ControllerName is empty: the controller must name itself (spec.managedBy)", ErrInvalidJob)
	}
	job := in.Job
	if !handles(job, in.ControllerName) {
		return &Plan{Skip: fmt.Sprintf("spec.managedBy is %q, not %q", ptr.Deref(job.Spec.ManagedBy, batchv1.JobControllerName), in.ControllerName)}, nil
	}
	sp, err := readSpec(job)
	if err != nil {
		return nil, err
	}
	if jobstatus.IsFinished(&job.Status) {
		return planFinished(in), nil
	}
	c := &computation{in: in, job: job, spec: sp, opts: in.Options, now: in.Now, plan: &Plan{}}
	c.pending = in.PendingFinalizerRemovals
	if c.pending == nil {
		c.pending = sets.New[types.UID]()
	}
	c.claim()
	c.classify()
	c.decide()
	c.ledger()
	c.finish()
	return c.plan, nil
}

// handles says whether a controller named name manages job.
func handles(job *batchv1.Job, name string) bool {
	if job.Spec.ManagedBy == nil {
		return name == batchv1.JobControllerName
	}
	return *job.Spec.ManagedBy == name
}

// spec is the Job spec with the API's defaults applied.
type spec struct {
	indexed          bool
	completions      *int32 // nil: a work queue, done when any pod succeeds
	parallelism      int32
	backoffLimit     int32
	perIndex         *int32
	maxFailedIndexes *int32
	onlyFailed       bool // podReplacementPolicy Failed
	suspended        bool
	deadline         *int64
	failurePolicy    *batchv1.PodFailurePolicy
	successPolicy    *batchv1.SuccessPolicy
	onFailure        bool
}

func readSpec(job *batchv1.Job) (spec, error) {
	s := job.Spec
	var out spec
	switch mode := ptr.Deref(s.CompletionMode, batchv1.NonIndexedCompletion); mode {
	case batchv1.NonIndexedCompletion:
	case batchv1.IndexedCompletion:
		out.indexed = true
	default:
		return out, fmt.Errorf("%w: spec.completionMode: unknown value %q", ErrInvalidJob, mode)
	}
	out.completions = s.Completions
	out.parallelism = 1
	if s.Parallelism != nil {
		out.parallelism = *s.Parallelism
	} else if s.Completions == nil {
		out.completions = ptr.To[int32](1)
	}
	if out.parallelism < 0 {
		return out, fmt.Errorf("%w: spec.parallelism: must not be negative, got %d", ErrInvalidJob, out.parallelism)
	}
	if out.completions != nil && *out.completions < 0 {
		return out, fmt.Errorf("%w: spec.completions: must not be negative, got %d", ErrInvalidJob, *out.completions)
	}
	if out.indexed && out.completions == nil {
		return out, fmt.Errorf("%w: spec.completions: required when completionMode is Indexed", ErrInvalidJob)
	}
	out.perIndex = s.BackoffLimitPerIndex
	if !out.indexed {
		out.perIndex = nil
	}
	out.maxFailedIndexes = s.MaxFailedIndexes
	switch {
	case s.BackoffLimit != nil:
		out.backoffLimit = *s.BackoffLimit
	case out.perIndex != nil:
		out.backoffLimit = math.MaxInt32
	default:
		out.backoffLimit = 6
	}
	if out.backoffLimit < 0 {
		return out, fmt.Errorf("%w: spec.backoffLimit: must not be negative, got %d", ErrInvalidJob, out.backoffLimit)
	}
	policy := batchv1.TerminatingOrFailed
	if s.PodFailurePolicy != nil {
		policy = batchv1.Failed
	}
	out.onlyFailed = ptr.Deref(s.PodReplacementPolicy, policy) == batchv1.Failed
	out.suspended = ptr.Deref(s.Suspend, false)
	out.deadline = s.ActiveDeadlineSeconds
	out.failurePolicy = s.PodFailurePolicy
	out.successPolicy = s.SuccessPolicy
	out.onFailure = s.Template.Spec.RestartPolicy == corev1.RestartPolicyOnFailure
	return out, nil
}

// planFinished handles a Job that already has Complete or Failed: its pods only lose
// their finalizers (upstream leaves this to the orphan worker).
func planFinished(in Input) *Plan {
	p := &Plan{Status: *in.Job.Status.DeepCopy()}
	for _, pod := range in.Pods {
		if pod == nil {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref != nil && ref.UID == in.Job.UID && finalizers.Has(pod) && !in.PendingFinalizerRemovals.Has(pod.UID) {
			p.RemoveFinalizers = append(p.RemoveFinalizers, PodAction{Pod: pod, Reason: "job finished"})
		}
	}
	if len(p.RemoveFinalizers) == 0 {
		return &Plan{Skip: "job finished"}
	}
	p.Settlement = Settlement{
		Base:     p.Status,
		Previous: in.Job.Status,
		Held:     heldUIDs(p.Status.UncountedTerminatedPods, in.Pods, in.PendingFinalizerRemovals),
		Removing: removingUIDs(p.RemoveFinalizers, in.PendingFinalizerRemovals),
		Now:      in.Now,
	}
	return p
}

// podInfo caches what the plan needs to know of one pod.
type podInfo struct {
	pod         *corev1.Pod
	index       int  // completion index; indexes.Unknown when none or NonIndexed
	validIndex  bool // Indexed and 0 <= index < completions
	tracked     bool // carries the finalizer and its removal is not pending
	active      bool
	terminating bool
	ready       bool
	failed      bool // counts as failed (phase Failed, or deleted unless policy Failed)
	matched     bool // policy already matched
	match       podfailurepolicy.Result
}

// policyMatch matches the pod failure policy once per pod.
func (c *computation) policyMatch(pi *podInfo) podfailurepolicy.Result {
	if !pi.matched {
		pi.match = podfailurepolicy.Match(c.spec.failurePolicy, pi.pod)
		pi.matched = true
	}
	return pi.match
}

// verdict is a decision to finish the Job.
type verdict struct {
	success  bool
	reason   string
	message  string
	existing bool // the interim condition is already in the status
}

type computation struct {
	in      Input
	job     *batchv1.Job
	spec    spec
	opts    Options
	now     time.Time
	plan    *Plan
	pending sets.Set[types.UID]

	pods []*podInfo    // the Job's pods (owned, or adopted in this sync)
	list []*corev1.Pod // the pods of pods, from podList
	st   *batchv1.JobStatus

	uncountedSucceeded, uncountedFailed sets.Set[types.UID]
	newSucceeded, newFailed             []*corev1.Pod
	succeeded, failed                   int32
	active, ready, terminating          int32

	succeededIx, prevSucceededIx, failedIx, prevFailedIx indexes.Intervals
	delayed                                              map[int]*podInfo // per-index: the failed pod whose replacement is due
	podsPerIndex                                         []uint64         // built by create: a digest of the UIDs of each index's pods

	verdict      *verdict
	manageCalled bool
	limitReached bool
}

func (c *computation) warn(format string, args ...any) {
	c.plan.Warnings = append(c.plan.Warnings, fmt.Sprintf(format, args...))
}

// claim sorts the listed pods into the Job's own, orphans to adopt and pods to release.
func (c *computation) claim() {
	var selector labels.Selector
	if c.job.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(c.job.Spec.Selector)
		if err != nil {
			c.warn("spec.selector: %v: no pod is adopted or released", err)
		} else {
			selector = s
		}
	}
	deleting := c.job.DeletionTimestamp != nil
	// One allocation for every podInfo; the capacity is never exceeded, so the
	// pointers into it stay valid.
	infos := make([]podInfo, 0, len(c.in.Pods))
	c.pods = make([]*podInfo, 0, len(c.in.Pods))
	for _, pod := range c.in.Pods {
		if pod == nil {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod) // no copy: three allocations per pod saved
		switch {
		case ref != nil && ref.UID == c.job.UID:
			if selector != nil && !selector.Matches(labels.Set(pod.Labels)) && pod.DeletionTimestamp == nil {
				if !deleting { // as upstream, a Job being deleted releases nothing
					c.plan.Release = append(c.plan.Release, PodAction{Pod: pod, Reason: "labels no longer match the selector"})
				}
				continue
			}
		case ref != nil:
			continue // another controller's pod
		default:
			if selector == nil || deleting || pod.DeletionTimestamp != nil || !selector.Matches(labels.Set(pod.Labels)) {
				continue
			}
			c.plan.Adopt = append(c.plan.Adopt, PodAction{Pod: pod, Reason: "orphan matching the selector"})
			if !finalizers.Has(pod) {
				// Adoption adds the finalizer, so the pod is tracked from this sync on,
				// as upstream does; a copy, since the listed pod is not ours to change.
				pod = pod.DeepCopy()
				finalizers.EnsureOnPod(&pod.ObjectMeta)
			}
		}
		infos = append(infos, podInfo{pod: pod})
		c.pods = append(c.pods, &infos[len(infos)-1])
	}
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// classify counts the pods and finds the newly finished ones.
func (c *computation) classify() {
	c.st = c.job.Status.DeepCopy()
	if c.st.UncountedTerminatedPods == nil {
		c.st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	c.uncountedSucceeded = sets.New(c.st.UncountedTerminatedPods.Succeeded...)
	c.uncountedFailed = sets.New(c.st.UncountedTerminatedPods.Failed...)
	completions := int(ptr.Deref(c.spec.completions, 0))
	badIndexes := 0
	unfailed := 0 // pods in uncountedFailed whose state now says they are not failures
	for _, pi := range c.pods {
		pod := pi.pod
		pi.index = indexes.Unknown
		if c.spec.indexed {
			ix, err := indexes.PodIndex(pod)
			if err == nil {
				pi.index = ix
				pi.validIndex = ix < completions
			} else if badIndexes < 5 {
				badIndexes++
				c.warn("%v", err)
			}
		}
		pi.tracked = finalizers.Has(pod) && !c.pending.Has(pod.UID)
		terminal := isTerminal(pod)
		pi.active = !terminal && pod.DeletionTimestamp == nil
		pi.terminating = !terminal && pod.DeletionTimestamp != nil
		pi.ready = pi.active && isReady(pod)
		pi.failed = pod.Status.Phase == corev1.PodFailed ||
			(!c.spec.onlyFailed && pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded)
		if pi.active {
			c.active++
			if pi.ready {
				c.ready++
			}
		}
		if pi.terminating {
			c.terminating++
		}
		if !pi.tracked || (c.spec.indexed && !pi.validIndex) {
			continue
		}
		switch {
		case pod.Status.Phase == corev1.PodSucceeded && !c.uncountedSucceeded.Has(pod.UID):
			c.newSucceeded = append(c.newSucceeded, pod)
			if c.uncountedFailed.Has(pod.UID) {
				unfailed++ // recorded as failed, succeeded before its finalizer went
			}
		case pi.failed && !c.uncountedFailed.Has(pod.UID):
			c.newFailed = append(c.newFailed, pod)
			if c.spec.failurePolicy == nil || c.policyMatch(pi).CountsTowardBackoff {
				c.failed++
			}
		case pi.failed && c.spec.failurePolicy != nil && !c.policyMatch(pi).CountsTowardBackoff:
			unfailed++ // recorded as failed while running, then stopped with an ignored failure
		}
	}
	c.succeeded = sat(int64(c.st.Succeeded) + int64(len(c.newSucceeded)) + int64(c.uncountedSucceeded.Len()))
	c.failed = sat(int64(c.st.Failed) + int64(c.failed) + int64(c.uncountedFailed.Len()) - int64(unfailed))

	// The backoff record: the caller's, advanced by the new finishes, merged with one
	// rebuilt from the pods so that a restart does not forget earlier failures.
	isFailed := func(p *corev1.Pod) bool {
		if p.DeletionTimestamp != nil && !finalizers.Has(p) {
			// Mostly pods this controller stopped (scale-down, suspend, a finishing
			// Job), which are no failures: a resumed Job must not wait out a backoff
			// for them. A counted failure deleted by someone else is left out too;
			// it leaves the API at the end of its grace period anyway.
			return false
		}
		return p.Status.Phase == corev1.PodFailed || (!c.spec.onlyFailed && p.DeletionTimestamp != nil)
	}
	rebuildFrom := c.podList()
	if c.spec.indexed {
		// Pods without a valid index are strays; they do not tell the Job's history.
		rebuildFrom = make([]*corev1.Pod, 0, len(c.pods))
		for i := range c.pods {
			if c.pods[i].validIndex {
				rebuildFrom = append(rebuildFrom, c.pods[i].pod)
			}
		}
	}
	c.plan.Backoff = backoff.Merge(c.in.Backoff.AdvancePods(c.newSucceeded, c.newFailed), backoff.FromPodsFunc(rebuildFrom, isFailed))

	if c.st.StartTime == nil && !c.spec.suspended {
		c.st.StartTime = ptr.To(metav1.NewTime(c.now))
	}
}

func sat(v int64) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(v)
}

// decide finds whether the Job fails or succeeds, in upstream's order, and what to
// create or delete.
func (c *computation) decide() {
	conds := c.st.Conditions
	if cond := jobstatus.FindCondition(conds, batchv1.JobSuccessCriteriaMet); cond != nil && cond.Status == corev1.ConditionTrue {
		c.verdict = &verdict{success: true, reason: cond.Reason, message: cond.Message, existing: true}
	} else if cond := jobstatus.FindCondition(conds, batchv1.JobFailureTarget); cond != nil && cond.Status == corev1.ConditionTrue {
		c.verdict = &verdict{reason: cond.Reason, message: cond.Message, existing: true}
	} else if msg, ok := c.failJobMessage(); ok {
		c.verdict = &verdict{reason: batchv1.JobReasonPodFailurePolicy, message: msg}
	}
	if c.verdict == nil {
		switch {
		case c.failed > c.spec.backoffLimit || c.pastBackoffLimitOnFailure():
			c.verdict = &verdict{reason: batchv1.JobReasonBackoffLimitExceeded, message: MessageBackoffLimitExceeded}
		case c.pastDeadline():
			c.verdict = &verdict{reason: batchv1.JobReasonDeadlineExceeded, message: MessageDeadlineExceeded}
		case c.spec.deadline != nil && !c.spec.suspended && c.st.StartTime != nil:
			left := c.st.StartTime.Add(time.Duration(*c.spec.deadline) * time.Second).Sub(c.now)
			c.requeue(left, "active deadline")
		}
	}
	if c.spec.indexed {
		c.decideIndexed()
	}
	if c.verdict != nil {
		c.deleteActiveForFinish()
	} else {
		if c.in.ExpectationsSatisfied && c.job.DeletionTimestamp == nil {
			c.manage()
			c.manageCalled = true
		}
		complete := false
		if c.spec.completions == nil {
			complete = c.succeeded > 0 && c.active == 0
		} else {
			complete = c.succeeded >= *c.spec.completions && c.active == 0
		}
		if complete {
			c.verdict = &verdict{success: true, reason: batchv1.JobReasonCompletionsReached, message: MessageCompletionsReached}
		} else if c.manageCalled {
			c.suspendConditions()
		}
	}
}

// failJobMessage finds a failed pod matched by a FailJob rule.
func (c *computation) failJobMessage() (string, bool) {
	if c.spec.failurePolicy == nil {
		return "", false
	}
	for _, pi := range c.pods {
		if !pi.failed {
			continue
		}
		if m := c.policyMatch(pi); m.Matched && m.Action == batchv1.PodFailurePolicyActionFailJob {
			return m.Message, true
		}
	}
	return "", false
}

// pastBackoffLimitOnFailure sums container restarts of pending and running pods when
// the template restarts containers in place (restartPolicy OnFailure).
func (c *computation) pastBackoffLimitOnFailure() bool {
	if !c.spec.onFailure {
		return false
	}
	var restarts int64
	for _, pi := range c.pods {
		phase := pi.pod.Status.Phase
		if phase != corev1.PodRunning && phase != corev1.PodPending {
			continue
		}
		for _, s := range pi.pod.Status.InitContainerStatuses {
			restarts += int64(s.RestartCount)
		}
		for _, s := range pi.pod.Status.ContainerStatuses {
			restarts += int64(s.RestartCount)
		}
	}
	if c.spec.backoffLimit == 0 {
		return restarts > 0
	}
	return restarts >= int64(c.spec.backoffLimit)
}

func (c *computation) pastDeadline() bool {
	if c.spec.deadline == nil || c.st.StartTime == nil || c.spec.suspended {
		return false
	}
	return c.now.Sub(c.st.StartTime.Time) >= time.Duration(*c.spec.deadline)*time.Second
}

func (c *computation) requeue(d time.Duration, why string) {
	if d <= 0 {
		d = time.Nanosecond
	}
	if c.plan.RequeueAfter == 0 || d < c.plan.RequeueAfter {
		c.plan.RequeueAfter = d
		c.plan.RequeueReason = why
	}
}

// decideIndexed computes succeeded and failed indexes, the per-index verdicts and the
// success policy.
func (c *computation) decideIndexed() {
	completions := int(*c.spec.completions)
	var err error
	c.prevSucceededIx, err = indexes.Parse(c.st.CompletedIndexes, completions)
	c.warnIndexes("status.completedIndexes", err)
	if c.spec.perIndex != nil && c.st.FailedIndexes != nil {
		c.prevFailedIx, err = indexes.Parse(*c.st.FailedIndexes, completions)
		c.warnIndexes("status.failedIndexes", err)
	}
	// An index is finished by its first outcome (plainindexes.Outcomes): two pods of
	// one index (after a creation hidden from the controller) must not make it both
	// succeeded and failed, which the API server refuses. Seen together, the success
	// wins.
	ix := make([]int, 0, len(c.newSucceeded))
	for _, pi := range c.pods {
		if pi.tracked && pi.validIndex && pi.pod.Status.Phase == corev1.PodSucceeded {
			ix = append(ix, pi.index)
		}
	}
	outcomes := indexes.Outcomes{Succeeded: c.prevSucceededIx, Failed: c.prevFailedIx}.WithSucceeded(completions, ix)
	c.succeededIx = outcomes.Succeeded
	c.succeeded = int32(c.succeededIx.Count())

	if c.spec.perIndex != nil {
		var failedIx []int
		for _, pi := range c.pods {
			// Pods of a succeeded index are not matched against the policy:
			// WithFailed would leave them out anyway.
			if pi.tracked && pi.validIndex && !c.succeededIx.Has(pi.index) && c.indexFailed(pi) {
				failedIx = append(failedIx, pi.index)
			}
		}
		c.failedIx = outcomes.WithFailed(completions, failedIx).Failed
		if c.verdict == nil {
			nFailed := c.failedIx.Count()
			if c.spec.maxFailedIndexes != nil && nFailed > int(*c.spec.maxFailedIndexes) {
				c.verdict = &verdict{reason: batchv1.JobReasonMaxFailedIndexesExceeded, message: MessageMaxFailedIndexesExceeded}
			} else if nFailed > 0 && nFailed+int(c.succeeded) >= completions {
				c.verdict = &verdict{reason: batchv1.JobReasonFailedIndexes, message: MessageFailedIndexes}
			}
		}
		c.findDelayed()
	}
	if c.verdict == nil && c.spec.successPolicy != nil {
		compiled, err := successpolicy.Compile(c.spec.successPolicy, completions)
		if err != nil {
			c.warn("%v", err)
		}
		if res := compiled.Match(c.succeededIx); res.Matched {
			c.verdict = &verdict{success: true, reason: res.Reason, message: res.Message}
		}
	}
}

// warnIndexes reports the bad parts of an index string, except indexes at or above
// completions, which an elastic scale-down leaves behind (they are trimmed).
func (c *computation) warnIndexes(field string, err error) {
	var perr *indexes.ParseError
	if err == nil || !errors.As(err, &perr) {
		return
	}
	var real []indexes.PartError
	for _, p := range perr.Parts {
		if !errors.Is(p, indexes.ErrOutOfRange) {
			real = append(real, p)
		}
	}
	if len(real) > 0 {
		c.warn("%s: %v", field, &indexes.ParseError{Input: perr.Input, Parts: real})
	}
}

// indexFailed says whether a failed pod fails its index (plainindexes.IndexFailed).
func (c *computation) indexFailed(pi *podInfo) bool {
	if !pi.failed {
		return false
	}
	f := plainindexes.IndexFailure{BackoffLimitPerIndex: *c.spec.perIndex}
	if c.spec.failurePolicy != nil {
		m := c.policyMatch(pi)
		f.FailIndex = m.Matched && m.Action == batchv1.PodFailurePolicyActionFailIndex
		f.Ignored = !m.CountsTowardBackoff
	}
	if !f.FailIndex && !f.Ignored {
		f.Count, _ = indexes.PodFailureCount(pi.pod)
	}
	return plainindexes.IndexFailed(f)
}

// findDelayed picks, per index, the failed pod that keeps its finalizer until its
// replacement exists, so that the replacement inherits its failure count.
func (c *computation) findDelayed() {
	activeIx := sets.New[int]()
	for _, pi := range c.pods {
		if pi.active && pi.index >= 0 {
			activeIx.Insert(pi.index)
		}
	}
	c.delayed = map[int]*podInfo{}
	for _, pi := range c.pods {
		if !pi.tracked || !pi.validIndex || !pi.failed {
			continue
		}
		ix := pi.index
		if c.succeededIx.Has(ix) || c.failedIx.Has(ix) || activeIx.Has(ix) {
			continue
		}
		prev, ok := c.delayed[ix]
		if !ok || laterFailure(pi.pod, prev.pod) {
			c.delayed[ix] = pi
		}
	}
}

// laterFailure says whether pod a is the later failure of its index than b: at least
// as many recorded failures and a finish time not before b's.
func laterFailure(a, b *corev1.Pod) bool {
	fa, _ := indexes.PodFailureCount(a)
	fb, _ := indexes.PodFailureCount(b)
	return int64(fb.Failed)+int64(fb.Ignored) <= int64(fa.Failed)+int64(fa.Ignored) &&
		!backoff.FinishTime(a).Before(backoff.FinishTime(b))
}

// deleteActiveForFinish deletes every active pod of a finishing Job, uncapped as
// upstream (they are all counted in this sync, so they must all go); their finalizers
// stay until they are counted.
func (c *computation) deleteActiveForFinish() {
	reason := "job finishing: " + c.verdict.reason
	for _, pi := range c.pods {
		if !pi.active {
			continue
		}
		c.plan.Delete = append(c.plan.Delete, Deletion{Pod: pi.pod, Reason: reason})
		c.active--
		c.terminating++
		if pi.ready {
			c.ready--
		}
	}
}

// suspendConditions maintains the Suspended condition and startTime.
func (c *computation) suspendConditions() {
	if c.spec.suspended {
		if c.setCondition(batchv1.JobSuspended, corev1.ConditionTrue, ReasonSuspended, MessageSuspended) {
			c.plan.Events = append(c.plan.Events, Event{Type: corev1.EventTypeNormal, Reason: "Suspended", Message: MessageSuspended})
			// Kubernetes 1.36+ (MutableSchedulingDirectivesForSuspendedJobs): a
			// suspended Job has no start time; resuming sets a new one.
			c.st.StartTime = nil
		}
		return
	}
	if c.setCondition(batchv1.JobSuspended, corev1.ConditionFalse, ReasonResumed, MessageResumed) {
		c.plan.Events = append(c.plan.Events, Event{Type: corev1.EventTypeNormal, Reason: "Resumed", Message: MessageResumed})
		c.st.StartTime = ptr.To(metav1.NewTime(c.now))
	}
}

func (c *computation) setCondition(t batchv1.JobConditionType, s corev1.ConditionStatus, reason, msg string) bool {
	var changed bool
	c.st.Conditions, changed = jobstatus.SetCondition(c.st.Conditions, jobstatus.NewCondition(t, s, reason, msg), c.now)
	if changed {
		c.plan.Conditions = append(c.plan.Conditions, ConditionChange{Type: t, Status: s, Reason: reason, Message: msg})
	}
	return changed
}

// ledger decides which finished pods are recorded and which finalizers are removed.
func (c *computation) ledger() {
	// Count first what no longer carries the finalizer: it frees room in the ledger.
	settled, err := finalizers.Settle(c.st.UncountedTerminatedPods, c.podList(), c.pending)
	if err != nil {
		c.warn("%v", err)
	}
	settled.ApplyTo(c.st)

	deleting := c.job.DeletionTimestamp != nil
	failing := c.verdict != nil && !c.verdict.success
	// A pod deleted with its finalizer removed first (scale-down, suspend) gets that
	// one patch only, even when the Job finishes in the same sync.
	var patchedByDelete map[*corev1.Pod]bool
	for _, d := range c.plan.Delete {
		if d.RemoveFinalizerFirst {
			if patchedByDelete == nil {
				patchedByDelete = map[*corev1.Pod]bool{}
			}
			patchedByDelete[d.Pod] = true
		}
	}
	var finished []finalizers.FinishedPod
	var unrecord []types.UID
	for _, pi := range c.pods {
		if !pi.tracked || patchedByDelete[pi.pod] {
			continue
		}
		pod := pi.pod
		succeeded := pod.Status.Phase == corev1.PodSucceeded
		if !(deleting || c.verdict != nil || succeeded) {
			if !pi.failed {
				continue
			}
			if d, ok := c.delayed[pi.index]; ok && d == pi {
				continue // keeps its finalizer until its replacement exists
			}
		}
		fp := finalizers.FinishedPod{Pod: pod, Outcome: finalizers.NotCounted}
		ignored := false
		switch {
		case succeeded:
			if !c.spec.indexed {
				fp.Outcome = finalizers.Succeeded
			} else if pi.validIndex && !c.prevSucceededIx.Has(pi.index) && !c.prevFailedIx.Has(pi.index) {
				fp.Outcome, fp.Index = finalizers.SucceededIndex, pi.index
			}
		case pi.failed || failing:
			if c.spec.indexed && !pi.validIndex {
				break
			}
			if c.spec.failurePolicy != nil {
				m := c.policyMatch(pi)
				if m.Matched && !c.uncountedFailed.Has(pod.UID) {
					if c.plan.FailurePolicyActions == nil {
						c.plan.FailurePolicyActions = map[batchv1.PodFailurePolicyAction]int{}
					}
					c.plan.FailurePolicyActions[m.Action]++
				}
				if !m.CountsTowardBackoff {
					ignored = true
					break
				}
			}
			fp.Outcome = finalizers.Failed
		}
		if (succeeded || ignored) && c.uncountedFailed.Has(pod.UID) {
			// A pod counts by its state when its finalizer goes (the removal patch
			// carries its resourceVersion, so that is the state decided on here). One
			// recorded as failed whose removal did not happen, and which has since
			// succeeded or been stopped with an ignored failure, is recorded again:
			// it still carries the finalizer, so it was never counted. (A recorded
			// failure whose index an elastic scale-down took away stays a failure,
			// as upstream.)
			unrecord = append(unrecord, pod.UID)
		}
		finished = append(finished, fp)
	}
	if c.deferRecording(len(finished)) {
		finished, unrecord = nil, nil
	}
	if len(unrecord) > 0 {
		u := c.st.UncountedTerminatedPods.DeepCopy()
		drop := sets.New(unrecord...)
		u.Failed = slices.DeleteFunc(u.Failed, drop.Has)
		c.st.UncountedTerminatedPods = u
	}
	rec, err := finalizers.Record(c.st.UncountedTerminatedPods, finished, c.pending, c.opts.maxUncounted())
	if err != nil {
		c.warn("%v", err)
	}
	c.limitReached = rec.LimitReached
	c.st.UncountedTerminatedPods = &rec.Uncounted
	for _, pod := range rec.RemoveFinalizer {
		c.plan.RemoveFinalizers = append(c.plan.RemoveFinalizers, PodAction{Pod: pod, Reason: finalizerReason(pod, deleting, c.verdict)})
	}
	if c.spec.indexed {
		c.succeededIx = c.succeededIx.WithSorted(rec.NewSucceededIndexes)
		c.st.CompletedIndexes = c.succeededIx.String()
		c.st.Succeeded = int32(c.succeededIx.Count())
		if c.spec.perIndex != nil {
			c.st.FailedIndexes = ptr.To(c.failedIx.String())
		} else {
			c.st.FailedIndexes = nil
		}
	}
}

// deferRecording reports whether the n newly finished pods wait for a later sync:
// while pods that earlier syncs created or deleted are not in the cache yet
// (expectations unsatisfied), their events are on the way, and recording what has
// finished now and the rest a few moments later would cost two more status writes per
// batch. They are recorded now all the same when the Job is finishing or being
// deleted, or when they fill the ledger (MaxUncounted). Upstream records them in
// every sync; with an informer lagging by a few round trips, that is one or two
// extra status writes for each batch of creations.
func (c *computation) deferRecording(n int) bool {
	if n == 0 || c.in.ExpectationsSatisfied || c.verdict != nil || c.job.DeletionTimestamp != nil {
		return false
	}
	u := c.st.UncountedTerminatedPods
	if u != nil {
		n += len(u.Succeeded) + len(u.Failed)
	}
	return n < c.opts.maxUncounted()
}

func finalizerReason(pod *corev1.Pod, deleting bool, v *verdict) string {
	switch {
	case pod.Status.Phase == corev1.PodSucceeded:
		return "pod succeeded"
	case pod.Status.Phase == corev1.PodFailed:
		return "pod failed"
	case pod.DeletionTimestamp != nil:
		return "pod deleted"
	case deleting:
		return "job being deleted"
	case v != nil:
		return "job finishing: " + v.reason
	}
	return "pod finished"
}

// podList returns the Job's pods, built once; callers only read it.
func (c *computation) podList() []*corev1.Pod {
	if c.list == nil {
		c.list = make([]*corev1.Pod, len(c.pods))
		for i, pi := range c.pods {
			c.list[i] = pi.pod
		}
	}
	return c.list
}

// finish assembles the statuses of the plan.
func (c *computation) finish() {
	st := c.st
	st.Active = c.active
	st.Ready = ptr.To(c.ready)
	st.Terminating = ptr.To(c.terminating)
	var final *batchv1.JobCondition
	if v := c.verdict; v != nil {
		interim, last := batchv1.JobFailureTarget, batchv1.JobFailed
		if v.success {
			interim, last = batchv1.JobSuccessCriteriaMet, batchv1.JobComplete
		}
		if !v.existing {
			c.setCondition(interim, corev1.ConditionTrue, v.reason, v.message)
		}
		final = &batchv1.JobCondition{Type: last, Status: corev1.ConditionTrue, Reason: v.reason, Message: v.message}
	}
	original := &c.job.Status
	c.plan.Settlement = Settlement{
		Base:        *st,
		Previous:    *original,
		Held:        heldUIDs(st.UncountedTerminatedPods, c.podList(), c.pending),
		Removing:    removingUIDs(c.plan.RemoveFinalizers, c.pending),
		Finish:      final,
		CanFinish:   c.in.ExpectationsSatisfied && c.active == 0 && !c.limitReached,
		Terminating: c.terminating,
		Completions: c.spec.completions,
		Now:         c.now,

		DeferPodCounts: !c.in.ExpectationsSatisfied,
	}
	if len(c.plan.RemoveFinalizers) > 0 && !equality.Semantic.DeepEqual(st, original) {
		c.plan.RecordStatus = st.DeepCopy()
		c.plan.Settlement.Previous = *st
	}
	removed := make(sets.Set[types.UID], len(c.plan.RemoveFinalizers))
	for _, a := range c.plan.RemoveFinalizers {
		removed.Insert(a.Pod.UID)
	}
	s := c.plan.Settle(removed)
	c.plan.Status = s.Status
	c.plan.StatusChanged = !equality.Semantic.DeepEqual(&s.Status, original) &&
		!(c.plan.Settlement.DeferPodCounts && onlyPodCountsDiffer(&s.Status, original))
	if s.Finished != nil {
		c.plan.Conditions = append(c.plan.Conditions, ConditionChange{Type: s.Finished.Type, Status: s.Finished.Status, Reason: s.Finished.Reason, Message: s.Finished.Message})
	}
}

func durationOf(ns int64) time.Duration { return time.Duration(ns) }
