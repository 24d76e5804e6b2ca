package ownedpods

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// Workload is an owner of several roles whose pods it owns directly (no child
// Jobs): its identity, its roles, the group rules across them and its status. A
// custom resource's controller converts its object into one (a TrainingJob with a
// launcher and workers). Compute reads a Workload and never modifies it.
type Workload struct {
	// Namespace, Name and UID are the owner's. Every pod of every role has a
	// controller reference to UID; a role's pods are told apart by the role label.
	Namespace, Name string
	UID             types.UID
	// Deleting is true when the owner has a deletionTimestamp: nothing is created
	// and the pods' finalizers are removed as they finish.
	Deleting bool
	// Generation, ResourceVersion and Object are the owner's, as in plan.Workload:
	// the resourceVersion is the precondition of the status write, events are
	// recorded on Object.
	Generation      int64
	ResourceVersion string
	Object          runtime.Object
	// ManagedBy is the owner's spec.managedBy, nil when unset (any controller of the
	// kind).
	ManagedBy *string
	// Suspend suspends every role.
	Suspend bool

	// Roles are the owner's roles, in order (the startup order). Names are unique
	// DNS labels.
	Roles []Role
	// FailurePolicy decides what a failed role does to the group (fail it, restart
	// it); nil fails the group on the first failed role, as JobSet.
	FailurePolicy *plaingroup.FailurePolicy
	// SuccessPolicy decides when the group has succeeded; nil means every role
	// succeeded.
	SuccessPolicy *plaingroup.SuccessPolicy
	// StartupOrder is AnyOrder or InOrder; dependsOn is per role.
	StartupOrder plaingroup.StartupOrder

	// Status is the owner's status as read, converted.
	Status Status
}

// Role is one role of a Workload: its pods run as one Job would (Spec, in Job
// terms: completions, parallelism, limits, pod failure and success policies, the
// pod template), with the same crash-safe machinery.
type Role struct {
	// Name names the role: its pods are named and have the hostname
	// <owner>-<role>-<index> (Indexed) and carry it in the role label.
	Name string
	// Spec is the role's pods in Job terms. Selector and ManagedBy are not read
	// (the role's pods are the owner's by controller reference and role label).
	Spec plan.Spec
	// Backoff is the role's pod failure backoff; zero means the configured one.
	Backoff plainbackoff.Policy
	// DependsOn lists earlier roles this one waits for (Ready or Complete) before
	// its pods are created.
	DependsOn []plaingroup.Dependency
}

// Status is the status of a Workload: the group's and one entry per role, written
// in one status write per sync at most.
type Status struct {
	// Restarts counts the restarts of the whole group; RestartsCountTowardsMax
	// those that count towards the failure policy's maxRestarts. The current
	// attempt is Restarts: every pod carries its attempt in a label.
	Restarts, RestartsCountTowardsMax int32
	// Conditions are the group's conditions, with JobSet's types and reasons
	// (Completed, Failed, Suspended, StartupPolicyCompleted...) and messages in
	// the owner's terms (see Terms).
	Conditions []metav1.Condition
	// TerminalState is "", "Completed" or "Failed".
	TerminalState string
	// Roles holds one entry per role, in the order of Workload.Roles.
	Roles []RoleStatus
	// InPlace is the barrier of an in-place restart (restartStrategy
	// InPlaceRestart): JobSet's previousInPlaceRestartAttempt and
	// currentInPlaceRestartAttempt, moved by the attempts the roles' pods
	// report (plaingroup.InPlaceAttempts.Next). Previous never decreases.
	InPlace plaingroup.InPlaceAttempts
}

// RoleStatus is the status of one role.
type RoleStatus struct {
	// Name is the role's name.
	Name string
	// Attempt is the group restart attempt Job describes.
	Attempt int32
	// Job is the tracking status of the role's pods of that attempt, as a Job's:
	// the uncountedTerminatedPods ledger, the counters, the indexes, the
	// conditions. It starts afresh (zero) when the next attempt begins, once every
	// pod of the old one is gone and counted.
	Job batchv1.JobStatus
	// Succeeded and Failed count the role's pods over every attempt, the current
	// one included: they never decrease. Failed has a Job's meaning: it counts
	// the pods that failed and those a failing role stopped (deleted while they
	// ran).
	Succeeded, Failed int32
	// FailedOnTheirOwn counts, over every attempt, the role's pods that failed
	// by themselves: in phase Failed and not being deleted when the role
	// recorded them as failed (a container's exit, a kubelet's eviction), not
	// those the role or the group stopped. It never decreases. It grows in the
	// write that records such a pod in the role's uncountedTerminatedPods, so
	// it may run ahead of Failed by the pods not yet counted; once nothing is
	// uncounted it is at most Failed.
	FailedOnTheirOwn int32
}

// Input is everything one sync of a Workload needs. Compute never modifies it.
type Input struct {
	// Workload is the owner as read from the cache. Required.
	Workload *Workload
	// Pods are the owner's pods (controller reference with its UID), of every role
	// and attempt, as read from the cache.
	Pods []*corev1.Pod
	// ControllerName, ExpectationsSatisfied, PendingFinalizerRemovals,
	// TakenPodNames, Now, Options and Owner mean what they mean in plan.Input, for
	// the whole owner.
	ControllerName           string
	ExpectationsSatisfied    bool
	PendingFinalizerRemovals sets.Set[types.UID]
	TakenPodNames            sets.Set[string]
	Now                      time.Time
	Options                  plan.Options
	Owner                    owner.Kind
}

// Plan is the decision of one sync of a Workload: plain data. A caller executes
// it in this order, which keeps every count exact across crashes with one status
// write:
//
//  1. write Status when StatusChanged: it records every newly finished pod in its
//     role's uncountedTerminatedPods and counts only pods that no longer carry
//     the tracking finalizer, so it is safe before any removal; when the write
//     fails, stop there: the pod calls below rely on it (a restarting role's
//     finished pods are deleted in the sync that counts them);
//  2. remove the finalizers of RemoveFinalizers (the pods they free are counted
//     by the next sync's write; a stray's is never counted);
//  3. delete the pods of Delete (removing the finalizer first when asked), then
//     create the pods of Create.
type Plan struct {
	// Skip says why the owner is not acted on (another controller manages it, or
	// it has finished, no pod runs or carries the finalizer and its status shows
	// so); every other field is empty.
	Skip string
	// Status is the owner's status to write; StatusChanged says whether it
	// differs from Workload.Status.
	Status        Status
	StatusChanged bool
	// RemoveFinalizers, Delete and Create are the pod calls of every role and
	// of the strays (pods of no role's current attempt).
	RemoveFinalizers []plan.PodAction
	Delete           []plan.Deletion
	Create           []plan.Creation
	// Events are the events of this sync (the group's: restarts, completion,
	// failure; and the roles').
	Events []plan.Event
	// RequeueAfter, when positive, asks for another sync after that delay;
	// RequeueReason says why.
	RequeueAfter  time.Duration
	RequeueReason string
	// Warnings lists bad input worked around, each naming the field and value.
	Warnings []string
	// Roles holds the plan of each role's pods, in the order of Workload.Roles,
	// for logs and tests. Their pod calls are in RemoveFinalizers, Delete and
	// Create already; their statuses are in Status (after Settle with no
	// removal), and their Backoff records need not be kept (plan rebuilds them
	// from the pods).
	Roles []*plan.Plan
}

// AsWorkload returns w as the one plan.Workload that the calls taking one read
// of an owner see (reconcile.Reconciler.ObserveOwnerEvent, the pod-event
// mapping, CleanOrphan's facts, Config.ReadOwner, the metrics, and the test
// rig's owner store): its identity (namespace, name, UID, generation,
// resourceVersion, object, deletion), spec.managedBy and suspension. It has no
// template, selector or status, and in particular it is never finished: a group
// that has finished (its Completed or Failed condition) still has pods to stop
// and count, which SyncRoles does until nothing runs or carries the tracking
// finalizer (then Compute skips it). Presented as finished, its pod events
// would sync it no more and an orphan cleanup would strip the finalizers of the
// pods its sync is stopping, racing with it: a running pod could be left with
// no finalizer and no sync to delete it. A deleted or replaced owner is the
// orphan cleanup's, as any owner's. It shares ManagedBy with w.
func (w *Workload) AsWorkload() *plan.Workload {
	return &plan.Workload{
		Namespace:       w.Namespace,
		Name:            w.Name,
		UID:             w.UID,
		Deleting:        w.Deleting,
		Generation:      w.Generation,
		ResourceVersion: w.ResourceVersion,
		Object:          w.Object,
		Spec:            plan.Spec{ManagedBy: w.ManagedBy, Suspend: &w.Suspend},
	}
}

// Terms returns the words of the messages of the conditions and events of an
// owner of kind k: the group is named by its kind (JobSet's "jobset" when the
// kind has none) and a child is a role, named by the role ("TrainingJob
// completed successfully", "TrainingJob failed due to one or more role
// failures (first failed role: worker)"). The reasons are JobSet's.
func Terms(k owner.Kind) plaingroup.Terms {
	return plaingroup.Terms{Group: k.Kind, Child: "role", Children: "roles", ByRole: true}
}
