package sim

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// FaultKind names a kind of fault.
type FaultKind string

// The faults the simulator injects.
const (
	// FaultServerError: a 500 answer; the call does not happen.
	FaultServerError FaultKind = "500"
	// FaultTooManyRequests: a 429 answer; the call does not happen.
	FaultTooManyRequests FaultKind = "429"
	// FaultConflict: a 409 answer; the call does not happen.
	FaultConflict FaultKind = "409"
	// FaultTimeout: the call happens, and the caller gets a timeout.
	FaultTimeout FaultKind = "timeout"
	// FaultPartialBatch: a creation after the first of a sync fails with a server
	// error, in the middle of a slow-start batch.
	FaultPartialBatch FaultKind = "partial-batch"
	// FaultCrash: the controller crashes in the middle of a sync (the calls after a
	// point fail without effect) and restarts with all in-memory state lost.
	FaultCrash FaultKind = "crash"
	// FaultRestart: the controller restarts between two syncs.
	FaultRestart FaultKind = "restart"
	// FaultDelay: watch events start to arrive late (a stale cache).
	FaultDelay FaultKind = "delay"
	// FaultReorder: one queued watch event is delivered before older ones.
	FaultReorder FaultKind = "reorder"
	// FaultLostDelete: a delete event never reaches the controller; the pod is
	// simply gone from the next list.
	FaultLostDelete FaultKind = "lost-delete"
	// FaultDuringList: queued watch events are handled in the middle of a sync's
	// pod list, after its snapshot (reconciletest.Cache.DeliverDuringList): the
	// controller's stores have seen changes its list does not show.
	FaultDuringList FaultKind = "during-list"
)

// AllFaultKinds lists every fault kind, in the order reports print them.
var AllFaultKinds = []FaultKind{
	FaultServerError, FaultTooManyRequests, FaultConflict, FaultTimeout, FaultPartialBatch,
	FaultCrash, FaultRestart, FaultDelay, FaultReorder, FaultLostDelete, FaultDuringList,
}

// hides says whether a fault may hide the controller's own writes from it: after
// one, an index may have two active pods, or the Job more active pods than its
// parallelism, for a few syncs. during-list does not: the events it delivers were
// queued when the sync began, so that sync is not a clean one anyway, and after it
// the cache has seen more, not less.
func (k FaultKind) hides() bool {
	switch k {
	case FaultTimeout, FaultCrash, FaultRestart, FaultDelay, FaultReorder, FaultLostDelete:
		return true
	}
	return false
}

// errCrashed is what the calls of a crashed controller get: they never reach the
// API server.
var errCrashed = apierrors.NewServiceUnavailable("simulated controller crash: the call was never sent")

// Outcome is what the Cluster's interceptor (reconciletest.Cluster.SetInterceptor)
// answers for a call that the fault hits: the one mapping from a fault kind to a
// call's outcome, used by the simulator and by reconcile's chaos tests. Faults that
// are not outcomes of a call (restart, delay, reorder, lost-delete, during-list) get an error
// naming the kind.
func (k FaultKind) Outcome() reconciletest.Outcome {
	switch k {
	case FaultCrash:
		return reconciletest.Outcome{Err: errCrashed}
	case FaultServerError, FaultPartialBatch:
		return reconciletest.Outcome{Err: reconciletest.ServerError()}
	case FaultTooManyRequests:
		return reconciletest.Outcome{Err: apierrors.NewTooManyRequests("simulated throttling", 1)}
	case FaultConflict:
		return reconciletest.Outcome{Err: apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, "",
			errors.New("simulated conflict: the object has been modified; please apply your changes to the latest version and try again"))}
	case FaultTimeout:
		return reconciletest.Outcome{Err: reconciletest.TimeoutError(), AfterWrite: true}
	}
	return reconciletest.Outcome{Err: fmt.Errorf("sim: fault %q is not the outcome of a call", k)}
}

// Counts counts things by fault kind.
type Counts map[FaultKind]int

// Add adds other to c.
func (c Counts) Add(other Counts) {
	for k, n := range other {
		c[k] += n
	}
}

// Total is the sum of the counts.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// String renders the counts as "500=3 429=1 ...", known kinds first.
func (c Counts) String() string {
	var parts []string
	seen := map[FaultKind]bool{}
	for _, k := range AllFaultKinds {
		seen[k] = true
		if c[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c)) {
		if !seen[k] && c[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
