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
	"github.com/jobkit/jobkit/singlepod/runplan"
)

// wakeWaiting returns the event handler that requeues the waiting runs a run
// was holding back, as soon as it stops counting against them (it finished or
// was deleted), instead of leaving them to their periodic retry.
func (r *Reconciler) wakeWaiting() handler.Funcs {
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[ctrlreconcile.Request]) {
			old, okOld := e.ObjectOld.(*v1alpha1.RunJob)
			cur, okNew := e.ObjectNew.(*v1alpha1.RunJob)
			if okOld && okNew && runplan.Holds(runOf(old)) && !runplan.Holds(runOf(cur)) {
				r.enqueueWaiting(ctx, cur, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[ctrlreconcile.Request]) {
			if rj, ok := e.Object.(*v1alpha1.RunJob); ok && runplan.Holds(runOf(rj)) {
				r.enqueueWaiting(ctx, rj, q)
			}
		},
	}
}

// enqueueWaiting adds the triggered runs that share a limit with gone.
func (r *Reconciler) enqueueWaiting(ctx context.Context, gone *v1alpha1.RunJob, q workqueue.TypedRateLimitingInterface[ctrlreconcile.Request]) {
	var runs v1alpha1.RunJobList
	if err := r.client.List(ctx, &runs, client.InNamespace(gone.Namespace)); err != nil {
		log.FromContext(ctx).Error(err, "Listing runs to wake up", "namespace", gone.Namespace)
		return
	}
	limits, goneRun := r.limits(), runOf(gone)
	for i := range runs.Items {
		o := &runs.Items[i]
		if waiting := runOf(o); o.UID != gone.UID && runplan.Waits(waiting) && runplan.SharesLimit(waiting, goneRun, limits) {
			q.Add(ctrlreconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}})
		}
	}
}
