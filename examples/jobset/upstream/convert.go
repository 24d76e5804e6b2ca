package upstream

import (
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// JobSetType is the reconcile.Type of JobSet's own JobSets
// (jobset.x-k8s.io/v1alpha2, the Go type of sigs.k8s.io/jobset), which Setup
// hands to controllerruntime.Setup: the same shape as the example's own
// controller.JobSetType, a group whose roles run as child Jobs, converted
// from JobSet's Go type instead of the example's. Its spec.managedBy, unset,
// names JobSet's own controller.
var JobSetType = reconcile.Type[*jobset.JobSet]{
	New: func() *jobset.JobSet { return &jobset.JobSet{} },
	ChildJobs: func(js *jobset.JobSet) (*childjobs.Input, error) {
		return Input(js), nil
	},
	SetChildJobsStatus: func(js *jobset.JobSet, s childjobs.Status) error {
		js.Status = APIStatus(&s)
		return nil
	},
	ManagedBy: func(js *jobset.JobSet) *string { return js.Spec.ManagedBy },
}

// Validate checks a JobSet as JobSet's webhook does on create:
// childjobs.Input.Validate of its conversion, which controllerruntime runs
// before each sync. Each error has JobSet's field path and the value.
func Validate(js *jobset.JobSet) field.ErrorList { return Input(js).Validate() }

// Spec converts a JobSet's spec onto plain/group's: the roles (name, group
// name, replicas, dependsOn), the policies, the coordinator, the subdomain,
// the volume claims (one per template of spec.volumeClaimPolicies, in
// order), the TTL and managedBy. Parallelism and completions are left to
// childjobs.Compute, which reads them from the templates. js is not modified;
// no slice of it is shared.
func Spec(js *jobset.JobSet) plaingroup.Spec {
	s := &js.Spec
	out := plaingroup.Spec{
		Name:                    js.Name,
		GenerateName:            js.GenerateName,
		Roles:                   make([]plaingroup.Role, len(s.ReplicatedJobs)),
		TTLSecondsAfterFinished: s.TTLSecondsAfterFinished,
		ManagedBy:               ptr.Deref(s.ManagedBy, ""),
	}
	for i := range s.ReplicatedJobs {
		rj := &s.ReplicatedJobs[i]
		r := plaingroup.Role{Name: rj.Name, GroupName: rj.GroupName, Replicas: rj.Replicas}
		for _, d := range rj.DependsOn {
			r.DependsOn = append(r.DependsOn, plaingroup.Dependency{Name: d.Name, Status: plaingroup.DependsOnStatus(d.Status)})
		}
		out.Roles[i] = r
	}
	if p := s.SuccessPolicy; p != nil {
		out.SuccessPolicy = &plaingroup.SuccessPolicy{Operator: plaingroup.Operator(p.Operator), TargetReplicatedJobs: slices.Clone(p.TargetReplicatedJobs)}
	}
	if p := s.FailurePolicy; p != nil {
		fp := &plaingroup.FailurePolicy{MaxRestarts: p.MaxRestarts, RestartStrategy: plaingroup.RestartStrategy(p.RestartStrategy)}
		for _, r := range p.Rules {
			fp.Rules = append(fp.Rules, plaingroup.Rule{
				Name:                        r.Name,
				Action:                      plaingroup.Action(r.Action),
				OnJobFailureReasons:         slices.Clone(r.OnJobFailureReasons),
				OnJobFailureMessagePatterns: slices.Clone(r.OnJobFailureMessagePatterns),
				TargetReplicatedJobs:        slices.Clone(r.TargetReplicatedJobs),
			})
		}
		out.FailurePolicy = fp
	}
	if p := s.StartupPolicy; p != nil {
		out.StartupOrder = plaingroup.StartupOrder(p.StartupPolicyOrder)
	}
	if c := s.Coordinator; c != nil {
		// JobSet's indexes are Go ints that its CRD bounds to int32.
		out.Coordinator = &plaingroup.Coordinator{ReplicatedJob: c.ReplicatedJob, JobIndex: int32(c.JobIndex), PodIndex: int32(c.PodIndex)}
	}
	if n := s.Network; n != nil {
		out.Subdomain = n.Subdomain
	}
	for i := range s.VolumeClaimPolicies {
		p := &s.VolumeClaimPolicies[i]
		var whenDeleted string
		if p.RetentionPolicy != nil && p.RetentionPolicy.WhenDeleted != nil {
			whenDeleted = string(*p.RetentionPolicy.WhenDeleted)
		}
		for j := range p.Templates {
			t := &p.Templates[j]
			out.VolumeClaims = append(out.VolumeClaims, plaingroup.VolumeClaim{
				Name: t.Name, Namespace: t.Namespace, Policy: i, Template: j, WhenDeleted: whenDeleted,
			})
		}
	}
	return out
}

// Input converts a JobSet onto childjobs.Input, its Object js, with what the
// JobSet alone says (the claim templates of spec.volumeClaimPolicies too): the executor (reconcile.Reconciler.SyncChildJobs) fills
// the children, the Service, the controller's names and the time of the sync.
// JobSet's webhook defaults are applied (childjobs.Input.Default), so that a
// JobSet stored without JobSet's webhook (a cluster where this controller
// replaces JobSet's, or JobSet's own integration suite) is validated and run
// as the webhook would have stored it; js is not modified (each template is a
// copy of the struct, and the defaults replace its fields rather than write
// through them).
func Input(js *jobset.JobSet) *childjobs.Input {
	in := &childjobs.Input{
		Name:            js.Name,
		Namespace:       js.Namespace,
		UID:             js.UID,
		Generation:      js.Generation,
		ResourceVersion: js.ResourceVersion,
		Object:          js,
		Owner:           Kind,
		Deleting:        js.DeletionTimestamp != nil,
		Spec:            Spec(js),
		Templates:       make([]batchv1.JobTemplateSpec, len(js.Spec.ReplicatedJobs)),
		Suspend:         ptr.Deref(js.Spec.Suspend, false),
		Status:          Status(&js.Status),
	}
	for i := range js.Spec.ReplicatedJobs {
		in.Templates[i] = js.Spec.ReplicatedJobs[i].Template
	}
	for _, p := range js.Spec.VolumeClaimPolicies {
		in.ClaimTemplates = append(in.ClaimTemplates, p.Templates...)
	}
	if n := js.Spec.Network; n != nil {
		in.EnableDNSHostnames, in.PublishNotReadyAddresses = n.EnableDNSHostnames, n.PublishNotReadyAddresses
	}
	in.Default()
	return in
}

// Status converts a JobSet's status onto childjobs.Status. The conditions are
// shared, not copied: childjobs.Compute never modifies them.
func Status(s *jobset.JobSetStatus) childjobs.Status {
	out := childjobs.Status{
		Restarts:                s.Restarts,
		RestartsCountTowardsMax: s.RestartsCountTowardsMax,
		TerminalState:           s.TerminalState,
		Conditions:              s.Conditions,

		PreviousInPlaceRestartAttempt: s.PreviousInPlaceRestartAttempt,
		CurrentInPlaceRestartAttempt:  s.CurrentInPlaceRestartAttempt,
	}
	if len(s.ReplicatedJobsStatus) > 0 {
		out.ReplicatedJobs = make([]plaingroup.RoleStatus, len(s.ReplicatedJobsStatus))
	}
	for i, r := range s.ReplicatedJobsStatus {
		out.ReplicatedJobs[i] = plaingroup.RoleStatus{
			Name: r.Name, Ready: r.Ready, Succeeded: r.Succeeded, Failed: r.Failed, Active: r.Active, Suspended: r.Suspended,
		}
	}
	return out
}

// APIStatus converts a childjobs.Status (a Plan's) back onto a JobSet's
// status. Slices are shared with s. JobSet v0.11's per-role status has no
// per-child restart counters: those of a RestartJob rule, which that
// release's API cannot name, are dropped.
func APIStatus(s *childjobs.Status) jobset.JobSetStatus {
	out := jobset.JobSetStatus{
		Conditions:              s.Conditions,
		Restarts:                s.Restarts,
		RestartsCountTowardsMax: s.RestartsCountTowardsMax,
		TerminalState:           s.TerminalState,

		PreviousInPlaceRestartAttempt: s.PreviousInPlaceRestartAttempt,
		CurrentInPlaceRestartAttempt:  s.CurrentInPlaceRestartAttempt,
	}
	if len(s.ReplicatedJobs) > 0 {
		out.ReplicatedJobsStatus = make([]jobset.ReplicatedJobStatus, len(s.ReplicatedJobs))
	}
	for i, r := range s.ReplicatedJobs {
		out.ReplicatedJobsStatus[i] = jobset.ReplicatedJobStatus{
			Name: r.Name, Ready: r.Ready, Succeeded: r.Succeeded, Failed: r.Failed, Active: r.Active, Suspended: r.Suspended,
		}
	}
	return out
}
