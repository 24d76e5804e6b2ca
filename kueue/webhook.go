package kueue

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/jobkit/jobkit/reconcile"
)

// suspender is the defaulting webhook of Options.Webhook: an owner created for
// Kueue (a queue name, or any owner of a managed namespace under
// manageJobsWithoutQueueName) is stored suspended, so that jobkit's controller
// starts no pod before Kueue admits it. Kueue's own webhook for external kinds
// reads Kueue's in-process queue cache, which an operator's manager does not
// have: this one asks only what the owner and its namespace say.
type suspender[T client.Object] struct {
	typ  *reconcile.Type[T]
	gvk  schema.GroupVersionKind
	c    client.Client
	opts jobframework.Options
	// controller is Options.ControllerName.
	controller string
}

// Default suspends obj on creation when Kueue is to queue it and, when its
// LocalQueue's ClusterQueue has a MultiKueue admission check and its
// managedBy may be defaulted (Job.CanDefaultManagedBy), hands it to
// MultiKueue's controller; updates pass unchanged.
func (s *suspender[T]) Default(ctx context.Context, obj T) error {
	if req, err := admission.RequestFromContext(ctx); err == nil && req.Operation != admissionv1.Create {
		return nil
	}
	queued, err := jobframework.WorkloadShouldBeSuspended(ctx, obj, s.c, s.opts.ManageJobsWithoutQueueName, s.opts.ManagedJobsNamespaceSelector)
	if err != nil {
		return err
	}
	if !queued {
		return nil
	}
	j := NewJob(s.typ, s.gvk, obj)
	j.controller = s.controller
	if !j.IsSuspended() {
		s.typ.SetSuspend(obj, true)
	}
	if !j.CanDefaultManagedBy() {
		return nil
	}
	multi, err := multiKueueQueue(ctx, s.c, obj.GetNamespace(), jobframework.QueueNameForObject(obj))
	if err != nil {
		return err
	}
	if multi {
		j.SetManagedBy(ptr.To(kueueapi.MultiKueueControllerName))
	}
	return nil
}

// multiKueueQueue reports whether the LocalQueue queue of namespace belongs to
// a ClusterQueue with a MultiKueue admission check (an AdmissionCheck whose
// controllerName is MultiKueue's), read from the API as Kueue's webhooks read
// it from their caches. A queue or ClusterQueue not found yet is not one: the
// owner waits in it as any other.
func multiKueueQueue(ctx context.Context, c client.Client, namespace string, queue kueueapi.LocalQueueName) (bool, error) {
	if queue == "" {
		return false, nil
	}
	var lq kueueapi.LocalQueue
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: string(queue)}, &lq); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	var cq kueueapi.ClusterQueue
	if err := c.Get(ctx, client.ObjectKey{Name: string(lq.Spec.ClusterQueue)}, &cq); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if cq.Spec.AdmissionChecksStrategy == nil {
		return false, nil
	}
	for _, rule := range cq.Spec.AdmissionChecksStrategy.AdmissionChecks {
		var ac kueueapi.AdmissionCheck
		if err := c.Get(ctx, client.ObjectKey{Name: string(rule.Name)}, &ac); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return false, err
			}
			continue
		}
		if ac.Spec.ControllerName == kueueapi.MultiKueueControllerName {
			return true, nil
		}
	}
	return false, nil
}
