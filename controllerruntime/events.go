package controllerruntime

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/jobkit/jobkit/reconcile"
)

// eventAction maps a reason the Reconciler records to the action of its
// events.k8s.io/v1 Event (the API requires one): Create or Delete and the
// child's kind ("CreatePod", "DeleteJob"), or sync ("SyncJob",
// "SyncTrainingJob") for the rest.
func eventAction(reason, sync, child string) string {
	switch reason {
	case reconcile.ReasonSuccessfulCreate, reconcile.ReasonFailedCreate:
		return "Create" + child
	case reconcile.ReasonSuccessfulDelete, reconcile.ReasonFailedDelete:
		return "Delete" + child
	}
	return sync
}

// childObject is the kind of the children the owners of typ create: Job for a
// kind of child-Jobs groups only, Pod otherwise (a kind of several shapes
// names its child Jobs' events as pods').
func childObject[T client.Object](typ reconcile.Type[T]) string {
	if typ.ChildJobsOnly() {
		return "Job"
	}
	return "Pod"
}

// EventRecorder returns an events.k8s.io/v1 recorder that records through mgr's
// connection as reportingController, from when mgr starts until it stops. Setup
// makes one for each controller; a controller of another shape (of child Jobs, say)
// records its events with one too.
//
// controller-runtime has such a recorder (Manager.GetEventRecorder) only from v0.23
// on; v0.22, the release for Kubernetes v0.34, offers only the core/v1 one. This
// one is built from client-go alone, so the module builds with both.
func EventRecorder(mgr manager.Manager, reportingController string) (events.EventRecorder, error) {
	cs, err := kubernetes.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("event recorder: %w", err)
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	if err := mgr.Add(eventSink{b}); err != nil {
		return nil, fmt.Errorf("event recorder: %w", err)
	}
	return b.NewRecorder(mgr.GetScheme(), reportingController), nil
}

// syncEvents adapts rec to reconcile's recorder: syncAction is the action of every
// event but a child's create or delete (CreatePod, DeletePod, or for child
// Jobs CreateJob, DeleteJob).
func syncEvents(rec events.EventRecorder, syncAction, child string) reconcile.EventRecorder {
	return reconcile.EventRecorderFunc(func(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
		rec.Eventf(obj, nil, eventtype, reason, eventAction(reason, syncAction, child), messageFmt, args...)
	})
}

// eventSink sends a broadcaster's events to the API server while the manager runs.
// It starts before the controllers and their leader election, so that no event of
// a sync is recorded before the sink listens.
type eventSink struct{ b events.EventBroadcaster }

// Start sends events until ctx is done, then flushes and stops the broadcaster.
func (s eventSink) Start(ctx context.Context) error {
	s.b.StartRecordingToSink(ctx.Done())
	<-ctx.Done()
	s.b.Shutdown()
	return nil
}

// NeedLeaderElection is false: a standby records nothing, and the sink costs nothing.
func (eventSink) NeedLeaderElection() bool { return false }
