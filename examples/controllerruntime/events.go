package controllerruntime

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/jobkit/jobkit/reconcile"
)

// Actions of the events.k8s.io/v1 Events this controller records: the API requires
// an action besides the reason.
const (
	ActionCreatePod = "CreatePod"
	ActionDeletePod = "DeletePod"
	ActionSyncJob   = "SyncJob"
)

// EventAction maps a reason the Reconciler records to the action of its
// events.k8s.io/v1 Event: pod creations and deletions, and SyncJob for the rest.
func EventAction(reason string) string {
	switch reason {
	case reconcile.ReasonSuccessfulCreate, reconcile.ReasonFailedCreate:
		return ActionCreatePod
	case reconcile.ReasonSuccessfulDelete, reconcile.ReasonFailedDelete:
		return ActionDeletePod
	}
	return ActionSyncJob
}

// NewEventRecorder adapts an events.k8s.io/v1 recorder (ManagerEventRecorder's) to
// reconcile.EventRecorder, with EventAction as the action.
func NewEventRecorder(rec events.EventRecorder) reconcile.EventRecorder {
	return reconcile.EventRecorderFunc(func(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
		rec.Eventf(obj, nil, eventtype, reason, EventAction(reason), messageFmt, args...)
	})
}

// ManagerEventRecorder returns an events.k8s.io/v1 recorder that writes through
// mgr's connection as reportingController, from when mgr starts until it stops.
//
// controller-runtime has such a recorder (Manager.GetEventRecorder) only from v0.23
// on; v0.22, the release for Kubernetes v0.34, offers only the core/v1 one. This
// one is built from client-go alone, so the example builds with both.
func ManagerEventRecorder(mgr manager.Manager, reportingController string) (events.EventRecorder, error) {
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
