package groups

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// State is a group's state as one sync moves it. Read it from the status, let
// the rules change it, and write back Counters, TerminalState and
// Conditions(old, generation).
type State struct {
	// Counters are the group's restart counters (status.restarts,
	// restartsCountTowardsMax and, for child Jobs, the per-index counters).
	Counters plaingroup.Counters
	// Conds are the group's conditions in plain terms.
	Conds []plaingroup.Condition
	// TerminalState is status.terminalState: "", "Completed" or "Failed".
	TerminalState string
	// Now is the time of the sync: the lastTransitionTime of a condition that
	// changes.
	Now time.Time
	// Events are the events of the decisions taken so far.
	Events []plan.Event
	// Terms word the messages of the group's conditions and events; the zero
	// value is JobSet's words (a group of child Jobs).
	Terms plaingroup.Terms
}

// Read returns the State of a group whose status holds counters, conditions
// and terminalState, at the time now. It does not modify conditions.
func Read(counters plaingroup.Counters, conditions []metav1.Condition, terminalState string, now time.Time) *State {
	conds := make([]plaingroup.Condition, len(conditions))
	for i, c := range conditions {
		conds[i] = plaingroup.Condition{
			Type: c.Type, Status: plaingroup.ConditionStatus(c.Status), Reason: c.Reason,
			Message: c.Message, LastTransitionTime: c.LastTransitionTime.Time,
		}
	}
	return &State{Counters: counters, Conds: conds, TerminalState: terminalState, Now: now}
}

// Set upserts a condition (plaingroup.SetCondition at s.Now) and reports
// whether it changed.
func (s *State) Set(c plaingroup.Condition) bool {
	var changed bool
	s.Conds, changed = plaingroup.SetCondition(s.Conds, c, s.Now)
	return changed
}

// Event records an event.
func (s *State) Event(typ, reason, message string) {
	s.Events = append(s.Events, plan.Event{Type: typ, Reason: reason, Message: message})
}

// Finished returns the condition that finished the group (Completed or Failed
// true), or nil while it runs.
func (s *State) Finished() *plaingroup.Condition { return plaingroup.Finished(s.Conds) }

// Decide applies the failure policy m to the children, then, when no failure
// rule acted, the success policy: the counters, the condition, the terminal
// state and the event of the decision go into s, worded by s.Terms. A failure rule that acted
// ends the decision (failure is decided before success, as JobSet does). The
// error, when not nil, is a failure-policy problem worked around (a pattern
// that matched nothing it could read); the decision stands.
func (s *State) Decide(m *plaingroup.Matcher, success *plaingroup.SuccessPolicy, roles []plaingroup.Role, children []plaingroup.Child) error {
	if s.Terms != (plaingroup.Terms{}) {
		m = m.WithTerms(s.Terms)
	}
	d, err := m.Decide(children, s.Counters)
	if err != nil {
		err = fmt.Errorf("failure policy: %w", err)
	}
	if s.Apply(d) {
		return err
	}
	if r := s.Terms.Succeed(success, roles, children, s.Counters); r.Completed {
		s.Set(*r.Condition)
		s.TerminalState = r.TerminalState
		s.Event(corev1.EventTypeNormal, r.Condition.Reason, r.Condition.Message)
	}
	return err
}

// Apply records a failure decision (plaingroup's: of a failure policy, or of
// an in-place restart) in s: its counters, its condition, its terminal state
// and its event. It reports whether the decision acted (an effect other than
// NoFailure).
func (s *State) Apply(d plaingroup.Decision) bool {
	s.Counters = d.Counters
	if d.Condition != nil {
		s.Set(*d.Condition)
	}
	switch d.Effect {
	case plaingroup.Fail:
		s.TerminalState = d.TerminalState
	case plaingroup.RestartGroup, plaingroup.RestartChild:
	default:
		return false
	}
	s.Event(corev1.EventTypeWarning, d.EventReason, d.EventMessage)
	return true
}

// Conditions converts s's conditions back to API conditions. A condition of old
// that did not change is kept as it was (its observedGeneration with it); a
// changed one gets generation. With no condition in s, old is returned.
func (s *State) Conditions(old []metav1.Condition, generation int64) []metav1.Condition {
	if len(s.Conds) == 0 {
		return old
	}
	out := make([]metav1.Condition, len(s.Conds))
	for i, c := range s.Conds {
		if o := meta.FindStatusCondition(old, c.Type); o != nil && string(o.Status) == string(c.Status) &&
			o.Reason == c.Reason && o.Message == c.Message && o.LastTransitionTime.Time.Equal(c.LastTransitionTime) {
			out[i] = *o
			continue
		}
		out[i] = metav1.Condition{
			Type: c.Type, Status: metav1.ConditionStatus(c.Status), ObservedGeneration: generation,
			LastTransitionTime: metav1.NewTime(c.LastTransitionTime), Reason: c.Reason, Message: c.Message,
		}
	}
	return out
}

// Finished returns the condition of conditions that says a group has finished
// (Completed or Failed, status True), or nil: the one test of a finished group
// in API terms.
func Finished(conditions []metav1.Condition) *metav1.Condition {
	for i := range conditions {
		c := &conditions[i]
		if (c.Type == plaingroup.ConditionCompleted || c.Type == plaingroup.ConditionFailed) && c.Status == metav1.ConditionTrue {
			return c
		}
	}
	return nil
}
