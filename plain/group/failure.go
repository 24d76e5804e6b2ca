package group

import (
	"fmt"
	"regexp"
	"slices"
)

// Action is what a failure policy rule does (spec.failurePolicy.rules[].action).
type Action string

// The actions of a failure policy rule.
const (
	// FailJobSet fails the group at once, whatever maxRestarts says.
	FailJobSet Action = "FailJobSet"
	// RestartJobSet restarts every child while the restarts counted towards
	// maxRestarts are fewer than maxRestarts, and fails the group otherwise.
	// It is the action when no rule matches.
	RestartJobSet Action = "RestartJobSet"
	// RestartJobSetAndIgnoreMaxRestarts restarts every child and never fails.
	RestartJobSetAndIgnoreMaxRestarts Action = "RestartJobSetAndIgnoreMaxRestarts"
	// RestartJob restarts only the failed child, under the same budget as
	// RestartJobSet.
	RestartJob Action = "RestartJob"
	// RestartJobAndIgnoreMaxRestarts restarts only the failed child and never
	// fails.
	RestartJobAndIgnoreMaxRestarts Action = "RestartJobAndIgnoreMaxRestarts"
)

// RestartStrategy says how the children of an old attempt give way to the new
// ones (spec.failurePolicy.restartStrategy).
type RestartStrategy string

// The restart strategies.
const (
	// Recreate (the default, also for "") creates each new child as soon as the
	// old child of the same name is gone.
	Recreate RestartStrategy = "Recreate"
	// BlockingRecreate creates no child while any child of an old attempt exists.
	BlockingRecreate RestartStrategy = "BlockingRecreate"
	// InPlaceRestart restarts pods in place through an agent; this package
	// validates it but implements none of its rules (see the package doc).
	InPlaceRestart RestartStrategy = "InPlaceRestart"
)

// Rule is one failure policy rule. Empty lists match anything.
type Rule struct {
	// Name names the rule; Default fills "failurePolicyRule<i>".
	Name string
	// Action is what the rule does when it matches.
	Action Action
	// OnJobFailureReasons matches the reason of the child's Failed condition.
	OnJobFailureReasons []string
	// OnJobFailureMessagePatterns are RE2 patterns, any of which must match
	// somewhere in the message of the child's Failed condition.
	OnJobFailureMessagePatterns []string
	// TargetReplicatedJobs are the roles whose children the rule applies to.
	TargetReplicatedJobs []string
}

// FailurePolicy is spec.failurePolicy.
type FailurePolicy struct {
	// MaxRestarts bounds the restarts that count towards it.
	MaxRestarts int32
	// RestartStrategy is how old children give way to new ones.
	RestartStrategy RestartStrategy
	// Rules are tried in order; the first with a matching child wins.
	Rules []Rule
}

// Matcher is a failure policy read once, with its message patterns compiled. The
// zero Matcher and a Matcher of a nil policy fail the group on any failure, as
// JobSet does without a failure policy. A Matcher is immutable and safe for
// concurrent use.
type Matcher struct {
	policy   *FailurePolicy
	patterns [][]*regexp.Regexp
	terms    Terms
}

// WithTerms returns a copy of m whose decisions word their messages by t (the
// compiled patterns are shared). A nil m gives a Matcher of no policy.
func (m *Matcher) WithTerms(t Terms) *Matcher {
	out := &Matcher{terms: t}
	if m != nil {
		out.policy, out.patterns = m.policy, m.patterns
	}
	return out
}

// Compile reads a failure policy for [Matcher.Decide]. It returns an [Errors]
// holding the fielderr.Error of the first pattern that is not a valid RE2
// expression (the one [Validate] reports for it, with the rest).
func Compile(p *FailurePolicy) (*Matcher, error) {
	m := &Matcher{policy: p}
	if p == nil {
		return m, nil
	}
	m.patterns = make([][]*regexp.Regexp, len(p.Rules))
	for i, r := range p.Rules {
		for j, s := range r.OnJobFailureMessagePatterns {
			re, err := regexp.Compile(s)
			if err != nil {
				return nil, Errors{patternError(i, j, s, err)}
			}
			m.patterns[i] = append(m.patterns[i], re)
		}
	}
	return m, nil
}

// Effect is what a failure decision does to the group.
type Effect string

// The effects of a failure decision.
const (
	// NoFailure: no child of the current attempt has failed; nothing to do.
	NoFailure Effect = ""
	// Fail: the group fails (Failed=True, terminal state Failed).
	Fail Effect = "Fail"
	// RestartGroup: every child is restarted (status.restarts grows).
	RestartGroup Effect = "RestartGroup"
	// RestartChild: only Decision.Child is restarted (its jobRestarts grows).
	RestartChild Effect = "RestartChild"
)

// Decision is the outcome of a failure policy over the children of a group.
type Decision struct {
	// Effect is what happens to the group.
	Effect Effect
	// Action is the action applied: the matched rule's, RestartJobSet when no
	// rule matched, "" without a failure policy or without a failure.
	Action Action
	// Rule is the index of the matched rule, -1 when none matched.
	Rule int
	// RuleName is the matched rule's name, "" when none matched.
	RuleName string
	// Child is the index in the children slice of the child the action applies
	// to (the earliest-failed one the rule matched), -1 for NoFailure.
	Child int
	// Counters are the counters after the decision: a copy, the input's when
	// nothing is counted.
	Counters Counters
	// Condition is the condition to set: Failed=True for Fail, RestartingJobSet=True
	// for RestartGroup, nil otherwise.
	Condition *Condition
	// TerminalState is "Failed" for Fail, "" otherwise.
	TerminalState string
	// EventReason and EventMessage describe the decision for an event; empty for
	// NoFailure.
	EventReason, EventMessage string
}

// Decide applies the failure policy to the children of a group with the given
// counters. Only children of the current attempt ([Counters.Current]) are read.
// Nothing happens unless one of them has failed. Then:
//
//   - without a policy the group fails (FailedJobs) naming the earliest-failed
//     child;
//   - otherwise the rules are tried in order; for each, the earliest-failed child
//     it matches (ties: the first in children) is kept, and the first rule with a
//     match wins; with no match the action is RestartJobSet on the earliest-failed
//     child;
//   - RestartJobSet and RestartJob fail the group (ReachedMaxRestarts) once the
//     restarts counted towards the maximum ([Counters.CountedTowardsMax]) reach
//     MaxRestarts; the IgnoreMaxRestarts variants never fail.
//
// One decision acts on one child; other failed children are decided by the next
// call, with the new counters (a restart of the group makes them obsolete).
//
// It returns an error, and a NoFailure decision, when the chosen child's index is
// negative or at least 1024 (the length limit of the per-index counters) for a RestartJob action, since its
// counter cannot be stored. Decide modifies neither its arguments nor the Matcher.
// It is O(rules × failed children) pattern matches and allocates only the result.
func (m *Matcher) Decide(children []Child, c Counters) (Decision, error) {
	none := Decision{Rule: -1, Child: -1, Counters: c}
	first := earliest(children, &c, func(int, *Child) bool { return true })
	if first < 0 {
		return none, nil
	}
	if m == nil || m.policy == nil {
		var t Terms
		if m != nil {
			t = m.terms
		}
		return t.failed(none, first, children, reasonFailedJobs, t.failedChildren()), nil
	}
	d := none
	d.Action, d.Child = RestartJobSet, first
	for i := range m.policy.Rules {
		if k := earliest(children, &c, func(_ int, ch *Child) bool { return m.matches(i, ch) }); k >= 0 {
			d.Action, d.Rule, d.RuleName, d.Child = m.policy.Rules[i].Action, i, m.policy.Rules[i].Name, k
			break
		}
	}
	return m.apply(d, children)
}

// earliest returns the index of the current failed child that ok accepts with the
// earliest finish time, the first on ties, or -1.
func earliest(children []Child, c *Counters, ok func(int, *Child) bool) int {
	k := -1
	for i := range children {
		ch := &children[i]
		if ch.Outcome != Failed || !c.Current(ch) || !ok(i, ch) {
			continue
		}
		if k < 0 || ch.FinishedAt.Before(children[k].FinishedAt) {
			k = i
		}
	}
	return k
}

func (m *Matcher) matches(i int, ch *Child) bool {
	r := &m.policy.Rules[i]
	if ch.Role == "" {
		return false
	}
	if len(r.OnJobFailureReasons) > 0 && !slices.Contains(r.OnJobFailureReasons, ch.Reason) {
		return false
	}
	if len(r.TargetReplicatedJobs) > 0 && !slices.Contains(r.TargetReplicatedJobs, ch.Role) {
		return false
	}
	if len(m.patterns[i]) == 0 {
		return true
	}
	for _, re := range m.patterns[i] {
		if re.MatchString(ch.Message) {
			return true
		}
	}
	return false
}

func (t Terms) failed(d Decision, k int, children []Child, reason, msg string) Decision {
	d.Effect, d.Child, d.TerminalState = Fail, k, terminalFailed
	msg = t.withChild(msg, &children[k])
	d.Condition = &Condition{Type: ConditionFailed, Status: True, Reason: reason, Message: msg}
	d.EventReason, d.EventMessage = reason, msg
	return d
}

func (m *Matcher) apply(d Decision, children []Child) (Decision, error) {
	ch := &children[d.Child]
	exhausted := d.Counters.CountedTowardsMax() >= int64(m.policy.MaxRestarts)
	switch d.Action {
	case FailJobSet:
		return m.terms.failed(d, d.Child, children, reasonFailJobSet, messageFailJobSet), nil
	case RestartJobSet, RestartJob:
		if exhausted {
			return m.terms.failed(d, d.Child, children, reasonReachedMaxRestarts, m.terms.reachedMaxRestarts()), nil
		}
	case RestartJobSetAndIgnoreMaxRestarts, RestartJobAndIgnoreMaxRestarts:
	default:
		// Validate rejects unknown actions; one that slips through is treated as
		// the default rather than ignored, so a failure is never lost.
		d.Action = RestartJobSet
		if exhausted {
			return m.terms.failed(d, d.Child, children, reasonReachedMaxRestarts, m.terms.reachedMaxRestarts()), nil
		}
	}
	d.EventReason = string(d.Action) + "FailurePolicyAction"
	d.EventMessage = m.terms.withChild("applying "+string(d.Action)+" failure policy action", ch)
	counted := d.Action == RestartJobSet || d.Action == RestartJob
	switch d.Action {
	case RestartJob, RestartJobAndIgnoreMaxRestarts:
		if ch.Index < 0 || ch.Index >= maxJobRestartsItems {
			return Decision{Rule: -1, Child: -1, Counters: d.Counters}, fmt.Errorf(
				"group: child %q: index %d: %w", ch.Name, ch.Index, ErrIndexOutOfRange)
		}
		d.Effect = RestartChild
		d.Counters = bumpJob(d.Counters, ch.Role, ch.Index, counted)
	default:
		d.Effect = RestartGroup
		d.Counters = d.Counters.Clone()
		d.Counters.Restarts++
		if counted {
			d.Counters.RestartsCountTowardsMax++
		}
		reason := reasonDefaultFailurePolicy
		if d.Rule >= 0 {
			reason = reasonFailurePolicyPrefix + d.RuleName
		}
		d.Condition = &Condition{Type: ConditionRestarting, Status: True, Reason: reason, Message: d.EventMessage}
	}
	return d, nil
}

// maxJobRestartsItems is the largest number of items in a role's per-index
// restart counters (JobSet's API limit); a child with a higher index cannot be
// restarted alone.
const maxJobRestartsItems = 1024

func bumpJob(c Counters, role string, index int32, counted bool) Counters {
	c = c.Clone()
	if c.Jobs == nil {
		c.Jobs = make(map[string]RoleRestarts, 1)
	}
	r := c.Jobs[role]
	r.Restarts = grow(r.Restarts, index)
	r.Restarts[index]++
	if counted {
		r.CountTowardsMax = grow(r.CountTowardsMax, index)
		r.CountTowardsMax[index]++
	}
	c.Jobs[role] = r
	return c
}

// grow returns s long enough to hold index i, padded with zeros.
func grow(s []int32, i int32) []int32 {
	if int(i) < len(s) {
		return s
	}
	return append(s, make([]int32, int(i)+1-len(s))...)
}
