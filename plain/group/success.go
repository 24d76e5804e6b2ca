package group

import "slices"

// Operator says how many targeted children must succeed
// (spec.successPolicy.operator).
type Operator string

// The operators of a success policy.
const (
	// All: every child of the targeted roles (the sum of their replicas). The
	// default, also for "".
	All Operator = "All"
	// Any: one child of a targeted role.
	Any Operator = "Any"
)

// SuccessPolicy is spec.successPolicy; the zero value is the webhook's default,
// All over every role.
type SuccessPolicy struct {
	// Operator is All or Any; "" means All.
	Operator Operator
	// TargetReplicatedJobs are the roles whose children count; empty means all.
	TargetReplicatedJobs []string
}

// targets reports whether the policy counts children of this role.
func (p *SuccessPolicy) targets(role string) bool {
	return len(p.TargetReplicatedJobs) == 0 || slices.Contains(p.TargetReplicatedJobs, role)
}

// Needed returns how many succeeded children complete the group: 1 for Any, the
// sum of the targeted roles' replicas for All.
func (p *SuccessPolicy) Needed(roles []Role) int64 {
	if p.Operator == Any {
		return 1
	}
	var n int64
	for i := range roles {
		if p.targets(roles[i].Name) {
			n += int64(roles[i].Replicas)
		}
	}
	return n
}

// Success is the outcome of a success policy.
type Success struct {
	// Completed is true when the group has succeeded.
	Completed bool
	// Succeeded counts the succeeded children of the current attempt in the
	// targeted roles; Needed is how many complete the group.
	Succeeded, Needed int64
	// Condition is Completed=True (AllJobsCompleted) when Completed, else nil.
	Condition *Condition
	// TerminalState is "Completed" when Completed, else "".
	TerminalState string
}

// Succeed is [Terms.Succeed] in JobSet's words.
func Succeed(p *SuccessPolicy, roles []Role, children []Child, c Counters) Success {
	return Terms{}.Succeed(p, roles, children, c)
}

// Succeed applies a success policy (nil means the default) to the children of a
// group, its condition's message worded by t. Only children of the current attempt count, and nothing succeeds while
// one of them has failed: failure is handled first ([Matcher.Decide]). The group
// completes when the succeeded children of the targeted roles number at least
// [SuccessPolicy.Needed]. Succeed modifies nothing; it is O(children) and
// allocates only the condition.
func (t Terms) Succeed(p *SuccessPolicy, roles []Role, children []Child, c Counters) Success {
	if p == nil {
		p = &SuccessPolicy{}
	}
	s := Success{Needed: p.Needed(roles)}
	for i := range children {
		ch := &children[i]
		if !c.Current(ch) {
			continue
		}
		switch ch.Outcome {
		case Failed:
			s.Succeeded = 0
			return s
		case Succeeded:
			if p.targets(ch.Role) {
				s.Succeeded++
			}
		}
	}
	if s.Succeeded >= s.Needed {
		s.Completed, s.TerminalState = true, terminalCompleted
		s.Condition = &Condition{Type: ConditionCompleted, Status: True, Reason: reasonAllJobsCompleted, Message: t.completed()}
	}
	return s
}
