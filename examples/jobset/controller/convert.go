package controller

import (
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// JobSetType is the reconcile.Type of JobSets, which Setup hands to
// controllerruntime.Setup: a JobSet is a group whose roles run as child Jobs
// (ChildJobs is Input, with the children and the sync's settings left for the
// executor to fill; SetChildJobsStatus is APIStatus). Its spec.managedBy,
// unset, names JobSet's own controller.
var JobSetType = reconcile.Type[*v1alpha2.JobSet]{
	New: func() *v1alpha2.JobSet { return &v1alpha2.JobSet{} },
	ChildJobs: func(js *v1alpha2.JobSet) (*childjobs.Input, error) {
		return Input(js, nil, false, "", "", time.Time{}), nil
	},
	SetChildJobsStatus: func(js *v1alpha2.JobSet, s childjobs.Status) error {
		js.Status = APIStatus(&s)
		return nil
	},
	ManagedBy: func(js *v1alpha2.JobSet) *string { return js.Spec.ManagedBy },
}

// Validate checks a JobSet's spec with plain/group's Validate, the roles sized
// from their templates (parallelism, with the API's default of 1, and
// completions): childjobs.Input.Validate, which controllerruntime runs before
// each sync. Each error names the field and the value.
func Validate(js *v1alpha2.JobSet) plaingroup.Errors {
	return Input(js, nil, false, "", "", time.Time{}).Validate()
}

// Spec converts a JobSet's spec onto plain/group's: the roles (name, group name,
// replicas, dependsOn), the policies, the coordinator, the subdomain, the TTL and
// managedBy. Parallelism and completions are left to childjobs.Compute, which reads
// them from the templates. js is not modified; no slice of it is shared.
func Spec(js *v1alpha2.JobSet) plaingroup.Spec {
	s := &js.Spec
	out := plaingroup.Spec{
		Name:                    js.Name,
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
		out.Coordinator = &plaingroup.Coordinator{ReplicatedJob: c.ReplicatedJob, JobIndex: c.JobIndex, PodIndex: c.PodIndex}
	}
	if n := s.Network; n != nil {
		out.Subdomain = n.Subdomain
	}
	return out
}

// Input converts a JobSet and its child Jobs onto childjobs.Input for one sync at
// now; its Object is js. serviceExists says whether the headless Service is in the cache;
// controllerName and childManagedBy are Options.ManagedBy and
// Options.ChildManagedBy. The Input shares the JobSet's templates and the
// children, which childjobs.Compute never modifies.
func Input(js *v1alpha2.JobSet, children []*batchv1.Job, serviceExists bool, controllerName, childManagedBy string, now time.Time) *childjobs.Input {
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
		Children:        children,
		ServiceExists:   serviceExists,
		ControllerName:  controllerName,
		ChildManagedBy:  childManagedBy,
		Now:             now,
	}
	for i := range js.Spec.ReplicatedJobs {
		in.Templates[i] = js.Spec.ReplicatedJobs[i].Template
	}
	if n := js.Spec.Network; n != nil {
		in.EnableDNSHostnames, in.PublishNotReadyAddresses = n.EnableDNSHostnames, n.PublishNotReadyAddresses
	}
	return in
}

// Status converts a JobSet's status onto childjobs.Status. The conditions and the
// per-index counters are shared, not copied: childjobs.Compute never modifies them.
func Status(s *v1alpha2.JobSetStatus) childjobs.Status {
	out := childjobs.Status{
		Restarts:                s.Restarts,
		RestartsCountTowardsMax: s.RestartsCountTowardsMax,
		TerminalState:           string(s.TerminalState),
		Conditions:              s.Conditions,
	}
	if len(s.ReplicatedJobsStatus) > 0 {
		out.ReplicatedJobs = make([]plaingroup.RoleStatus, len(s.ReplicatedJobsStatus))
	}
	for i, r := range s.ReplicatedJobsStatus {
		out.ReplicatedJobs[i] = plaingroup.RoleStatus{
			Name: r.Name, Ready: r.Ready, Succeeded: r.Succeeded, Failed: r.Failed, Active: r.Active, Suspended: r.Suspended,
			JobRestarts: r.JobRestarts, JobRestartsCountTowardsMax: r.JobRestartsCountTowardsMax,
		}
	}
	return out
}

// APIStatus converts a childjobs.Status (a Plan's) back onto a JobSet's status.
// Slices are shared with s.
func APIStatus(s *childjobs.Status) v1alpha2.JobSetStatus {
	out := v1alpha2.JobSetStatus{
		Conditions:              s.Conditions,
		Restarts:                s.Restarts,
		RestartsCountTowardsMax: s.RestartsCountTowardsMax,
		TerminalState:           v1alpha2.TerminalState(s.TerminalState),
	}
	if len(s.ReplicatedJobs) > 0 {
		out.ReplicatedJobsStatus = make([]v1alpha2.ReplicatedJobStatus, len(s.ReplicatedJobs))
	}
	for i, r := range s.ReplicatedJobs {
		out.ReplicatedJobsStatus[i] = v1alpha2.ReplicatedJobStatus{
			Name: r.Name, Ready: r.Ready, Succeeded: r.Succeeded, Failed: r.Failed, Active: r.Active, Suspended: r.Suspended,
			JobRestarts: r.JobRestarts, JobRestartsCountTowardsMax: r.JobRestartsCountTowardsMax,
		}
	}
	return out
}
