package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobkit/jobkit/owner"
)

// Trace is one simulated run written out in full: the Job as created, the
// controller's settings and every action in the order it happened. It does not
// depend on the random generator: Replay runs it as is, so a trace committed as a
// regression test keeps meaning the same run when the generator changes, and a
// minimised trace (Minimize) still replays.
//
// Pods are named by their creation ordinal (1 for the first pod the cluster stored),
// which does not depend on generated names.
type Trace struct {
	// Seed is the seed the trace was generated from (informational).
	Seed uint64 `json:"seed,omitempty"`
	// Note says what the trace shows, for a regression trace the bug it found.
	Note string `json:"note,omitempty"`
	// Job is the Job as given to the cluster (before API defaulting). When Owner is
	// set, its namespace, name and spec make a Task of that kind instead.
	Job *batchv1.Job `json:"job"`
	// Owner, when set and not owner.BatchJob, is the custom owner kind the run
	// uses: the Job is created as a reconciletest.Task of that kind, tracked by its
	// finalizer, and synced through reconcile.New and Sync. Nil means a
	// batch/v1 Job.
	Owner *owner.Kind `json:"owner,omitempty"`
	// Controller holds the settings of every Reconciler of the run.
	Controller ControllerSettings `json:"controller"`
	// Actions is the run, in order.
	Actions []Action `json:"actions"`
}

// ControllerSettings are the reconcile.Config values a run varies. Zero means the
// simulator's default (see the Default constants).
type ControllerSettings struct {
	// MaxCreatesPerSync and MaxUncounted cap a sync's creations and
	// uncountedTerminatedPods entries.
	MaxCreatesPerSync int `json:"maxCreatesPerSync,omitempty"`
	MaxUncounted      int `json:"maxUncounted,omitempty"`
	// BackoffBaseMillis and BackoffMaxMillis are the pod failure backoff.
	BackoffBaseMillis int64 `json:"backoffBaseMillis,omitempty"`
	BackoffMaxMillis  int64 `json:"backoffMaxMillis,omitempty"`
	// ExpectationsTTLMillis is how long expectations wait for their events.
	ExpectationsTTLMillis int64 `json:"expectationsTTLMillis,omitempty"`
}

// Defaults of ControllerSettings.
const (
	DefaultBackoffBase     = time.Second
	DefaultBackoffMax      = 8 * time.Second
	DefaultExpectationsTTL = 30 * time.Second
)

func (s ControllerSettings) backoffBase() time.Duration {
	return millisOr(s.BackoffBaseMillis, DefaultBackoffBase)
}
func (s ControllerSettings) backoffMax() time.Duration {
	return millisOr(s.BackoffMaxMillis, DefaultBackoffMax)
}
func (s ControllerSettings) expectationsTTL() time.Duration {
	return millisOr(s.ExpectationsTTLMillis, DefaultExpectationsTTL)
}

func millisOr(ms int64, d time.Duration) time.Duration {
	if ms <= 0 {
		return d
	}
	return time.Duration(ms) * time.Millisecond
}

// Verb is what an Action does.
type Verb string

// The verbs of a trace.
const (
	// VerbSync syncs the Job from the cache, with Action.Faults injected into its API
	// calls and, when Action.Crash is set, a crash after that many calls (every
	// later call fails without effect, then the controller restarts); with
	// Action.DuringList, events are handled in the middle of its pod list.
	VerbSync Verb = "sync"

	// Kubelet actions on pod Action.Pod.
	VerbRun               Verb = "run"               // Pending → Running
	VerbReady             Verb = "ready"             // Running and ready
	VerbSucceed           Verb = "succeed"           // exit 0
	VerbFail              Verb = "fail"              // exit code Action.N
	VerbEvict             Verb = "evict"             // Failed with DisruptionTarget
	VerbRestartContainer  Verb = "restartContainer"  // restartPolicy OnFailure
	VerbFinishTermination Verb = "finishTermination" // a pod being deleted stops (Failed, 137)
	VerbDelete            Verb = "delete"            // someone else deletes the pod gracefully

	// Watch events.
	VerbDeliverDue Verb = "deliverDue" // every event that is due, oldest first
	VerbDeliverAll Verb = "deliverAll" // every queued event
	// VerbDeliverOne delivers the oldest queued event of pod Action.Pod, or of the Job
	// when Pod is 0, ahead of the others (reordering).
	VerbDeliverOne Verb = "deliverOne"
	// VerbDropDelete loses the queued delete event of pod Action.Pod: the cache forgets
	// the pod without telling the controller.
	VerbDropDelete Verb = "dropDelete"
	// VerbLatency sets the delay of later watch events to Action.N milliseconds.
	VerbLatency Verb = "latency"

	// VerbRestart crashes the controller between syncs: a new Reconciler with new
	// stores and a new, fully synced cache.
	VerbRestart Verb = "restart"

	// Spec changes by the Job's owner.
	VerbSetParallelism Verb = "parallelism" // spec.parallelism = Action.N
	VerbSetElastic     Verb = "elastic"     // spec.completions = spec.parallelism = Action.N
	VerbSuspend        Verb = "suspend"
	VerbResume         Verb = "resume"

	// VerbAdvance moves the clock by Action.N milliseconds.
	VerbAdvance Verb = "advance"

	// Owners and orphans.

	// VerbDeleteOwner deletes the owner (the Job or the Task) at once, as a user
	// would with background propagation: its pods stay until VerbCollectGarbage.
	VerbDeleteOwner Verb = "deleteOwner"
	// VerbCollectGarbage runs one pass of the garbage collector
	// (reconciletest.Cluster.CollectGarbage): pods whose owners are gone are deleted.
	VerbCollectGarbage Verb = "collectGarbage"
	// VerbCleanOrphans runs the orphan cleanup of the controller
	// (reconciletest.Driver.CleanOrphans, Reconciler.CleanOrphan) once over the
	// cached pods that carry the tracking finalizer.
	VerbCleanOrphans Verb = "cleanOrphans"
	// VerbOrphan creates an orphan pod from the Job's template (matching its
	// selector, no controller reference, no finalizer), with completion index
	// Action.Index when set, and moves it to a phase: Action.N 0 Pending, 1 Running,
	// 2 Succeeded, 3 Failed (exit code 1). Once adopted, it is a pod of the Job with
	// the next ordinal.
	VerbOrphan Verb = "orphan"
	// VerbRelabel changes the controller-uid label of pod Action.Pod so that it no
	// longer matches the Job's selector: the controller must release it.
	VerbRelabel Verb = "relabel"
	// VerbReleaseActive is VerbRelabel for an active pod (pending or running, not
	// being deleted) of an Indexed Job: the controller must release it and create
	// its index's pod again, once, though the name it derives is the released pod's.
	VerbReleaseActive Verb = "releaseActive"
)

// The phases VerbOrphan gives an orphan (Action.N).
const (
	OrphanPending = iota
	OrphanRunning
	OrphanSucceeded
	OrphanFailed
)

// Action is one step of a trace.
type Action struct {
	// Do is what the action does.
	Do Verb `json:"do"`
	// Pod is the creation ordinal of the pod acted on, from 1.
	Pod int `json:"pod,omitempty"`
	// N is the verb's number: an exit code, a count, milliseconds.
	N int `json:"n,omitempty"`
	// Faults are the errors injected into the calls of a Sync.
	Faults []CallFault `json:"faults,omitempty"`
	// Crash, for a Sync, lets that many calls through, fails the rest and restarts
	// the controller after the sync.
	Crash *int `json:"crash,omitempty"`
	// Index, for VerbOrphan, is the orphan's completion index (annotation and
	// label); nil gives it none.
	Index *int `json:"index,omitempty"`
	// DuringList, for a Sync, delivers that many queued watch events (every one
	// when negative), oldest first, in the middle of the sync's pod list: after the
	// list's snapshot, before the controller gets it (FaultDuringList).
	DuringList int `json:"duringList,omitempty"`
}

// String renders the action on one line.
func (a Action) String() string {
	var b strings.Builder
	b.WriteString(string(a.Do))
	if a.Pod != 0 {
		fmt.Fprintf(&b, " pod#%d", a.Pod)
	}
	if a.N != 0 {
		fmt.Fprintf(&b, " %d", a.N)
	}
	for _, f := range a.Faults {
		fmt.Fprintf(&b, " [call %d %s: %s]", f.Call, f.Op, f.Kind)
	}
	if a.Crash != nil {
		fmt.Fprintf(&b, " [crash after %d calls]", *a.Crash)
	}
	if a.Index != nil {
		fmt.Fprintf(&b, " index %d", *a.Index)
	}
	if a.DuringList != 0 {
		fmt.Fprintf(&b, " [%d events during the list]", a.DuringList)
	}
	return b.String()
}

// CallFault is an error injected into one API call of a sync.
type CallFault struct {
	// Call numbers the calls of the sync from 1.
	Call int `json:"call"`
	// Op is the operation the call was when the fault was drawn; on replay the fault
	// fires only on a call of that operation (empty: any).
	Op string `json:"op,omitempty"`
	// Kind is the fault.
	Kind FaultKind `json:"kind"`
}

// ReadTrace reads a trace written by WriteTrace.
func ReadTrace(path string) (*Trace, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tr Trace
	if err := json.Unmarshal(data, &tr); err != nil {
		return nil, fmt.Errorf("sim: trace %s: %w", path, err)
	}
	if tr.Job == nil {
		return nil, fmt.Errorf("sim: trace %s: no job", path)
	}
	return &tr, nil
}

// WriteTrace writes tr as indented JSON, one action per line.
func WriteTrace(path string, tr *Trace) error {
	data, err := MarshalTrace(tr)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// MarshalTrace encodes tr as JSON with one action per line, so that a committed
// trace reads and diffs well.
func MarshalTrace(tr *Trace) ([]byte, error) {
	head := *tr
	head.Actions = nil
	job, err := json.MarshalIndent(tr.Job, "  ", "  ")
	if err != nil {
		return nil, err
	}
	ctl, err := json.Marshal(tr.Controller)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("{\n")
	if tr.Seed != 0 {
		fmt.Fprintf(&b, "  \"seed\": %d,\n", tr.Seed)
	}
	if tr.Note != "" {
		note, _ := json.Marshal(tr.Note)
		fmt.Fprintf(&b, "  \"note\": %s,\n", note)
	}
	fmt.Fprintf(&b, "  \"job\": %s,\n", job)
	if tr.Owner != nil {
		kind, err := json.Marshal(tr.Owner)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "  \"owner\": %s,\n", kind)
	}
	fmt.Fprintf(&b, "  \"controller\": %s,\n", ctl)
	b.WriteString("  \"actions\": [")
	for i, a := range tr.Actions {
		line, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		b.Write(line)
	}
	b.WriteString("\n  ]\n}\n")
	return []byte(b.String()), nil
}
