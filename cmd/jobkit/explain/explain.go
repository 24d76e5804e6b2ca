package explain

import (
	"errors"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
)

// ErrNoJob is wrapped by the errors of Explain when it has no Job (or owner of
// another kind) to explain.
var ErrNoJob = errors.New("no job")

// ControllerFor returns the controller name a Job's own controller answers to: its
// spec.managedBy, or batchv1.JobControllerName when unset.
func ControllerFor(job *batchv1.Job) string {
	return plan.JobWorkload(job).Controller()
}

// Explain computes the plan of the next sync of the owner w with pods (the owner's
// pods and any others: pods that are not the owner's are listed as ignored) and
// explains it. w is the plan.Workload the owner's controller builds: for a batch/v1
// Job, plan.JobWorkload(job), whose Job (w.Object) is then checked by the API's
// validation as it is; for an owner of any other kind, its spec in Job terms and its
// status as a batchv1.JobStatus, converted by the caller's own function (the one its
// controller uses) or by WorkloadOf, with its spec and status validated as a
// batch/v1 Job's would be. Options.Owner says which kind of controller reference
// makes a pod the owner's and which tracking finalizer counts it; the zero value is
// owner.BatchJob. A nil w is an error wrapping ErrNoJob. It does not modify w (or
// what it points to) or pods.
func Explain(w *plan.Workload, pods []*corev1.Pod, opts Options) (*Report, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: workload is nil", ErrNoJob)
	}
	return explain(newWorkload(*w, opts.Owner), pods, opts)
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

// newWorkload reads w as an owner of kind: its Job is w.Object when that is a
// *batchv1.Job (plan.JobWorkload's), else one built from w's spec and status.
func newWorkload(w plan.Workload, kind owner.Kind) *workload {
	if kind == (owner.Kind{}) {
		kind = owner.BatchJob
	}
	job, _ := w.Object.(*batchv1.Job)
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
	return w.Controller()
}

// finished says whether the workload's status has a terminal condition.
func (w *workload) finished() bool {
	_, done := jobstatus.Finished(&w.Status)
	return done
}

func explain(w *workload, pods []*corev1.Pod, opts Options) (*Report, error) {
	if err := w.kind.Validate(); err != nil {
		return nil, fmt.Errorf("Options.Owner: %w", err)
	}
	controller := opts.Controller
	if controller == "" {
		controller = w.controller()
	}
	if w.Backoff != (plainbackoff.Policy{}) {
		// The owner's own retry delays win over the configured ones, as in a
		// reconcile.Reconciler.
		opts.Backoff = w.Backoff
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
		r.Limits = limits(w, c, p, opts)
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
