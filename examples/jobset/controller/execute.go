package controller

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// Event actions (events.k8s.io/v1 Event.action) of the controller's events.
const (
	ActionSync   = "SyncJobSet"
	ActionCreate = "CreateJob"
	ActionDelete = "DeleteJob"
)

// Validate checks a JobSet's spec with plain/group's Validate, the roles sized
// from their templates (parallelism, with the API's default of 1, and
// completions). Each error names the field and the value.
func Validate(js *v1alpha2.JobSet) plaingroup.Errors {
	spec := Spec(js)
	for i := range spec.Roles {
		t := &js.Spec.ReplicatedJobs[i].Template.Spec
		spec.Roles[i].Parallelism = ptr.Deref(t.Parallelism, 1)
		spec.Roles[i].Completions = t.Completions
	}
	return plaingroup.Validate(&spec)
}

// refuse fails an invalid JobSet once: a Failed condition of reason
// ReasonInvalid with the errors, terminalState Failed, and a Warning event. Its
// spec's rules are immutable, so it can never become valid; failing it shows
// why in kubectl. Once failed, its TTL after finishing applies (plaingroup.TTL),
// as to any finished JobSet.
func (c *Controller) refuse(ctx context.Context, js *v1alpha2.JobSet, errs plaingroup.Errors) (crreconcile.Result, error) {
	if cond := meta.FindStatusCondition(js.Status.Conditions, "Failed"); cond != nil && cond.Reason == ReasonInvalid {
		return c.expire(ctx, js, cond)
	}
	msg := errs.Error()
	updated := js.DeepCopy()
	meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{
		Type: "Failed", Status: metav1.ConditionTrue, Reason: ReasonInvalid, Message: msg,
		ObservedGeneration: js.Generation, LastTransitionTime: metav1.NewTime(c.opts.Clock.Now()),
	})
	updated.Status.TerminalState = v1alpha2.Failed
	if err := c.writer.Status().Update(ctx, updated); err != nil {
		return crreconcile.Result{}, fmt.Errorf("failing the invalid JobSet %s/%s: %w", js.Namespace, js.Name, err)
	}
	c.wrote(updated)
	c.opts.Events.Eventf(js, nil, corev1.EventTypeWarning, ReasonInvalid, ActionSync, "%s", msg)
	return crreconcile.Result{}, nil
}

// expire applies the TTL after finishing of a JobSet refused as invalid,
// failed by cond: deleted (foreground) once it expired, looked at again when it
// will.
func (c *Controller) expire(ctx context.Context, js *v1alpha2.JobSet, cond *metav1.Condition) (crreconcile.Result, error) {
	failed := []plaingroup.Condition{{Type: cond.Type, Status: plaingroup.True, Reason: cond.Reason, LastTransitionTime: cond.LastTransitionTime.Time}}
	e, err := plaingroup.TTL(js.Spec.TTLSecondsAfterFinished, failed, js.DeletionTimestamp != nil, c.opts.Clock.Now())
	switch {
	case err != nil || (!e.Expired && e.Left <= 0):
		return crreconcile.Result{}, nil // no TTL, or one the CRD's schema refuses
	case !e.Expired:
		return crreconcile.Result{RequeueAfter: e.Left}, nil
	}
	err = c.writer.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationForeground), client.Preconditions{UID: &js.UID})
	if ignoreGone(err) != nil {
		return crreconcile.Result{}, fmt.Errorf("deleting %s/%s (ttlSecondsAfterFinished expired): %w", js.Namespace, js.Name, err)
	}
	return crreconcile.Result{}, nil
}

// sync lists the JobSet's children and Service, computes its plan and executes
// it in the order childjobs.Plan documents.
func (c *Controller) sync(ctx context.Context, js *v1alpha2.JobSet) (crreconcile.Result, error) {
	var jobs batchv1.JobList
	// No deep copy: childjobs.Compute modifies none of its inputs.
	if err := c.cache.List(ctx, &jobs, client.InNamespace(js.Namespace), client.MatchingFields{JobOwnerIndex: string(js.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return crreconcile.Result{}, fmt.Errorf("listing the Jobs of %s/%s: %w", js.Namespace, js.Name, err)
	}
	children := make([]*batchv1.Job, len(jobs.Items))
	for i := range jobs.Items {
		children[i] = &jobs.Items[i]
	}
	subdomain := js.Name
	if n := js.Spec.Network; n != nil && n.Subdomain != "" {
		subdomain = n.Subdomain
	}
	err := c.cache.Get(ctx, types.NamespacedName{Namespace: js.Namespace, Name: subdomain}, &corev1.Service{})
	if client.IgnoreNotFound(err) != nil {
		return crreconcile.Result{}, fmt.Errorf("reading the Service of %s/%s: %w", js.Namespace, js.Name, err)
	}
	in := Input(js, children, err == nil, c.opts.ManagedBy, c.opts.ChildManagedBy, c.opts.Clock.Now())
	p, err := childjobs.Compute(in)
	if err != nil {
		return crreconcile.Result{}, fmt.Errorf("planning %s/%s: %w", js.Namespace, js.Name, err)
	}
	log := c.log.WithValues("jobset", client.ObjectKeyFromObject(js))
	for _, w := range p.Warnings {
		log.Info("Ignored a child", "warning", w)
	}
	if p.Skip != "" {
		return crreconcile.Result{}, nil
	}
	if p.DeleteGroup != "" {
		log.V(2).Info("Deleting the JobSet", "reason", p.DeleteGroup)
		err := c.writer.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationForeground), client.Preconditions{UID: &js.UID})
		if ignoreGone(err) != nil {
			return crreconcile.Result{}, fmt.Errorf("deleting %s/%s (%s): %w", js.Namespace, js.Name, p.DeleteGroup, err)
		}
		return crreconcile.Result{}, nil
	}
	if p.StatusChanged {
		// An update carries the resourceVersion read: a status read before our
		// last write is refused (Conflict), so no failure is counted twice.
		updated := js.DeepCopy()
		updated.Status = APIStatus(&p.Status)
		if err := c.writer.Status().Update(ctx, updated); err != nil {
			return crreconcile.Result{}, fmt.Errorf("writing the status of %s/%s: %w", js.Namespace, js.Name, err)
		}
		c.wrote(updated)
	}
	return c.act(ctx, js, &p)
}

// act executes the rest of a plan after its status: deletions, the Service,
// suspensions, creations, events, the requeue. It goes on after a failed call
// and returns every error.
func (c *Controller) act(ctx context.Context, js *v1alpha2.JobSet, p *childjobs.Plan) (crreconcile.Result, error) {
	var errs []error
	for _, d := range p.Delete {
		uid := d.Job.UID
		// The UID precondition: a stale cache never deletes the child that
		// replaced this one under the same name.
		err := c.writer.Delete(ctx, d.Job, client.PropagationPolicy(d.Propagation), client.Preconditions{UID: &uid})
		if ignoreGone(err) != nil {
			errs = append(errs, fmt.Errorf("deleting Job %s (%s): %w", d.Job.Name, d.Reason, err))
			c.opts.Events.Eventf(js, d.Job, corev1.EventTypeWarning, "FailedDelete", ActionDelete, "Deleting Job %s: %v", d.Job.Name, err)
		}
	}
	if p.Service != nil {
		if err := c.writer.Create(ctx, p.Service); err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("creating Service %s (%s): %w", p.Service.Name, p.ServiceReason, err))
		}
	}
	for _, a := range p.Suspend {
		errs = append(errs, c.setSuspend(ctx, a.Job, true))
	}
	for _, a := range p.Resume {
		errs = append(errs, c.setSuspend(ctx, a.Job, false))
	}
	for _, a := range p.Create {
		// Names are deterministic: AlreadyExists means an earlier sync (whose
		// Job the cache has not shown yet) or an old child still being deleted
		// holds the name; either way its event queues the JobSet again.
		if err := c.writer.Create(ctx, a.Job); err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("creating Job %s (%s): %w", a.Job.Name, a.Reason, err))
			c.opts.Events.Eventf(js, nil, corev1.EventTypeWarning, "FailedCreate", ActionCreate, "Creating Job %s: %v", a.Job.Name, err)
		}
	}
	for _, e := range p.Events {
		c.opts.Events.Eventf(js, nil, e.Type, e.Reason, ActionSync, "%s", e.Message)
	}
	return crreconcile.Result{RequeueAfter: p.RequeueAfter}, errors.Join(errs...)
}

// setSuspend sets or clears spec.suspend of a child. The patch carries the
// child's UID, so that the API server refuses it on a newer Job of the same
// name (metadata.uid is immutable: 422 Invalid on that field), which means the
// child meant is gone.
func (c *Controller) setSuspend(ctx context.Context, job *batchv1.Job, suspend bool) error {
	patch := fmt.Appendf(nil, `{"metadata":{"uid":%q},"spec":{"suspend":%t}}`, job.UID, suspend)
	err := c.writer.Patch(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name}},
		client.RawPatch(types.MergePatchType, patch))
	if ignoreGone(err) != nil && !uidChanged(err) {
		return fmt.Errorf("setting spec.suspend=%t on Job %s: %w", suspend, job.Name, err)
	}
	return nil
}

// ignoreGone drops NotFound, and the Conflict of a UID precondition: the object
// meant is gone.
func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// uidChanged reports whether err is the API server's refusal of a write whose
// metadata.uid is not the object's.
func uidChanged(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}
