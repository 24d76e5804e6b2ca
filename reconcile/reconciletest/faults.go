package reconciletest

import (
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Op names a reconcile.Client operation.
type Op string

// The operations of reconcile.Client, and OpUpdateStatus, the status write of an
// owner of a Store of the cluster's Options.Owner (Store.WriteStatus, its
// RolesWriter, a group's status writes; Cluster.WriteStatus of such an owner).
const (
	OpCreatePod       Op = "CreatePod"
	OpDeletePod       Op = "DeletePod"
	OpPatchPod        Op = "PatchPod"
	OpUpdateJobStatus Op = "UpdateJobStatus"
	OpUpdateStatus    Op = "UpdateStatus"
)

// Call is one call through the Cluster's reconcile.Client methods, as recorded in the
// call log.
type Call struct {
	// Seq numbers the calls from 1 in the order they reached the cluster.
	Seq int
	Op  Op
	// Namespace and Name name the object; for CreatePod, Name is the generated name
	// once the pod was written (empty if it was not), GenerateName the prefix asked.
	Namespace, Name, GenerateName string
	// UID is DeletePod's precondition.
	UID types.UID
	// PatchType and Patch are PatchPod's arguments.
	PatchType types.PatchType
	Patch     []byte
	// Pod is the pod given to CreatePod; Job the Job given to UpdateJobStatus, or
	// a Job-shaped owner given to Store.WriteStatus, presented as a Job (its spec
	// in Job terms and the status written). They are copies owned by the log.
	Pod *corev1.Pod
	Job *batchv1.Job
	// Time is the cluster clock's time of the call.
	Time time.Time
	// Written says whether the call changed the cluster; Err is what the caller got.
	// Both are set together for a fault with AfterWrite.
	Written bool
	Err     error
}

// String renders the call on one line, for test failures.
func (c Call) String() string {
	s := fmt.Sprintf("#%d %s %s/%s", c.Seq, c.Op, c.Namespace, c.Name)
	if c.Op == OpCreatePod && c.Name == "" {
		s += c.GenerateName + "*"
	}
	if c.Err != nil {
		s += fmt.Sprintf(" err=%v", c.Err)
	}
	return s
}

// Fault makes matching calls fail. Faults are checked in the order they were
// injected; the first that fires decides the call.
type Fault struct {
	// Op restricts the fault to one operation; empty matches every operation.
	Op Op
	// Match, when set, restricts the fault further. It sees the call before its
	// outcome (Err, Written and, for CreatePod, Name are not set yet) and must not
	// call the Cluster.
	Match func(Call) bool
	// After lets that many matching calls through before the fault fires: After 2
	// fails the third matching call.
	After int
	// Times is how many matching calls fail once the fault fires: 0 means one,
	// negative means every one from then on.
	Times int
	// Err is the error the caller gets; nil means ServerError().
	Err error
	// AfterWrite performs the write and then returns Err, as when a request times
	// out after the server committed it.
	AfterWrite bool
}

type faultState struct {
	Fault
	seen, fired int
}

// Outcome is what an interceptor (SetInterceptor) decides for a call: how long it
// takes, and how it fails. One interceptor is the whole model of an API server's behaviour under
// test (a latency, a fault schedule, a seeded draw of both).
type Outcome struct {
	// Err, when not nil, is returned to the caller.
	Err error
	// AfterWrite performs the write before returning Err.
	AfterWrite bool
	// Delay is how long the call takes: the Cluster waits that long (time.Sleep,
	// without its lock, so concurrent calls overlap), moves its clock forward by the
	// time waited, and only then logs and performs the call, at the time the caller
	// gets the answer. Meant for a testing/synctest bubble, where the wait is
	// simulated time (see RunLatency); outside one it sleeps for real.
	Delay time.Duration
}

// InjectFault adds a fault.
func (c *Cluster) InjectFault(f Fault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = append(c.faults, &faultState{Fault: f})
}

// FailNth makes the nth call (counting from 1, from now on) of op fail with err (nil
// means ServerError()).
func (c *Cluster) FailNth(op Op, n int, err error) {
	c.InjectFault(Fault{Op: op, After: max(n-1, 0), Err: err})
}

// ClearFaults removes every fault and the interceptor.
func (c *Cluster) ClearFaults() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = nil
	c.intercept = nil
}

// SetInterceptor installs fn, the interceptor (nil removes it): it decides the
// outcome of each call that no Fault decided; a zero Outcome lets the call proceed
// at once. A seeded simulator uses one to draw faults from its own random source,
// RunLatency to give every call its latency. It sees the write calls of the call
// log (not GetPod), runs under the Cluster's lock and must not call the Cluster.
func (c *Cluster) SetInterceptor(fn func(Call) Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.intercept = fn
}

// delayLocked waits d without the lock and moves the clock forward by the time
// waited (never back); the caller holds the lock before and after.
func (c *Cluster) delayLocked(d time.Duration) {
	if d <= 0 {
		return
	}
	from, start := c.clock.Now(), time.Now()
	c.mu.Unlock()
	time.Sleep(d)
	if end := from.Add(time.Since(start)); end.After(c.clock.Now()) {
		c.clock.SetTime(end)
	}
	c.mu.Lock()
}

// decideLocked returns the injected outcome of call.
func (c *Cluster) decideLocked(call Call) Outcome {
	for _, f := range c.faults {
		if f.Op != "" && f.Op != call.Op {
			continue
		}
		if f.Match != nil && !f.Match(call) {
			continue
		}
		times := f.Times
		if times == 0 {
			times = 1
		}
		if times > 0 && f.fired >= times {
			continue
		}
		f.seen++
		if f.seen <= f.After {
			continue
		}
		f.fired++
		err := f.Err
		if err == nil {
			err = ServerError()
		}
		return Outcome{Err: err, AfterWrite: f.AfterWrite}
	}
	if c.intercept != nil {
		return c.intercept(call)
	}
	return Outcome{}
}

// ServerError returns a 500 Internal Server Error.
func ServerError() error {
	return apierrors.NewInternalError(errors.New("simulated server error"))
}

// TimeoutError returns a 504 Gateway Timeout; with Fault.AfterWrite it models a
// request committed by the server whose answer was lost.
func TimeoutError() error {
	return apierrors.NewTimeoutError("simulated timeout", 1)
}

// namespaceTerminatingError returns the 403 Forbidden the API server answers a create
// in a namespace being deleted, with the cause corev1.NamespaceTerminatingCause.
func namespaceTerminatingError(namespace string) error {
	msg := fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", namespace)
	err := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(msg))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: msg,
		Field:   "metadata.namespace",
	})
	return err
}
