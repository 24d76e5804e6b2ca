package childjobs

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plain/fielderr"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// sync is the state of one Compute call.
type sync struct {
	in          *Input
	spec        plaingroup.Spec
	matcher     *plaingroup.Matcher
	kind        owner.Kind
	dns         bool
	coordinator string

	// facts are the children read, jobs their Jobs (the same positions),
	// less the children beyond their role's replicas, which all holds too:
	// they are deleted and their names stay taken. foreign holds the names of
	// the Jobs left out, which are taken all the same.
	facts   []plaingroup.Child
	jobs    []*batchv1.Job
	all     []plaingroup.Child
	foreign map[string]bool

	// State is the group's state: counters, conditions, terminal state and
	// the events of this sync's decisions.
	*groups.State
	plan Plan
}

// Compute decides one sync of a group, in JobSet's order: read the children,
// and delete those beyond their role's replicas (a role scaled down: the
// highest index first, left out of every rule after); decide failure (before success) by the failure policy, then success by the
// success policy; delete the children of old attempts, and those still running
// once the group has finished; then, while it runs, the startup order and
// dependsOn, suspension and resumption, the children of an Indexed role whose
// size changed to resize in place, the headless Service, the missing volume
// claims and disruption budget, and the children to create; the status with its per-role entries and conditions; and, once it
// has finished, its TTL. Every rule is plaingroup's; Compute converts and
// assembles. It reads no clock (Input.Now), performs no I/O and modifies none
// of its inputs.
//
// It returns an error, and no plan, when the Input cannot be planned: no name,
// no Owner kind or version, a Spec.Name other than Name, a template count other than the role count (or the
// volume claim count), or a
// failure policy pattern that does not compile (plaingroup.Validate reports all
// of these and more on admission).
func Compute(in *Input) (Plan, error) {
	if in.Deleting {
		return Plan{Skip: "the group is being deleted"}, nil
	}
	if in.ControllerName != "" && !in.Spec.HandledBy(in.ControllerName) {
		return Plan{Skip: "managedBy " + cmp.Or(in.Spec.ManagedBy, plaingroup.ControllerName) + " is another controller"}, nil
	}
	s, err := start(in)
	if err != nil {
		return Plan{}, err
	}
	s.read()
	s.scaleDown()
	wasFinished := plaingroup.Finished(s.Conds) != nil
	if !wasFinished {
		if err := s.Decide(s.matcher, s.spec.SuccessPolicy, s.spec.Roles, s.facts); err != nil {
			s.warn("%v", err)
		}
	}
	attempts := s.inPlace()
	s.deleteObsolete()
	roles := s.spec.Roles
	statuses := plaingroup.Statuses(roles, s.facts, s.Counters)
	if plaingroup.Finished(s.Conds) != nil {
		s.finish(wasFinished)
		if s.plan.DeleteGroup != "" {
			return Plan{DeleteGroup: s.plan.DeleteGroup, Warnings: s.plan.Warnings}, nil
		}
	} else {
		startup := plaingroup.MayStart(s.spec.StartupOrder, roles, statuses)
		creatable := startup.Allowed
		if s.in.Suspend {
			// As JobSet: a suspended group creates the children of every role
			// whose dependencies are met, suspended, whatever the startup order
			// (InOrder then resumes them role after role), and its InOrder
			// conditions wait for the resume.
			creatable = plaingroup.MayStart(plaingroup.AnyOrder, roles, statuses).Allowed
			startup.Conditions = nil
		}
		for _, c := range startup.Conditions {
			s.Set(c)
		}
		s.suspension(startup.Allowed)
		s.resize()
		s.service()
		s.claims()
		s.budget()
		s.create(creatable)
	}
	if c := plaingroup.RestartEnded(s.Conds, roles, statuses, s.in.Suspend); c != nil {
		s.Set(*c)
	}
	s.plan.Status = Status{
		Restarts:                s.Counters.Restarts,
		RestartsCountTowardsMax: s.Counters.RestartsCountTowardsMax,
		TerminalState:           s.TerminalState,
		Conditions:              s.Conditions(in.Status.Conditions, in.Generation),
		ReplicatedJobs:          statuses,

		PreviousInPlaceRestartAttempt: attempts.Previous,
		CurrentInPlaceRestartAttempt:  attempts.Current,
	}
	s.plan.StatusChanged = !equalStatus(&in.Status, &s.plan.Status)
	s.plan.Events = s.Events
	return s.plan, nil
}

// start checks the Input and prepares the spec: roles sized from their
// templates, JobSet's defaults applied.
func start(in *Input) (*sync, error) {
	invalid := func(field string, v any, detail string) error {
		return fmt.Errorf("group: %w", &fielderr.Error{Type: fielderr.Invalid, Field: field, BadValue: v, Detail: detail})
	}
	switch {
	case in.Name == "":
		return nil, fmt.Errorf("group: %w", &fielderr.Error{Type: fielderr.Required, Field: "Input.Name"})
	case in.Owner.Kind == "" || in.Owner.Version == "":
		return nil, invalid("Input.Owner", in.Owner.String(), "needs a version and a kind: the children's controller reference names them")
	case in.Spec.Name != "" && in.Spec.Name != in.Name:
		return nil, invalid("Input.Spec.Name", in.Spec.Name, "must be Input.Name "+in.Name)
	case len(in.Templates) != len(in.Spec.Roles):
		return nil, invalid("Input.Templates", len(in.Templates), fmt.Sprintf("must hold one template per role (%d)", len(in.Spec.Roles)))
	case len(in.ClaimTemplates) != len(in.Spec.VolumeClaims):
		return nil, invalid("Input.ClaimTemplates", len(in.ClaimTemplates), fmt.Sprintf("must hold one template per volume claim (%d)", len(in.Spec.VolumeClaims)))
	}
	spec := in.sizedSpec()
	spec.Name = in.Name
	spec = plaingroup.Default(spec)
	m, err := plaingroup.Compile(spec.FailurePolicy)
	if err != nil {
		return nil, err
	}
	kind := owner.Kind{Group: in.Owner.Group, Version: in.Owner.Version, Kind: in.Owner.Kind}
	s := &sync{
		in: in, spec: spec, matcher: m,
		kind:  kind,
		dns:   ptr.Deref(in.EnableDNSHostnames, true),
		State: groups.Read(countersOf(&in.Status), in.Status.Conditions, in.Status.TerminalState, in.Now),
	}
	if c := spec.Coordinator; c != nil {
		s.coordinator = c.Value(in.Name, spec.Subdomain)
	}
	return s, nil
}

// read keeps the Jobs controlled by the group whose labels can be read.
func (s *sync) read() {
	kind := s.kind
	s.facts = make([]plaingroup.Child, 0, len(s.in.Children))
	s.jobs = make([]*batchv1.Job, 0, len(s.in.Children))
	for _, j := range s.in.Children {
		if j == nil {
			continue
		}
		if !kind.IsControlledBy(j, string(s.in.UID)) {
			s.ignore(j, errors.New("not controlled by the group (owner "+kind.String()+" uid "+string(s.in.UID)+")"))
			continue
		}
		ch, err := ReadChild(j)
		if err != nil {
			s.ignore(j, err)
			continue
		}
		s.facts = append(s.facts, ch)
		s.jobs = append(s.jobs, j)
	}
}

// ignore records a Job left out of the rules: its name stays taken.
func (s *sync) ignore(j *batchv1.Job, err error) {
	if s.foreign == nil {
		s.foreign = map[string]bool{}
	}
	s.foreign[j.Name] = true
	s.warn("job %s/%s ignored: %v", j.Namespace, j.Name, err)
}

func (s *sync) warn(format string, args ...any) {
	s.plan.Warnings = append(s.plan.Warnings, fmt.Sprintf(format, args...))
}

// deleteObsolete deletes the children of old attempts not yet being deleted.
func (s *sync) deleteObsolete() {
	for _, i := range plaingroup.Obsolete(s.facts, s.Counters) {
		ch := &s.facts[i]
		if ch.Deleting {
			continue
		}
		reason := fmt.Sprintf("obsolete: restart attempt %d, the group is at %d", ch.Attempt, s.Counters.Restarts)
		if ch.Attempt >= s.Counters.Restarts {
			reason = fmt.Sprintf("obsolete: job restart attempt %d, index %d of %q is at %d",
				ch.JobAttempt, ch.Index, ch.Role, s.Counters.JobRestarts(ch.Role, ch.Index))
		}
		s.delete(i, reason)
	}
}

func (s *sync) delete(i int, reason string) {
	s.plan.Delete = append(s.plan.Delete, Deletion{Job: s.jobs[i], Propagation: metav1.DeletePropagationForeground, Reason: reason})
}

// finish stops the running children of a finished group and applies its TTL;
// expired decides only when the group had finished before this sync, so the
// terminal status is written before the group goes.
func (s *sync) finish(wasFinished bool) {
	f := plaingroup.Finished(s.Conds)
	for i := range s.facts {
		ch := &s.facts[i]
		if ch.Deleting || ch.Outcome != plaingroup.Running || !s.Counters.Current(ch) {
			continue
		}
		if f.Type == plaingroup.ConditionCompleted {
			s.delete(i, "the group completed ("+f.Reason+"): success stops the rest")
		} else {
			s.delete(i, "the group failed ("+f.Reason+")")
		}
	}
	e, err := plaingroup.TTL(s.spec.TTLSecondsAfterFinished, s.Conds, s.in.Deleting, s.in.Now)
	switch {
	case err != nil:
		s.warn("%v", err)
	case s.spec.TTLSecondsAfterFinished == nil:
	case e.Expired && wasFinished:
		s.plan.DeleteGroup = fmt.Sprintf("ttlSecondsAfterFinished %d expired at %s", *s.spec.TTLSecondsAfterFinished, e.At.UTC().Format(time.RFC3339))
	default:
		s.plan.RequeueAfter = max(e.Left, time.Nanosecond)
		s.plan.RequeueReason = "ttlSecondsAfterFinished expires at " + e.At.UTC().Format(time.RFC3339)
	}
}

// suspension suspends the running children of a suspended group, or resumes
// those of the roles that may start.
func (s *sync) suspension(allowed []bool) {
	r := plaingroup.Suspend(s.in.Suspend, s.spec.Roles, s.facts, s.Counters, allowed)
	for _, i := range r.Suspend {
		if !s.facts[i].Deleting {
			s.plan.Suspend = append(s.plan.Suspend, JobAction{Job: s.jobs[i], Reason: "the group is suspended"})
		}
	}
	for _, i := range r.Resume {
		if !s.facts[i].Deleting {
			s.plan.Resume = append(s.plan.Resume, JobAction{Job: s.resumed(i), Reason: "the group runs and role " + s.facts[i].Role + " may start"})
		}
	}
	if s.Set(r.Condition) {
		s.Event(corev1.EventTypeNormal, r.Condition.Reason, r.Condition.Message)
	}
}

// service plans the headless Service when DNS hostnames are on and it is
// missing.
func (s *sync) service() {
	if s.dns && !s.in.ServiceExists {
		s.plan.Service = s.newService()
		s.plan.ServiceReason = "network.enableDNSHostnames: the pods' subdomain " + s.spec.Subdomain + " needs a headless Service"
	}
}

// create plans the missing children of the roles that may start.
func (s *sync) create(allowed []bool) {
	strategy := plaingroup.Recreate
	if p := s.spec.FailurePolicy; p != nil {
		strategy = p.RestartStrategy
	}
	slots := plaingroup.Creations(s.spec.Roles, s.all, s.Counters, strategy, allowed)
	ids := plaingroup.Identities(s.in.Name, s.spec.Roles, s.Counters, slots)
	for k := range ids {
		id := &ids[k]
		if s.foreign[id.Name] {
			s.warn("child %s not created: a Job of that name exists and is not the group's", id.Name)
			continue
		}
		reason := fmt.Sprintf("index %d of %q has no child (restart attempt %d, job restart attempt %d)",
			id.Index, id.Role, id.Attempt, id.JobAttempt)
		s.plan.Create = append(s.plan.Create, JobAction{Job: s.newChild(id, slots[k].Role), Reason: reason})
	}
}

// scaleDown deletes the children beyond their role's replicas, the highest
// index first, and leaves them out of the facts the rules read.
func (s *sync) scaleDown() {
	s.all = s.facts
	surplus := s.spec.Surplus(s.facts)
	if len(surplus) == 0 {
		return
	}
	drop := make([]bool, len(s.facts))
	for _, i := range surplus {
		drop[i] = true
		if ch := &s.facts[i]; !ch.Deleting {
			s.delete(i, fmt.Sprintf("scaled down: role %q has %d replicas, index %d goes (the highest first)",
				ch.Role, s.replicas(ch.Role), ch.Index))
		}
	}
	facts := make([]plaingroup.Child, 0, len(s.facts)-len(surplus))
	jobs := make([]*batchv1.Job, 0, cap(facts))
	for i := range s.facts {
		if !drop[i] {
			facts, jobs = append(facts, s.facts[i]), append(jobs, s.jobs[i])
		}
	}
	s.facts, s.jobs = facts, jobs
}

// replicas returns the replicas of the named role, 0 for none.
func (s *sync) replicas(role string) int32 {
	for i := range s.spec.Roles {
		if s.spec.Roles[i].Name == role {
			return s.spec.Roles[i].Replicas
		}
	}
	return 0
}

// resize plans the running children of an Indexed role whose size changed,
// each a copy of its Job with the role's parallelism and completions.
func (s *sync) resize() {
	for _, i := range s.spec.Resized(s.facts, s.Counters) {
		ch := &s.facts[i]
		var role *plaingroup.Role
		for r := range s.spec.Roles {
			if s.spec.Roles[r].Name == ch.Role {
				role = &s.spec.Roles[r]
			}
		}
		job := s.jobs[i].DeepCopy()
		job.Spec.Parallelism, job.Spec.Completions = ptr.To(role.Parallelism), ptr.To(*role.Completions)
		s.plan.Scale = append(s.plan.Scale, JobAction{Job: job, Reason: fmt.Sprintf("role %q resized: parallelism and completions %d, were %d and %s",
			ch.Role, role.Parallelism, ch.Parallelism, attempt(ch.Completions))})
	}
}
