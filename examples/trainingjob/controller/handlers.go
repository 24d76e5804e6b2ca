package controller

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/reconcile"
)

type queue = controllerruntime.Queue

// handlePod gives a pod event to Reconciler.ObservePodEvent, so that the
// expectations it fulfils are lowered before its TrainingJob is queued (after the
// batch period), and hands pods whose finalizer nobody will remove to the orphan
// worker.
func (c *Controller) handlePod(ctx context.Context, ev reconcile.PodEvent, q queue) {
	res := c.rec.ObservePodEvent(ev, c.cachedFacts(ctx))
	for _, key := range res.Sync {
		ns, name, _ := strings.Cut(key, "/")
		q.AddAfter(crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}, res.Delay)
	}
	if res.OrphanCleanup {
		pod := ev.New
		if pod == nil {
			pod = ev.Old
		}
		c.orphans.Add(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
	}
}

// trainingJobHandler queues status-only updates after the batch period (the For
// watch takes the others), and hands the tracked pods of a TrainingJob deleted,
// replaced or just finished to the orphan worker.
type trainingJobHandler struct{ c *Controller }

var _ handler.TypedEventHandler[client.Object, crreconcile.Request] = (*trainingJobHandler)(nil)

func (h *trainingJobHandler) Create(context.Context, event.TypedCreateEvent[client.Object], queue) {}

func (h *trainingJobHandler) Update(ctx context.Context, e event.TypedUpdateEvent[client.Object], q queue) {
	old, ok1 := e.ObjectOld.(*v1alpha1.TrainingJob)
	cur, ok2 := e.ObjectNew.(*v1alpha1.TrainingJob)
	if !ok1 || !ok2 {
		return
	}
	if old.UID != cur.UID || (!Finished(old) && Finished(cur)) {
		h.c.queueOrphans(ctx, old)
	}
	if old.Generation == cur.Generation {
		req := crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: cur.Namespace, Name: cur.Name}}
		q.AddAfter(req, h.c.rec.Config().PodEventBatchPeriod)
	}
}

func (h *trainingJobHandler) Delete(ctx context.Context, e event.TypedDeleteEvent[client.Object], _ queue) {
	if tj, ok := e.Object.(*v1alpha1.TrainingJob); ok {
		h.c.queueOrphans(ctx, tj)
	}
}

func (h *trainingJobHandler) Generic(context.Context, event.TypedGenericEvent[client.Object], queue) {
}

// queueOrphans queues the cached pods of tj that carry the tracking finalizer for
// the orphan worker, which decides.
func (c *Controller) queueOrphans(ctx context.Context, tj *v1alpha1.TrainingJob) {
	var pods corev1.PodList
	if err := c.cache.List(ctx, &pods, client.InNamespace(tj.Namespace),
		client.MatchingFields{PodOwnerIndex: string(tj.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		c.log.Error(err, "Listing the pods of a TrainingJob for the orphan cleanup", "trainingjob", tj.Namespace+"/"+tj.Name)
		return
	}
	for i := range pods.Items {
		if Kind.HasFinalizer(&pods.Items[i]) {
			c.orphans.Add(types.NamespacedName{Namespace: tj.Namespace, Name: pods.Items[i].Name})
		}
	}
}
