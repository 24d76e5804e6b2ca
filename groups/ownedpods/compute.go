package ownedpods

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// mode is why a role runs or not in this sync.
type mode int8

const (
	// running: its pods run.
	running mode = iota
	// waiting: the startup order or dependsOn holds it back.
	waiting
	// suspended: the owner is suspended.
	suspended
	// restarting: its attempt is older than the group's; it stops, and advances
	// once nothing of the attempt is left.
	restarting
	// finishing: the group has finished; its remaining pods stop.
	finishing
	// advancing: a restarting role with nothing of its attempt left; its status
	// starts the group's attempt in this sync.
	advancing
)

// sync is the state of one Compute call.
type sync struct {
	in      *Input
	spec    plaingroup.Spec // one child per role, JobSet's defaults applied
	matcher *plaingroup.Matcher

	// State is the group's state: counters, conditions, terminal state and
	// the events of the group's decisions.
	*groups.State
	// status holds each role's entry as read (zero when missing), in the order
	// of the roles.
	status []RoleStatus
	// pods holds each role's pods of its current attempt.
	pods [][]*corev1.Pod

	modes     []mode
	templates []*corev1.PodTemplateSpec
	plans     []*plan.Plan
	// jobs holds the status each role's plan writes: safe before its removals.
	jobs []batchv1.JobStatus
	// ownFailures counts, per role, the pods that jobs records as failed for
	// the first time and that failed by themselves.
	ownFailures []int32

	out Plan
}

// Compute decides one sync of a Workload. It is pure: it reads in, performs no
// I/O, reads no clock and modifies neither the owner nor the pods.
//
// It returns an error wrapping plan.ErrInvalidJob, naming the field and value,
// for input it cannot plan: no Workload, no ControllerName, no Owner kind (or
// a batch/v1 Job's), no role, a role
// name that is not a DNS label, repeats or makes hostnames longer than 63
// characters, a group rule plaingroup.Validate refuses, a RestartJob action, or
// a role Spec plan.Compute refuses. Bad data it can work around (a status entry
// of no role, a stray pod) is reported in Plan.Warnings.
//
// Cost: that of plan.Compute over each role's pods (twice for the roles whose
// mode the group decision of this sync changes), plus O(roles + pods).
func Compute(in Input) (*Plan, error) {
	spec, m, err := validate(&in)
	if err != nil {
		return nil, err
	}
	w := in.Workload
	if !w.AsWorkload().HandledBy(in.ControllerName, in.Owner) {
		return &Plan{Skip: fmt.Sprintf("spec.managedBy is %q, not %q", *w.ManagedBy, in.ControllerName)}, nil
	}
	s := &sync{in: &in, spec: spec, matcher: m}
	s.readStatus()
	s.sortPods()
	if s.finished() && !s.tracking() && s.shown() {
		return &Plan{Skip: "the group has finished, no pod runs or carries the tracking finalizer " + in.Owner.Finalizer}, nil
	}
	n := len(w.Roles)
	s.templates = make([]*corev1.PodTemplateSpec, n)
	s.plans = make([]*plan.Plan, n)
	s.jobs = make([]batchv1.JobStatus, n)
	s.ownFailures = make([]int32, n)

	// First the roles as the stored status has them; then the group rules over
	// the statuses those plans write, so that a role's failure or success and the
	// group's answer to it are written together; then again the roles whose
	// mode that answer changed.
	stored := make([]batchv1.JobStatus, n)
	for i := range s.status {
		stored[i] = s.status[i].Job
	}
	s.modes = s.decideModes(s.mayStart(s.children(stored), stored, false))
	for i := range n {
		if err := s.planRole(i); err != nil {
			return nil, err
		}
	}
	children := s.children(s.jobs)
	if !s.finished() && !w.Deleting {
		if err := s.Decide(s.matcher, s.spec.SuccessPolicy, s.spec.Roles, children); err != nil {
			s.warn("%v", err)
		}
	}
	s.out.Status.InPlace = s.inPlace()
	statuses := plaingroup.Statuses(s.spec.Roles, children, s.Counters)
	allowed := s.mayStart(children, s.jobs, true)
	for i, md := range s.decideModes(allowed) {
		if (md == running) != (s.modes[i] == running) {
			s.modes[i] = md
			if err := s.planRole(i); err != nil {
				return nil, err
			}
		}
		s.modes[i] = md
	}
	if c := s.Terms.RestartEnded(s.Conds, s.spec.Roles, statuses, w.Suspend); c != nil {
		s.Set(*c)
	}
	s.restart()
	s.assemble()
	return &s.out, nil
}

// mayStart says which roles may run: those the startup order and dependsOn
// allow, and those that have started already (a role that runs is not stopped
// again when a dependency's pods stop being ready; JobSet gates only the
// creation of a child). With decided, the group's startup conditions are set.
func (s *sync) mayStart(children []plaingroup.Child, jobs []batchv1.JobStatus, decided bool) []bool {
	if s.finished() {
		return nil
	}
	st := plaingroup.MayStart(s.spec.StartupOrder, s.spec.Roles, plaingroup.Statuses(s.spec.Roles, children, s.Counters))
	for i := range st.Allowed {
		j := &jobs[i]
		if len(s.pods[i]) > 0 || j.StartTime != nil {
			st.Allowed[i] = true
		}
	}
	if decided {
		for _, c := range st.Conditions {
			s.Set(c)
		}
		r := s.Terms.Suspend(s.in.Workload.Suspend, s.spec.Roles, children, s.Counters, st.Allowed)
		if s.Set(r.Condition) {
			s.Event(corev1.EventTypeNormal, r.Condition.Reason, r.Condition.Message)
		}
	}
	return st.Allowed
}

// decideModes says why each role runs or not, from the group's state and the
// roles allowed to start (nil once the group has finished).
func (s *sync) decideModes(allowed []bool) []mode {
	out := make([]mode, len(s.status))
	for i := range s.status {
		switch {
		case s.finished():
			out[i] = finishing
		case s.status[i].Attempt < s.Counters.Restarts:
			out[i] = restarting
		case s.in.Workload.Suspend:
			out[i] = suspended
		case allowed != nil && !allowed[i]:
			out[i] = waiting
		}
	}
	return out
}

// planRole runs plan.Compute over role i's pods in its mode.
func (s *sync) planRole(i int) error {
	w := s.in.Workload
	r := &w.Roles[i]
	old := &s.status[i]
	if s.templates[i] == nil {
		s.templates[i] = s.template(i, old.Attempt)
	}
	spec := r.Spec
	spec.Template = s.templates[i]
	spec.Selector, spec.ManagedBy = nil, nil
	if s.modes[i] != running {
		spec.Suspend = ptr.To(true)
	}
	opts := s.in.Options
	if r.Backoff != (plainbackoff.Policy{}) {
		opts.Backoff = r.Backoff
	}
	// A role that stops for good (the group finished, or its attempt is over) is
	// planned as an owner being deleted: every finished pod is recorded and its
	// finalizer removed at once (a failed pod of an Indexed role with
	// backoffLimitPerIndex would otherwise keep it until a replacement that never
	// comes), and stopAll stops the pods still running.
	stopping := s.modes[i] == restarting || s.modes[i] == finishing
	p, err := plan.Compute(plan.Input{
		Workload: &plan.Workload{
			Namespace: w.Namespace, Name: w.Name + "-" + r.Name, UID: w.UID, Deleting: w.Deleting || stopping,
			Spec: spec, Status: old.Job,
			Generation: w.Generation, ResourceVersion: w.ResourceVersion, Object: w.Object, Backoff: r.Backoff,
		},
		Pods:                     s.pods[i],
		ControllerName:           s.in.ControllerName,
		ExpectationsSatisfied:    s.in.ExpectationsSatisfied,
		PendingFinalizerRemovals: s.in.PendingFinalizerRemovals,
		TakenPodNames:            s.in.TakenPodNames,
		Now:                      s.in.Now,
		Options:                  opts,
		Owner:                    s.in.Owner,
	})
	if err != nil {
		return fmt.Errorf("roles: roles[%d] %q: %w", i, r.Name, err)
	}
	s.ownCreations(p)
	var stopped stops
	if stopping && !w.Deleting {
		stopped = stopAll(p, s.pods[i], s.in.ExpectationsSatisfied)
	}
	// Only the pods already without the finalizer are counted: the status is
	// written before this sync's removals, and the pods they free are counted
	// by the next sync.
	settled := p.Settle(nil)
	job := settled.Status
	s.ownFailures[i] = 0
	if p.Skip != "" || p.RecordStatus == nil && !settled.Changed {
		// Nothing to persist, or only pod counts while the cache lags. A copy:
		// the Plan shares nothing with the owner as read.
		job = *old.Job.DeepCopy()
	} else {
		s.ownFailures[i] = ownFailures(&old.Job, &p.Settlement.Base, s.pods[i])
	}
	if p.Skip == "" && stopped.pods > 0 {
		// As plan counts its own deletions: the pods stopped here are no
		// longer active or ready but terminating, in the write that stops
		// them (the one that finishes the group, often the last but one).
		job.Active = max(0, job.Active-stopped.pods)
		job.Ready = ptr.To(max(0, ptr.Deref(job.Ready, 0)-stopped.ready))
		job.Terminating = ptr.To(ptr.Deref(job.Terminating, 0) + stopped.pods)
	}
	s.plans[i], s.jobs[i] = p, job
	return nil
}

func (s *sync) warn(format string, args ...any) {
	s.out.Warnings = append(s.out.Warnings, fmt.Sprintf(format, args...))
}

// assemble builds the Plan from the role plans and the group's state.
func (s *sync) assemble() {
	w := s.in.Workload
	st := Status{
		Restarts:                s.Counters.Restarts,
		RestartsCountTowardsMax: s.Counters.RestartsCountTowardsMax,
		Conditions:              s.Conditions(w.Status.Conditions, w.Generation),
		TerminalState:           s.TerminalState,
		Roles:                   make([]RoleStatus, len(s.status)),
		InPlace:                 s.out.Status.InPlace,
	}
	for i := range s.status {
		st.Roles[i] = s.roleStatus(i)
	}
	s.out.Status = st
	s.out.StatusChanged = !equality.Semantic.DeepEqual(&w.Status, &st)
	s.out.Roles = s.plans
	for i, p := range s.plans {
		name := w.Roles[i].Name
		s.out.RemoveFinalizers = append(s.out.RemoveFinalizers, p.RemoveFinalizers...)
		s.out.Delete = append(s.out.Delete, p.Delete...)
		s.out.Create = append(s.out.Create, p.Create...)
		for _, e := range p.Events {
			if e.Reason == "Suspended" || e.Reason == "Resumed" {
				continue // the machinery of waiting and stopping: the group's condition says it
			}
			s.Event(e.Type, e.Reason, roleMessage(name, e.Message))
		}
		if p.Skip == "" {
			for _, e := range p.Settle(nil).Events {
				s.Event(e.Type, e.Reason, roleMessage(name, e.Message))
			}
		}
		if p.RequeueAfter > 0 && (s.out.RequeueAfter == 0 || p.RequeueAfter < s.out.RequeueAfter) {
			s.out.RequeueAfter, s.out.RequeueReason = p.RequeueAfter, roleMessage(name, p.RequeueReason)
		}
		for _, wn := range p.Warnings {
			s.out.Warnings = append(s.out.Warnings, roleMessage(name, wn))
		}
	}
	s.out.Events = s.Events
}

func roleMessage(role, msg string) string {
	return fmt.Sprintf("role %q: %s", role, msg)
}
