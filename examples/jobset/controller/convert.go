package controller

import (
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
	// For integrations that start, stop and place JobSets from outside (the
	// Kueue integration): spec.suspend, spec.managedBy, and the roles' Job
	// templates inside the JobSet (Input's are copies).
	SetSuspend:   func(js *v1alpha2.JobSet, suspend bool) { js.Spec.Suspend = &suspend },
	SetManagedBy: func(js *v1alpha2.JobSet, managedBy *string) { js.Spec.ManagedBy = managedBy },
	ChildJobTemplates: func(js *v1alpha2.JobSet) []*batchv1.JobTemplateSpec {
		out := make([]*batchv1.JobTemplateSpec, len(js.Spec.ReplicatedJobs))
		for i := range js.Spec.ReplicatedJobs {
			out[i] = &js.Spec.ReplicatedJobs[i].Template
		}
		return out
	},
}

// Validate checks a JobSet as JobSet's CRD schema and webhook do on create:
// childjobs.Input.Validate of its conversion, which controllerruntime runs
// before each sync (this example has no webhook). Each error has JobSet's
// field path, the value, and JobSet's words.
func Validate(js *v1alpha2.JobSet) field.ErrorList {
	return Input(js, nil, false, "", "", time.Time{}).Validate()
}

// ValidateUpdate checks a JobSet js that replaces old as JobSet's CRD schema
// and webhook do on update: childjobs.Input.ValidateUpdate of both
// conversions. A validating webhook would call it; this example's CRD holds
// immutability rules of its own (a role's template changes only while the
// JobSet is suspended, as a queue such as Kueue changes it).
func ValidateUpdate(old, js *v1alpha2.JobSet) field.ErrorList {
	return Input(js, nil, false, "", "", time.Time{}).ValidateUpdate(Input(old, nil, false, "", "", time.Time{}))
}

// Default applies JobSet's webhook defaults to js, as a mutating webhook
// would: childjobs.Input.Default of its conversion, written back (the roles'
// group names and templates, the success, startup and failure policies, the
// network). It modifies js; network.subdomain stays unset, as JobSet leaves
// it.
func Default(js *v1alpha2.JobSet) {
	in := Input(js, nil, false, "", "", time.Time{})
	in.Default()
	s := &js.Spec
	for i := range s.ReplicatedJobs {
		s.ReplicatedJobs[i].GroupName = in.Spec.Roles[i].GroupName
		s.ReplicatedJobs[i].Template = in.Templates[i]
	}
	s.SuccessPolicy = &v1alpha2.SuccessPolicy{Operator: v1alpha2.Operator(in.Spec.SuccessPolicy.Operator),
		TargetReplicatedJobs: in.Spec.SuccessPolicy.TargetReplicatedJobs}
	s.StartupPolicy = &v1alpha2.StartupPolicy{StartupPolicyOrder: v1alpha2.StartupPolicyOrder(in.Spec.StartupOrder)}
	if p := s.FailurePolicy; p != nil {
		p.RestartStrategy = v1alpha2.RestartStrategy(in.Spec.FailurePolicy.RestartStrategy)
		for i := range p.Rules {
			p.Rules[i].Name = in.Spec.FailurePolicy.Rules[i].Name
		}
	}
	if s.Network == nil {
		s.Network = &v1alpha2.Network{}
	}
	s.Network.EnableDNSHostnames, s.Network.PublishNotReadyAddresses = in.EnableDNSHostnames, in.PublishNotReadyAddresses
}

// Spec converts a JobSet's spec onto plain/group's: the roles (name, group name,
// replicas, dependsOn), the policies, the coordinator, the subdomain, the TTL,
// managedBy and the volume claims of spec.volumeClaimPolicies. Parallelism and completions are left to childjobs.Compute, which reads
// them from the templates. js is not modified; no slice of it is shared.
func Spec(js *v1alpha2.JobSet) plaingroup.Spec {
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
		out.Coordinator = &plaingroup.Coordinator{ReplicatedJob: c.ReplicatedJob, JobIndex: c.JobIndex, PodIndex: c.PodIndex}
	}
	if n := s.Network; n != nil {
		out.Subdomain = n.Subdomain
	}
	for i, p := range s.VolumeClaimPolicies {
		when := ""
		if r := p.RetentionPolicy; r != nil && r.WhenDeleted != nil {
			when = string(*r.WhenDeleted)
		}
		for k := range p.Templates {
			t := &p.Templates[k]
			out.VolumeClaims = append(out.VolumeClaims, plaingroup.VolumeClaim{
				Name: t.Name, Namespace: t.Namespace, Policy: i, Template: k, WhenDeleted: when,
			})
		}
	}
	return out
}

// ClaimTemplates returns the persistent volume claim templates of a JobSet's
// spec.volumeClaimPolicies, policy by policy, in the order of
// plaingroup.Spec.VolumeClaims (Spec): childjobs.Input.ClaimTemplates. The
// templates are shallow copies; nil when there are none.
func ClaimTemplates(js *v1alpha2.JobSet) []corev1.PersistentVolumeClaim {
	var out []corev1.PersistentVolumeClaim
	for _, p := range js.Spec.VolumeClaimPolicies {
		out = append(out, p.Templates...)
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
		Annotations:     js.Annotations,
		Owner:           Kind,
		Deleting:        js.DeletionTimestamp != nil,
		Spec:            Spec(js),
		Templates:       make([]batchv1.JobTemplateSpec, len(js.Spec.ReplicatedJobs)),
		ClaimTemplates:  ClaimTemplates(js),
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

		PreviousInPlaceRestartAttempt: s.PreviousInPlaceRestartAttempt,
		CurrentInPlaceRestartAttempt:  s.CurrentInPlaceRestartAttempt,
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

		PreviousInPlaceRestartAttempt: s.PreviousInPlaceRestartAttempt,
		CurrentInPlaceRestartAttempt:  s.CurrentInPlaceRestartAttempt,
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
