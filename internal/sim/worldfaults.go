package sim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// violate records a violation and stops the run.
func (w *world) violate(inv Invariant, format string, args ...any) {
	w.violations = append(w.violations, Violation{
		Invariant: inv, Action: w.acting, Sync: w.syncs, Message: fmt.Sprintf(format, args...),
	})
	w.stopped = true
}

// disturb notes a fault that may hide the controller's writes from it.
func (w *world) disturb(k FaultKind) {
	w.faults[k]++
	if k.hides() {
		w.clean = 0
	}
}

// intercept decides the outcome of each API call of the controller.
func (w *world) intercept(call reconciletest.Call) reconciletest.Outcome {
	if !w.inSync {
		return reconciletest.Outcome{}
	}
	w.calls++
	if call.Op == reconciletest.OpCreatePod {
		w.creates++
	}
	if w.crashAfter >= 0 && w.calls > w.crashAfter {
		w.faulted = true
		return FaultCrash.Outcome()
	}
	if w.draw != nil {
		if kind, ok := w.draw(call, w.creates); ok {
			w.cur.Faults = append(w.cur.Faults, CallFault{Call: w.calls, Op: string(call.Op), Kind: kind})
			return w.inject(kind)
		}
		return reconciletest.Outcome{}
	}
	for _, f := range w.cur.Faults {
		if f.Call == w.calls && (f.Op == "" || f.Op == string(call.Op)) {
			return w.inject(f.Kind)
		}
	}
	return reconciletest.Outcome{}
}

func (w *world) inject(k FaultKind) reconciletest.Outcome {
	w.faulted = true
	w.disturb(k)
	return k.Outcome()
}

// podClient is the controller's pod client: the cluster, or one whose reads fail
// (readBackFails).
func (w *world) podClient() reconcile.PodClient {
	if w.readBackFails {
		return unreadable{w.cluster}
	}
	return w.cluster
}

// unreadable is a pod client whose GetPod fails with a server error.
type unreadable struct{ *reconciletest.Cluster }

func (unreadable) GetPod(context.Context, string, string) (*corev1.Pod, error) {
	return nil, reconciletest.ServerError()
}
