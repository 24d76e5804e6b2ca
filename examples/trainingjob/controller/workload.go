package controller

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
)

const (
	// Finalizer is the tracking finalizer of the workers: jobkit adds it to every
	// pod it creates and removes it once the pod is counted in the status.
	Finalizer = "ml.examples.jobkit.dev/worker-tracking"
	// DefaultManagedBy is the name Setup answers to in spec.managedBy when
	// reconcile.Config.Name is empty.
	DefaultManagedBy = "ml.examples.jobkit.dev/trainingjob-controller"
	// DefaultBackoffInitial and DefaultBackoffMax are the retry delays of the API
	// (spec.backoff) when it leaves them unset.
	DefaultBackoffInitial = 10 * time.Second
	DefaultBackoffMax     = 6 * time.Minute
)

// Kind is the owner of the workers: the controller reference of each pod names
// the TrainingJob, and Finalizer tracks them.
var Kind = owner.Kind{Group: v1alpha1.GroupName, Version: v1alpha1.SchemeGroupVersion.Version, Kind: "TrainingJob", Finalizer: Finalizer}

// ErrInvalid is wrapped by the errors of Workload for a TrainingJob that cannot
// run: the field named in the error must change (and since the spec is immutable,
// the run must be created again).
var ErrInvalid = errors.New("invalid TrainingJob")

// Workload presents tj to jobkit as a batch/v1 Job of completion mode Indexed:
// Workers is completions, Parallelism defaults to Workers, the retries are counted
// per index (BackoffLimitPerIndex, 0 when unset; no run-wide limit), a
// replacement starts only once its predecessor has failed (podReplacementPolicy
// Failed), the failure and success policies convert field for field, spec.backoff
// becomes the owner's backoff (unset fields take DefaultBackoffInitial and
// DefaultBackoffMax), managedBy stays as it is (unset, the run is any TrainingJob
// controller's, as jobkit reads an owner of a kind other than Job), and the
// selector stays nil so that only the pods whose controller reference has tj's
// UID count (nothing is adopted).
//
// A run with a launcher (spec.launcher) is a workload of roles: RolesWorkload
// converts it, and Workload refuses it (ErrInvalid naming spec.launcher). It refuses, wrapping ErrInvalid and naming each field with its value, what the
// CRD schema cannot check: a template whose restartPolicy is not Never or that has
// no container. The other rules (failure policy, maxFailedIndexes...) are the
// schema's and, again, plan's. The Workload points into tj (template, status
// conversion aside): do not modify tj while it is in use.
func Workload(tj *v1alpha1.TrainingJob) (*plan.Workload, error) {
	if tj == nil {
		return nil, fmt.Errorf("%w: the TrainingJob is nil", ErrInvalid)
	}
	if tj.Spec.Launcher != nil {
		return nil, fmt.Errorf("%w %s/%s: spec.launcher: set: a run with a launcher is a workload of roles (RolesWorkload)", ErrInvalid, tj.Namespace, tj.Name)
	}
	if err := validate(tj); err != nil {
		return nil, err
	}
	s := &tj.Spec
	return &plan.Workload{
		Namespace:       tj.Namespace,
		Name:            tj.Name,
		UID:             tj.UID,
		Deleting:        tj.DeletionTimestamp != nil,
		Spec:            workerSpec(tj),
		Status:          tj.Status.JobStatus(),
		Generation:      tj.Generation,
		ResourceVersion: tj.ResourceVersion,
		Object:          tj,
		Backoff:         BackoffPolicy(s.Backoff),
	}, nil
}

// workerSpec returns the workers of tj in Job terms: Workers indexes retried one
// by one, the run's policies, its template.
func workerSpec(tj *v1alpha1.TrainingJob) plan.Spec {
	s := &tj.Spec
	return plan.Spec{
		Completions:           &s.Workers,
		Parallelism:           cmp.Or(s.Parallelism, &s.Workers),
		CompletionMode:        ptr.To(batchv1.IndexedCompletion),
		BackoffLimitPerIndex:  ptr.To(ptr.Deref(s.BackoffLimitPerIndex, 0)),
		MaxFailedIndexes:      s.MaxFailedIndexes,
		PodFailurePolicy:      tj.PodFailurePolicy(),
		SuccessPolicy:         tj.SuccessPolicy(),
		PodReplacementPolicy:  ptr.To(batchv1.Failed),
		Suspend:               s.Suspend,
		ActiveDeadlineSeconds: s.ActiveDeadlineSeconds,
		Template:              &s.Template,
		ManagedBy:             s.ManagedBy,
	}
}

// validate reports the fields of tj that jobkit cannot run and the schema does not
// check.
func validate(tj *v1alpha1.TrainingJob) error {
	var errs []error
	bad := func(field string, value any, why string) {
		errs = append(errs, fmt.Errorf("%w %s/%s: %s: %v: %s", ErrInvalid, tj.Namespace, tj.Name, field, value, why))
	}
	if tj.Spec.Workers < 1 {
		bad("spec.workers", tj.Spec.Workers, "must be at least 1")
	}
	checkPod := func(field string, pod *corev1.PodSpec) {
		if pod.RestartPolicy != corev1.RestartPolicyNever {
			bad(field+".restartPolicy", fmt.Sprintf("%q", pod.RestartPolicy),
				"must be Never (a container restarted in place would hide the exit codes the failure policy reads)")
		}
		if len(pod.Containers) == 0 {
			bad(field+".containers", "[]", "at least one container is required")
		}
	}
	checkPod("spec.template.spec", &tj.Spec.Template.Spec)
	if l := tj.Spec.Launcher; l != nil {
		checkPod("spec.launcher.template.spec", &l.Template.Spec)
	}
	if b := tj.Spec.Backoff; b != nil {
		if b.Initial != nil && b.Initial.Duration <= 0 {
			bad("spec.backoff.initial", b.Initial.Duration, "must be positive")
		}
		if b.Max != nil && b.Max.Duration <= 0 {
			bad("spec.backoff.max", b.Max.Duration, "must be positive")
		}
	}
	return errors.Join(errs...)
}

// BackoffPolicy returns the retry delays of spec.backoff: Initial doubling up to
// Max, DefaultBackoffInitial and DefaultBackoffMax for what it leaves unset.
func BackoffPolicy(b *v1alpha1.RetryBackoff) plainbackoff.Policy {
	p := plainbackoff.Policy{Base: DefaultBackoffInitial, Max: DefaultBackoffMax}
	if b != nil && b.Initial != nil {
		p.Base = b.Initial.Duration
	}
	if b != nil && b.Max != nil {
		p.Max = b.Max.Duration
	}
	return p
}

// Finished reports whether tj has finished, its pods counted no more: the
// condition Complete or Failed of a run without a launcher, the group condition
// Completed or Failed (True) of a run with one.
func Finished(tj *v1alpha1.TrainingJob) bool {
	if tj.Spec.Launcher != nil {
		return groups.Finished(tj.Status.GroupConditions) != nil
	}
	_, done := jobstatus.Finished(&batchv1.JobStatus{Conditions: tj.Status.Conditions})
	return done
}
