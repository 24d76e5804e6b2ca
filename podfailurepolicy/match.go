package podfailurepolicy

import (
	plainpfp "github.com/jobkit/jobkit/plain/podfailurepolicy"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Result tells how a failed pod is handled under a pod failure policy.
type Result struct {
	// Matched is true when a rule with a known action matched the pod.
	Matched bool
	// Action is the action of the matched rule; empty when nothing matched.
	Action batchv1.PodFailurePolicyAction
	// RuleIndex is the position of the matched rule in the policy, or -1.
	RuleIndex int
	// CountsTowardBackoff is false only for a pod matched by an Ignore rule: such a
	// failure is counted neither in status.failed against backoffLimit nor against
	// backoffLimitPerIndex. Every other failure, matched or not, counts.
	CountsTowardBackoff bool
	// Message describes the match. For FailJob it is exactly the message of the
	// job's FailureTarget and Failed conditions (reason PodFailurePolicy). It is
	// empty when nothing matched.
	Message string
}

// noMatch is the handling of a failure no rule claims: it counts.
var noMatch = resultOf(plainpfp.Match(nil, nil))

func resultOf(r plainpfp.Result) Result {
	return Result{Matched: r.Matched, Action: batchv1.PodFailurePolicyAction(r.Action), RuleIndex: r.RuleIndex,
		CountsTowardBackoff: r.CountsTowardBackoff, Message: r.Message}
}

// Stack buffers of the conversion: a valid policy and an ordinary pod fit.
const (
	smallPatterns   = 4
	stackContainers = 8
	stackConditions = 8
)

// Match finds the first rule of policy that matches the failed pod and returns how
// the failure is handled: [plainpfp.Match] of the policy and of the pod's
// terminated containers and conditions (failureOf). Rules are tried in order. A
// rule whose action this package does not know is skipped, as the API asks clients
// to do, so a newer policy still works with the rules it understands. A nil policy,
// a nil pod or a pod no rule matches gives a failure that counts (Matched false,
// RuleIndex -1).
//
// onExitCodes looks at the terminated containers with a non-zero exit code, the
// regular containers first and then the init containers, and matches the first one
// that satisfies the operator; an unknown operator never matches. onPodConditions
// matches the first pod condition, in the pod's order, whose type and status equal
// those of any pattern; an empty pattern status means True, as API defaulting sets it.
//
// Match reads its arguments only. The conversion is done on the stack for a valid
// policy and a pod of up to 8 containers and 8 conditions, so it allocates nothing
// unless a rule matches, and then only the message.
func Match(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) Result {
	if policy == nil || pod == nil {
		return noMatch
	}
	var (
		containers [stackContainers]plainpfp.Container
		conditions [stackConditions]plainpfp.Condition
		exitCodes  plainpfp.ExitCodes
	)
	f := failureOf(pod, containers[:0], conditions[:0])
	for i := range policy.Rules {
		r := &policy.Rules[i]
		var rule plainpfp.Rule
		if r.OnExitCodes == nil && len(r.OnPodConditions) > 0 {
			// Declared here, a buffer is cleared only for the rules that need it, and
			// the small one for the usual rule of a few patterns.
			if len(r.OnPodConditions) <= smallPatterns {
				var patterns [smallPatterns]plainpfp.Condition
				rule = ruleInto(r, &exitCodes, patterns[:0])
			} else {
				var patterns [plainpfp.MaxConditionPatterns]plainpfp.Condition
				rule = ruleInto(r, &exitCodes, patterns[:0])
			}
			if res, ok := plainpfp.MatchRule(&rule, i, &f); ok {
				return resultOf(res)
			}
			continue
		}
		// MatchRule reads the patterns of a rule only when it has no exit codes.
		rule.Action = plainpfp.Action(r.Action)
		if req := r.OnExitCodes; req != nil {
			exitCodes = exitCodesOf(req)
			rule.OnExitCodes = &exitCodes
		}
		if res, ok := plainpfp.MatchRule(&rule, i, &f); ok {
			return resultOf(res)
		}
	}
	return noMatch
}

// failureOf returns what [plainpfp.Match] reads of a failed pod: its namespace and
// name (for the message), its terminated containers (regular, then init) and its
// conditions, appended to the given buffers. pod must not be nil; it is not modified.
func failureOf(pod *corev1.Pod, containers []plainpfp.Container, conditions []plainpfp.Condition) plainpfp.Failure {
	containers = appendTerminated(containers, pod.Status.ContainerStatuses, false)
	containers = appendTerminated(containers, pod.Status.InitContainerStatuses, true)
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		conditions = append(conditions, plainpfp.Condition{Type: string(c.Type), Status: plainpfp.ConditionStatus(c.Status)})
	}
	return plainpfp.Failure{Namespace: pod.Namespace, Name: pod.Name, Containers: containers, Conditions: conditions}
}

func appendTerminated(out []plainpfp.Container, statuses []corev1.ContainerStatus, init bool) []plainpfp.Container {
	for i := range statuses {
		if t := statuses[i].State.Terminated; t != nil {
			out = append(out, plainpfp.Container{Name: statuses[i].Name, Init: init, ExitCode: t.ExitCode})
		}
	}
	return out
}

// policyOf returns policy as a plain policy. It shares the exit code values and
// container names with policy (neither side modifies them). A nil policy gives nil.
func policyOf(policy *batchv1.PodFailurePolicy) *plainpfp.Policy {
	if policy == nil {
		return nil
	}
	p := policyInto(policy)
	return &p
}

// policyInto converts policy, allocating what it needs.
func policyInto(policy *batchv1.PodFailurePolicy) plainpfp.Policy {
	rules := make([]plainpfp.Rule, len(policy.Rules))
	for i := range policy.Rules {
		rules[i] = ruleInto(&policy.Rules[i], new(plainpfp.ExitCodes), nil)
	}
	return plainpfp.Policy{Rules: rules}
}

// ruleInto converts r, writing its exit code requirement (if any) to ec and
// appending its patterns to pats.
func ruleInto(r *batchv1.PodFailurePolicyRule, ec *plainpfp.ExitCodes, pats []plainpfp.Condition) plainpfp.Rule {
	pr := plainpfp.Rule{Action: plainpfp.Action(r.Action)}
	if req := r.OnExitCodes; req != nil {
		*ec = exitCodesOf(req)
		pr.OnExitCodes = ec
	}
	if len(r.OnPodConditions) > 0 {
		for j := range r.OnPodConditions {
			c := &r.OnPodConditions[j]
			pats = append(pats, plainpfp.Condition{Type: string(c.Type), Status: plainpfp.ConditionStatus(c.Status)})
		}
		pr.OnPodConditions = pats
	}
	return pr
}

func exitCodesOf(req *batchv1.PodFailurePolicyOnExitCodesRequirement) plainpfp.ExitCodes {
	return plainpfp.ExitCodes{ContainerName: req.ContainerName, Operator: plainpfp.Operator(req.Operator), Values: req.Values}
}
