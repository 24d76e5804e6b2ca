package childjobs

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// Input is everything one sync of a group reads: the group's identity, spec and
// status, its child Jobs, and the time. Compute never modifies it.
type Input struct {
	// Name, Namespace and UID are the group's metadata; Generation is its
	// metadata.generation, the observedGeneration of the conditions a sync
	// changes.
	Name, Namespace string
	UID             types.UID
	Generation      int64
	// ResourceVersion is the group's metadata.resourceVersion and Object the
	// group's API object. Compute reads neither; an executor does
	// (reconcile.Reconciler.SyncChildJobs): the version is the precondition of
	// the status write and tells a cache older than that write, and the events
	// are recorded on Object.
	ResourceVersion string
	Object          runtime.Object
	// Owner is the group's API type (for JobSet, jobset.x-k8s.io/v1alpha2
	// JobSet): the controller reference of the children and the Service, and the
	// test of which Jobs are the group's.
	Owner schema.GroupVersionKind
	// Deleting is set once the group has a deletionTimestamp: a sync then does
	// nothing (the garbage collector removes the children).
	Deleting bool
	// Annotations are the group's metadata.annotations, of which the
	// exclusive placement keys are read (alpha.jobset.sigs.k8s.io/
	// exclusive-topology and node-selector, as on a role's Job template:
	// plaingroup.Spec.Exclusive); nil for none.
	Annotations map[string]string

	// Spec is the group's spec in plain terms. Its Name, when set, must be Name.
	// Each role's Parallelism and Completions are read from its template (with
	// the API's default parallelism of 1), whatever Spec says; Compute applies
	// plaingroup.Default to the rest.
	Spec plaingroup.Spec
	// Templates are the Job templates of the roles, one per Spec.Roles item, in
	// the same order (spec.replicatedJobs[].template).
	Templates []batchv1.JobTemplateSpec
	// ClaimTemplates are the persistent volume claim templates of
	// spec.volumeClaimPolicies, one per Spec.VolumeClaims item, in the same
	// order; each item's Name and Namespace are read from its template,
	// whatever Spec says.
	ClaimTemplates []corev1.PersistentVolumeClaim
	// Suspend is spec.suspend.
	Suspend bool
	// DisruptionBudget, when set, is the maxUnavailable of a
	// PodDisruptionBudget over the group's pods (a count or a percentage of
	// them), which the plan creates: named after the group, selecting the
	// pods by the jobset-name and jobset-uid labels, controlled by the group.
	// JobSet has no such field (its v0.11 budget is the Helm chart's, for its
	// controller's own pods); this is jobkit's. A budget of 0 blocks every
	// voluntary eviction, a node drain's too, until the group finishes.
	DisruptionBudget *intstr.IntOrString
	// EnableDNSHostnames and PublishNotReadyAddresses are spec.network's; nil
	// means true, the JobSet webhook's default. With DNS hostnames the pods get
	// the subdomain (Spec.Subdomain, default the group's name) and the group a
	// headless Service of that name.
	EnableDNSHostnames, PublishNotReadyAddresses *bool

	// Status is the group's status as last written.
	Status Status
	// Children are the child Jobs in the cache (the Jobs controlled by the
	// group, and any Job that claims to be one of its children). Nil items are
	// skipped.
	Children []*batchv1.Job
	// ServiceExists says whether the headless Service is in the cache.
	ServiceExists bool
	// ExistingClaims names the group's persistent volume claims
	// (<claim>-<group>) in the cache; each claim not named is planned. A
	// caller that does not watch claims leaves it nil, and every sync of a
	// running group sends their creations (AlreadyExists is done), as JobSet
	// does.
	ExistingClaims []string
	// DisruptionBudgetExists says whether the group's PodDisruptionBudget is
	// in the cache; without it, a group with a DisruptionBudget plans one at
	// each sync while it runs (AlreadyExists is done).
	DisruptionBudgetExists bool
	// Pods are the group's pods in the cache (labelled with the group's name,
	// plaingroup.LabelJobSetName), read only under the in-place restart
	// strategy: the attempt each reports and its containers' restart counts.
	// A pod whose jobset-uid label names another group is left out. Nil
	// items are skipped.
	Pods []*corev1.Pod

	// ControllerName, when set, is the name of the controller computing the
	// plan: a group whose Spec.ManagedBy names another controller is skipped
	// (an unset managedBy names JobSet's, plaingroup.ControllerName). Empty
	// handles every group.
	ControllerName string
	// ChildManagedBy, when set, is the spec.managedBy of the children created,
	// so that the Job controller of that name (a jobkit one) runs them rather
	// than the kube-controller-manager.
	ChildManagedBy string
	// Now is the time of the sync.
	Now time.Time
}

// Status is the part of a group's status a sync reads and writes, in JobSet's
// field names.
type Status struct {
	// Restarts is status.restarts, RestartsCountTowardsMax
	// status.restartsCountTowardsMax.
	Restarts, RestartsCountTowardsMax int32
	// TerminalState is status.terminalState: "", "Completed" or "Failed".
	TerminalState string
	// Conditions is status.conditions.
	Conditions []metav1.Condition
	// ReplicatedJobs is status.replicatedJobsStatus: one entry per role, in the
	// order of the spec, with the per-index restart counters.
	ReplicatedJobs []plaingroup.RoleStatus
	// PreviousInPlaceRestartAttempt and CurrentInPlaceRestartAttempt are
	// status.previousInPlaceRestartAttempt and currentInPlaceRestartAttempt,
	// the barrier of an in-place restart (plaingroup.InPlaceAttempts); nil is
	// unset.
	PreviousInPlaceRestartAttempt, CurrentInPlaceRestartAttempt *int32
}

// Plan is the decision of one sync of a group: plain data, computed without I/O.
// A caller executes it in this order, which keeps the restart counters exact
// across crashes:
//
//  1. when DeleteGroup is set, delete the group itself with foreground
//     propagation; nothing else is planned;
//  2. write Status when StatusChanged: the restart counters and the terminal
//     condition are recorded before any child goes, so a controller restarted
//     in the middle of a restart finds the children of the old attempt obsolete
//     and deletes them, rather than counting the failure again or not at all.
//     Write it with the resourceVersion it was read at (an update, or a patch
//     with that precondition): a sync that read a status older than the last
//     write would otherwise count the same failure twice;
//  3. delete the Jobs of Delete, with their Propagation (NotFound means done);
//  4. create Service when it is not nil, the claims of Claims and
//     DisruptionBudget when it is not nil (AlreadyExists is done);
//  5. set spec.suspend on the Jobs of Suspend, clear it on those of Resume,
//     and set the spec.parallelism and spec.completions of the Jobs of Scale;
//  6. create the Jobs of Create (an AlreadyExists answer means an earlier sync
//     created it: names are deterministic, so no child is created twice);
//  7. record Events, and sync again after RequeueAfter when it is positive.
type Plan struct {
	// Skip is set when the group is not to be handled (it is being deleted, or
	// another controller manages it);
	// every other field is then empty.
	Skip string
	// DeleteGroup, when not empty, says why the group itself is to be deleted
	// (its TTL after finishing has expired).
	DeleteGroup string

	// Status is the status to write; StatusChanged says whether it differs from
	// Input.Status.
	Status        Status
	StatusChanged bool

	// Delete lists the child Jobs to delete.
	Delete []Deletion
	// Service is the headless Service to create, with why in ServiceReason.
	Service       *corev1.Service
	ServiceReason string
	// Claims are the persistent volume claims of spec.volumeClaimPolicies to
	// create, each complete: name <claim>-<group>, namespace, labels (the
	// template's and jobset-name), annotations, spec, and the group's
	// controller reference under the retention policy Delete only.
	Claims []*corev1.PersistentVolumeClaim
	// DisruptionBudget is the group's PodDisruptionBudget to create
	// (Input.DisruptionBudget), complete.
	DisruptionBudget *policyv1.PodDisruptionBudget
	// Suspend and Resume list child Jobs (the Input's, not modified) whose
	// spec.suspend must be set or cleared. A Resume item's Job also carries
	// the pod template fields to write with it: when the role's pod template
	// holds labels, annotations, nodeSelector keys, tolerations or scheduling
	// gates the child's lacks (changed while the group was suspended, by a
	// queue such as Kueue), it is a copy of the Input's Job with them merged
	// in (the role's value wins a key both hold; the child's own keys and
	// items stay), as JobSet does on resume.
	Suspend, Resume []JobAction
	// Scale lists the running child Jobs of an Indexed role whose size
	// changed (an elastic group: plaingroup.Spec.Resized), each a copy of the
	// Input's Job with spec.parallelism and spec.completions set to the role's
	// new values, the two fields to write.
	Scale []JobAction
	// Create lists the child Jobs to create, each complete: name, namespace,
	// labels, annotations, controller reference and spec.
	Create []JobAction

	// Events are the events of this sync's decisions.
	Events []plan.Event
	// RequeueAfter, when positive, asks for another sync after that delay;
	// RequeueReason says why.
	RequeueAfter  time.Duration
	RequeueReason string
	// Warnings lists the children this sync ignored (not the group's, or with
	// labels that cannot be read), each naming the Job, the field and the value.
	Warnings []string
}

// JobAction is a child Job with the reason the plan acts on it.
type JobAction struct {
	Job    *batchv1.Job
	Reason string
}

// Deletion is a child Job to delete: with Propagation foreground, so the Job
// stays (its name taken) until its pods are gone, and no new child of that name
// meets pods of the old one.
type Deletion struct {
	Job         *batchv1.Job
	Propagation metav1.DeletionPropagation
	Reason      string
}

// IsEmpty reports whether the plan asks for nothing: no API call and no requeue.
func (p *Plan) IsEmpty() bool {
	return p.Skip == "" && p.DeleteGroup == "" && !p.StatusChanged && len(p.Delete) == 0 &&
		p.Service == nil && len(p.Claims) == 0 && p.DisruptionBudget == nil && len(p.Suspend) == 0 && len(p.Resume) == 0 && len(p.Scale) == 0 && len(p.Create) == 0 &&
		len(p.Events) == 0 && p.RequeueAfter == 0
}

// String renders the plan in a few lines for logs and test failures.
func (p *Plan) String() string {
	if p.Skip != "" {
		return "skip: " + p.Skip
	}
	if p.DeleteGroup != "" {
		return "delete the group: " + p.DeleteGroup
	}
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	s := &p.Status
	changed := ""
	if p.StatusChanged {
		changed = " (changed)"
	}
	line("status: restarts=%d countTowardsMax=%d terminal=%q%s", s.Restarts, s.RestartsCountTowardsMax, s.TerminalState, changed)
	if s.PreviousInPlaceRestartAttempt != nil || s.CurrentInPlaceRestartAttempt != nil {
		line("  in-place restart attempts: previous %s, current %s", attempt(s.PreviousInPlaceRestartAttempt), attempt(s.CurrentInPlaceRestartAttempt))
	}
	for _, c := range s.Conditions {
		line("  %s=%s %s", c.Type, c.Status, c.Reason)
	}
	if len(p.Delete) > 0 {
		parts := make([]string, len(p.Delete))
		for i, d := range p.Delete {
			parts[i] = d.Job.Name + " (" + d.Reason + ")"
		}
		line("delete %d: %s", len(p.Delete), abbreviate(parts))
	}
	if p.Service != nil {
		line("create service %s: %s", p.Service.Name, p.ServiceReason)
	}
	if len(p.Claims) > 0 {
		parts := make([]string, len(p.Claims))
		for i, c := range p.Claims {
			parts[i] = c.Name
		}
		line("create %d claims: %s", len(p.Claims), abbreviate(parts))
	}
	if b := p.DisruptionBudget; b != nil {
		line("create disruption budget %s: maxUnavailable %s", b.Name, b.Spec.MaxUnavailable.String())
	}
	for _, as := range []struct {
		verb string
		list []JobAction
	}{{"suspend", p.Suspend}, {"resume", p.Resume}, {"scale", p.Scale}, {"create", p.Create}} {
		if len(as.list) == 0 {
			continue
		}
		parts := make([]string, len(as.list))
		for i, a := range as.list {
			parts[i] = a.Job.Name + " (" + a.Reason + ")"
		}
		line("%s %d: %s", as.verb, len(as.list), abbreviate(parts))
	}
	for _, e := range p.Events {
		line("event %s %s: %s", e.Type, e.Reason, e.Message)
	}
	if p.RequeueAfter > 0 {
		line("requeue after %s: %s", p.RequeueAfter, p.RequeueReason)
	}
	for _, w := range p.Warnings {
		line("warning: %s", w)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// abbreviate joins the first three parts and counts the rest.
func abbreviate(parts []string) string {
	if len(parts) > 3 {
		return strings.Join(parts[:3], ", ") + fmt.Sprintf(", and %d more", len(parts)-3)
	}
	return strings.Join(parts, ", ")
}

// attempt renders an in-place restart attempt, "unset" for nil.
func attempt(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
