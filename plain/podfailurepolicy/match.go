package podfailurepolicy

import (
	"strconv"
	"strings"
)

// Result tells how a failure is handled under a pod failure policy.
type Result struct {
	// Matched is true when a rule with a known action matched the failure.
	Matched bool
	// Action is the action of the matched rule; empty when nothing matched.
	Action Action
	// RuleIndex is the position of the matched rule in the policy, or -1.
	RuleIndex int
	// CountsTowardBackoff is false only for a failure matched by an Ignore rule:
	// such a failure counts neither against the backoff limit nor against the
	// per-index one. Every other failure, matched or not, counts.
	CountsTowardBackoff bool
	// Message describes the match; empty when nothing matched. For FailJob with a
	// named pod it is exactly the message of the job's FailureTarget and Failed
	// conditions (reason PodFailurePolicy) written by the Job controller.
	Message string
}

// noMatch is the Result of a failure that no rule claims: it counts.
var noMatch = Result{RuleIndex: -1, CountsTowardBackoff: true}

// Match finds the first rule of policy that matches the failure and returns how
// the failure is handled. Rules are tried in order. A rule whose action this
// package does not know is skipped, as the API asks clients to do, so a newer
// policy still works with the rules it understands. A nil policy, or a failure no
// rule matches, gives Result{RuleIndex: -1, CountsTowardBackoff: true}:
// the failure counts.
//
// onExitCodes looks at the containers with a non-zero exit code, the regular
// containers first and then the init containers, and matches the first one that
// satisfies the operator; an unknown operator never matches. onPodConditions
// matches the first condition, in the failure's order, whose type and status equal
// those of any pattern; an empty pattern status means True.
//
// Match reads its arguments only. It allocates nothing unless a rule matches, and
// then only the message.
func Match(policy *Policy, f *Failure) Result {
	if policy == nil || f == nil {
		return noMatch
	}
	var r Result
	for i := range policy.Rules {
		if matchRule(&policy.Rules[i], i, f, &r) {
			return r
		}
	}
	return noMatch
}

// MatchRule reports whether rule, at position index of its policy, matches the
// failure, and the Result if it does: Match for one rule, for a caller that holds
// its rules in another form and converts them one at a time. A rule with an action
// this package does not know never matches.
func MatchRule(rule *Rule, index int, f *Failure) (Result, bool) {
	var r Result
	if matchRule(rule, index, f, &r) {
		return r, true
	}
	return noMatch, false
}

// matchRule is MatchRule writing the Result of a match to r (and nothing
// otherwise), which spares the copies on the way out of Match's loop.
func matchRule(rule *Rule, index int, f *Failure, r *Result) bool {
	action, counts := knownAction(rule.Action)
	if action == "" {
		return false
	}
	var message string
	switch {
	case rule.OnExitCodes != nil:
		c := matchExitCodes(f.Containers, rule.OnExitCodes)
		if c == nil {
			return false
		}
		message = exitCodeMessage(f, c.Name, c.ExitCode, action, index)
	case len(rule.OnPodConditions) > 0:
		c := matchConditions(f.Conditions, rule.OnPodConditions)
		if c == nil {
			return false
		}
		message = conditionMessage(f, c.Type, action, index)
	default:
		return false
	}
	*r = Result{Matched: true, Action: action, RuleIndex: index, CountsTowardBackoff: counts, Message: message}
	return true
}

// knownAction returns the package's constant for action (so that nothing of the
// rule flows into the Result, which lets a caller convert rules on the stack) and
// whether a failure it matches counts; "" for an unknown action.
func knownAction(action Action) (Action, bool) {
	switch action {
	case ActionIgnore:
		return ActionIgnore, false
	case ActionCount:
		return ActionCount, true
	case ActionFailJob:
		return ActionFailJob, true
	case ActionFailIndex:
		return ActionFailIndex, true
	}
	return "", true
}

func matchExitCodes(containers []Container, req *ExitCodes) *Container {
	if req.Operator != OpIn && req.Operator != OpNotIn {
		return nil
	}
	if c := firstMatchingContainer(containers, req, false); c != nil {
		return c
	}
	return firstMatchingContainer(containers, req, true)
}

func firstMatchingContainer(containers []Container, req *ExitCodes, init bool) *Container {
	for i := range containers {
		c := &containers[i]
		// A zero exit code is a success that no rule is about.
		if c.Init != init || c.ExitCode == 0 {
			continue
		}
		if req.ContainerName != nil && *req.ContainerName != c.Name {
			continue
		}
		if exitCodeSatisfies(c.ExitCode, req) {
			return c
		}
	}
	return nil
}

func exitCodeSatisfies(code int32, req *ExitCodes) bool {
	in := false
	for _, v := range req.Values {
		if v == code {
			in = true
			break
		}
	}
	if req.Operator == OpIn {
		return in
	}
	return !in
}

func matchConditions(conditions []Condition, patterns []Condition) *Condition {
	for i := range conditions {
		c := &conditions[i]
		for j := range patterns {
			p := &patterns[j]
			want := p.Status
			if want == "" {
				want = StatusTrue
			}
			if c.Type == p.Type && c.Status == want {
				return c
			}
		}
	}
	return nil
}

// exitCodeMessage is the sentence of the Job controller for a failure matched by
// an exit code: "Container main for pod ns/job-0-x failed with exit code 42
// matching FailJob rule at index 0"; without a pod name, "Container main failed
// with exit code 42 matching FailJob rule at index 0".
func exitCodeMessage(f *Failure, container string, code int32, action Action, index int) string {
	const (
		p1 = "Container "
		p2 = " for pod "
		p3 = " failed with exit code "
		p4 = " matching "
		p5 = " rule at index "
	)
	var num [20]byte
	var b strings.Builder
	b.Grow(len(p1) + len(container) + len(p2) + len(f.Namespace) + 1 + len(f.Name) +
		len(p3) + 11 + len(p4) + len(action) + len(p5) + 20)
	b.WriteString(p1)
	b.WriteString(container)
	if f.Name != "" || f.Namespace != "" {
		b.WriteString(p2)
		writePod(&b, f)
	}
	b.WriteString(p3)
	b.Write(strconv.AppendInt(num[:0], int64(code), 10))
	b.WriteString(p4)
	b.WriteString(string(action))
	b.WriteString(p5)
	b.Write(strconv.AppendInt(num[:0], int64(index), 10))
	return b.String()
}

// conditionMessage is the sentence of the Job controller for a failure matched by
// a condition: "Pod ns/job-0-x has condition DisruptionTarget matching Ignore rule
// at index 1"; without a pod name, "Condition DisruptionTarget matching Ignore
// rule at index 1".
func conditionMessage(f *Failure, condition string, action Action, index int) string {
	const (
		p1 = "Pod "
		p2 = " has condition "
		q2 = "Condition "
		p3 = " matching "
		p4 = " rule at index "
	)
	var num [20]byte
	var b strings.Builder
	b.Grow(len(p1) + len(f.Namespace) + 1 + len(f.Name) + len(p2) + len(condition) +
		len(p3) + len(action) + len(p4) + 20)
	if f.Name != "" || f.Namespace != "" {
		b.WriteString(p1)
		writePod(&b, f)
		b.WriteString(p2)
	} else {
		b.WriteString(q2)
	}
	b.WriteString(condition)
	b.WriteString(p3)
	b.WriteString(string(action))
	b.WriteString(p4)
	b.Write(strconv.AppendInt(num[:0], int64(index), 10))
	return b.String()
}

func writePod(b *strings.Builder, f *Failure) {
	if f.Namespace != "" {
		b.WriteString(f.Namespace)
		b.WriteByte('/')
	}
	b.WriteString(f.Name)
}
