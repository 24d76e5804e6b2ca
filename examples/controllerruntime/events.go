package controllerruntime

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

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

// NewEventRecorder adapts an events.k8s.io/v1 recorder (the one a manager gives with
// GetEventRecorder) to reconcile.EventRecorder, with EventAction as the action.
func NewEventRecorder(rec events.EventRecorder) reconcile.EventRecorder {
	return reconcile.EventRecorderFunc(func(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
		rec.Eventf(obj, nil, eventtype, reason, EventAction(reason), messageFmt, args...)
	})
}
