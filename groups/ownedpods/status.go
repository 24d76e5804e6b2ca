package ownedpods

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/internal/podutil"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// readStatus reads the group's counters and conditions and matches the role
// entries to the roles by name; an entry of no role is dropped.
func (s *sync) readStatus() {
	w := s.in.Workload
	st := &w.Status
	s.State = groups.Read(plaingroup.Counters{Restarts: st.Restarts, RestartsCountTowardsMax: st.RestartsCountTowardsMax},
		st.Conditions, st.TerminalState, s.in.Now)
	s.Terms = Terms(s.in.Owner)
	s.status = make([]RoleStatus, len(w.Roles))
	at := make(map[string]int, len(w.Roles))
	for i := range w.Roles {
		s.status[i].Name = w.Roles[i].Name
		at[w.Roles[i].Name] = i
	}
	seen := make([]bool, len(w.Roles))
	for k := range st.Roles {
		e := &st.Roles[k]
		i, ok := at[e.Name]
		switch {
		case !ok:
			s.warn("status.roles[%d].name %q names no role: entry dropped", k, e.Name)
		case seen[i]:
			s.warn("status.roles[%d].name %q repeats an earlier entry: entry dropped", k, e.Name)
		default:
			seen[i] = true
			s.status[i] = *e
			if e.Attempt > st.Restarts {
				// Damaged data: the role counts as current until the group's
				// restarts catch up with it.
				s.warn("status.roles[%d].attempt %d of role %q is above status.restarts %d", k, e.Attempt, e.Name, st.Restarts)
			}
		}
	}
}

// children returns one child per role, read from the given Job statuses.
func (s *sync) children(jobs []batchv1.JobStatus) []plaingroup.Child {
	w := s.in.Workload
	out := make([]plaingroup.Child, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		ch := plaingroup.Child{
			Name: w.Name + "-" + w.Roles[i].Name, Role: w.Roles[i].Name, Attempt: s.status[i].Attempt,
			Ready: ptr.Deref(j.Ready, 0), Succeeded: j.Succeeded, Failed: j.Failed, Active: j.Active,
		}
		for _, c := range j.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			switch c.Type {
			case batchv1.JobComplete:
				ch.Outcome = plaingroup.Succeeded
			case batchv1.JobFailed:
				ch.Outcome = plaingroup.Failed
			case batchv1.JobSuspended:
				ch.Suspended = true
				continue
			default:
				continue
			}
			ch.Reason, ch.Message, ch.FinishedAt = c.Reason, c.Message, c.LastTransitionTime.Time
		}
		out[i] = ch
	}
	return out
}

// restart advances the roles of an old attempt that have nothing of it left:
// every pod gone, every finished one counted. Until then their finished pods
// are deleted once counted (their active ones are stopped by their plans).
// BlockingRecreate advances no role until all of them can advance.
func (s *sync) restart() {
	if s.in.Workload.Deleting {
		return
	}
	var ready []int
	all := true
	for i, md := range s.modes {
		if md != restarting {
			continue
		}
		if s.left(i) {
			all = false
			s.clearFinished(i)
			continue
		}
		ready = append(ready, i)
	}
	if s.spec.FailurePolicy != nil && s.spec.FailurePolicy.RestartStrategy == plaingroup.BlockingRecreate && !all {
		return
	}
	for _, i := range ready {
		s.modes[i] = advancing
	}
}

// left reports whether anything of role i's attempt is left to stop or count.
func (s *sync) left(i int) bool {
	p := s.plans[i]
	return !s.in.ExpectationsSatisfied || len(s.pods[i]) > 0 || uncounted(&s.jobs[i]) ||
		len(p.RemoveFinalizers)+len(p.Delete) > 0
}

// clearFinished deletes the finished pods of role i that are counted in the
// status this sync writes (the write comes first).
func (s *sync) clearFinished(i int) {
	p := s.plans[i]
	var planned sets.Set[types.UID]
	for _, d := range p.Delete {
		planned = ensure(planned)
		planned.Insert(d.Pod.UID)
	}
	for _, a := range p.RemoveFinalizers {
		planned = ensure(planned)
		planned.Insert(a.Pod.UID)
	}
	var ledger sets.Set[types.UID]
	if u := s.jobs[i].UncountedTerminatedPods; u != nil {
		ledger = sets.New(u.Succeeded...).Insert(u.Failed...)
	}
	for _, pod := range s.pods[i] {
		if pod.DeletionTimestamp != nil || !podutil.IsTerminal(pod) ||
			planned.Has(pod.UID) || ledger.Has(pod.UID) ||
			s.in.Owner.HasFinalizer(pod) && !s.in.PendingFinalizerRemovals.Has(pod.UID) {
			continue
		}
		s.out.Delete = append(s.out.Delete, plan.Deletion{Pod: pod, Reason: fmt.Sprintf(
			"role %q restarts: attempt %d is over (the group is at %d), and this pod is counted", s.in.Workload.Roles[i].Name,
			s.status[i].Attempt, s.Counters.Restarts)})
	}
}

func ensure(s sets.Set[types.UID]) sets.Set[types.UID] {
	if s == nil {
		return sets.New[types.UID]()
	}
	return s
}

// roleStatus is role i's status entry to write: the status of its plan, and
// the totals grown by what that status counts anew. An advancing role starts
// its next attempt with an empty Job status.
func (s *sync) roleStatus(i int) RoleStatus {
	old := &s.status[i]
	job := s.jobs[i]
	rs := RoleStatus{
		Name:      s.in.Workload.Roles[i].Name,
		Attempt:   old.Attempt,
		Job:       job,
		Succeeded: old.Succeeded + max(0, job.Succeeded-old.Job.Succeeded),
		Failed:    old.Failed + max(0, job.Failed-old.Job.Failed),
		// The pods recorded anew this write: once each, whatever the attempt.
		FailedOnTheirOwn: old.FailedOnTheirOwn + s.ownFailures[i],
	}
	if s.modes[i] == advancing {
		rs.Attempt = s.Counters.Restarts
		rs.Job = batchv1.JobStatus{}
	}
	return rs
}
