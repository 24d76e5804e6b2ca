package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
)

// wakeWaiting returns the event handler that requeues the waiting runs a run
// was holding back, as soon as it stops counting against them (it finished or
// was deleted), instead of leaving them to their periodic retry.
func (r *Reconciler) wakeWaiting() handler.Funcs {
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[ctrlreconcile.Request]) {
			old, okOld := e.ObjectOld.(*v1alpha1.RunJob)
			cur, okNew := e.ObjectNew.(*v1alpha1.RunJob)
			if okOld && okNew && holdsBack(old) && !holdsBack(cur) {
				r.enqueueWaiting(ctx, cur, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[ctrlreconcile.Request]) {
			if rj, ok := e.Object.(*v1alpha1.RunJob); ok && holdsBack(rj) {
				r.enqueueWaiting(ctx, rj, q)
			}
		},
	}
}

// holdsBack reports whether rj counts against other runs: it is pending, or
// triggered (younger runs of its job or queue wait for it).
func holdsBack(rj *v1alpha1.RunJob) bool {
	return rj.Status.CompletionTime == nil && !rj.Status.State.Finished()
}

// enqueueWaiting adds the triggered runs that share a limit with gone.
func (r *Reconciler) enqueueWaiting(ctx context.Context, gone *v1alpha1.RunJob, q workqueue.TypedRateLimitingInterface[ctrlreconcile.Request]) {
	var runs v1alpha1.RunJobList
	if err := r.client.List(ctx, &runs, client.InNamespace(gone.Namespace)); err != nil {
		log.FromContext(ctx).Error(err, "Listing runs to wake up", "namespace", gone.Namespace)
		return
	}
	for i := range runs.Items {
		o := &runs.Items[i]
		if o.UID == gone.UID || o.Status.CompletionTime != nil ||
			(o.Status.State != "" && o.Status.State != v1alpha1.StateTriggered) {
			continue
		}
		shares := r.cfg.MaxPending > 0 ||
			(o.Spec.MaxConcurrency > 0 && o.Spec.JobName == gone.Spec.JobName) ||
			(o.Spec.QueueName != "" && o.Spec.QueueName == gone.Spec.QueueName)
		if shares {
			q.Add(ctrlreconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}})
		}
	}
}
