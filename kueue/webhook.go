package kueue

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
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
}

// Default suspends obj on creation when Kueue is to queue it; updates pass
// unchanged.
func (s *suspender[T]) Default(ctx context.Context, obj T) error {
	if req, err := admission.RequestFromContext(ctx); err == nil && req.Operation != admissionv1.Create {
		return nil
	}
	queued, err := jobframework.WorkloadShouldBeSuspended(ctx, obj, s.c, s.opts.ManageJobsWithoutQueueName, s.opts.ManagedJobsNamespaceSelector)
	if err != nil {
		return err
	}
	if queued && !NewJob(s.typ, s.gvk, obj).IsSuspended() {
		s.typ.SetSuspend(obj, true)
	}
	return nil
}
