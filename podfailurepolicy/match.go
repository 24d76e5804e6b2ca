package podfailurepolicy

import (
	"strconv"
	"strings"

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
var noMatch = Result{RuleIndex: -1, CountsTowardBackoff: true}

// Match finds the first rule of policy that matches the failed pod and returns how
// the failure is handled. Rules are tried in order. A rule whose action this package
// does not know is skipped, as the API asks clients to do, so a newer policy still
// works with the rules it understands. A nil policy, a nil pod or a pod no rule
// matches gives a failure that counts (Matched false, RuleIndex -1).
//
// onExitCodes looks at the terminated containers with a non-zero exit code, the
// regular containers first and then the init containers, and matches the first one
// that satisfies the operator; an unknown operator never matches. onPodConditions
// matches the first pod condition, in the pod's order, whose type and status equal
// those of any pattern; an empty pattern status means True, as API defaulting sets it.
//
// Match reads its arguments only. It allocates nothing unless a rule matches, and
// then only the message.
func Match(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) Result {
	if policy == nil || pod == nil {
		return noMatch
	}
	for i := range policy.Rules {
		rule := &policy.Rules[i]
		counts, known := countsTowardBackoff(rule.Action)
		if !known {
			continue
		}
		if rule.OnExitCodes != nil {
			if cs := matchExitCodes(&pod.Status, rule.OnExitCodes); cs != nil {
				return Result{
					Matched:             true,
					Action:              rule.Action,
					RuleIndex:           i,
					CountsTowardBackoff: counts,
					Message:             exitCodeMessage(cs.Name, pod, cs.State.Terminated.ExitCode, rule.Action, i),
				}
			}
		} else if rule.OnPodConditions != nil {
			if c := matchConditions(pod.Status.Conditions, rule.OnPodConditions); c != nil {
				return Result{
					Matched:             true,
					Action:              rule.Action,
					RuleIndex:           i,
					CountsTowardBackoff: counts,
					Message:             conditionMessage(pod, c.Type, rule.Action, i),
				}
			}
		}
	}
	return noMatch
}

// countsTowardBackoff reports whether a failure matched by action counts, and
// whether the action is known at all.
func countsTowardBackoff(action batchv1.PodFailurePolicyAction) (counts, known bool) {
	switch action {
	case batchv1.PodFailurePolicyActionIgnore:
		return false, true
	case batchv1.PodFailurePolicyActionCount,
		batchv1.PodFailurePolicyActionFailJob,
		batchv1.PodFailurePolicyActionFailIndex:
		return true, true
	}
	return true, false
}

func matchExitCodes(status *corev1.PodStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	if req.Operator != batchv1.PodFailurePolicyOnExitCodesOpIn && req.Operator != batchv1.PodFailurePolicyOnExitCodesOpNotIn {
		return nil
	}
	if cs := firstMatchingContainer(status.ContainerStatuses, req); cs != nil {
		return cs
	}
	return firstMatchingContainer(status.InitContainerStatuses, req)
}

// firstMatchingContainer returns a status whose State.Terminated is non-nil, or nil.
func firstMatchingContainer(statuses []corev1.ContainerStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for i := range statuses {
		cs := &statuses[i]
		t := cs.State.Terminated
		// A container that has not terminated has no exit code yet, and a zero exit
		// code is a success that no rule is about.
		if t == nil || t.ExitCode == 0 {
			continue
		}
		if req.ContainerName != nil && *req.ContainerName != cs.Name {
			continue
		}
		if exitCodeSatisfies(t.ExitCode, req) {
			return cs
		}
	}
	return nil
}

func exitCodeSatisfies(code int32, req *batchv1.PodFailurePolicyOnExitCodesRequirement) bool {
	in := false
	for _, v := range req.Values {
		if v == code {
			in = true
			break
		}
	}
	if req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn {
		return in
	}
	return !in
}

func matchConditions(conditions []corev1.PodCondition, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i := range conditions {
		c := &conditions[i]
		for j := range patterns {
			p := &patterns[j]
			want := p.Status
			if want == "" {
				want = corev1.ConditionTrue
			}
			if c.Type == p.Type && c.Status == want {
				return c
			}
		}
	}
	return nil
}

// exitCodeMessage and conditionMessage write the sentences of the upstream Job
// controller in one allocation.
func exitCodeMessage(container string, pod *corev1.Pod, code int32, action batchv1.PodFailurePolicyAction, index int) string {
	const (
		p1 = "Container "
		p2 = " for pod "
		p3 = " failed with exit code "
		p4 = " matching "
		p5 = " rule at index "
	)
	var num [20]byte
	var b strings.Builder
	b.Grow(len(p1) + len(container) + len(p2) + len(pod.Namespace) + 1 + len(pod.Name) +
		len(p3) + 11 + len(p4) + len(action) + len(p5) + 20)
	b.WriteString(p1)
	b.WriteString(container)
	b.WriteString(p2)
	b.WriteString(pod.Namespace)
	b.WriteByte('/')
	b.WriteString(pod.Name)
	b.WriteString(p3)
	b.Write(strconv.AppendInt(num[:0], int64(code), 10))
	b.WriteString(p4)
	b.WriteString(string(action))
	b.WriteString(p5)
	b.Write(strconv.AppendInt(num[:0], int64(index), 10))
	return b.String()
}

func conditionMessage(pod *corev1.Pod, condition corev1.PodConditionType, action batchv1.PodFailurePolicyAction, index int) string {
	const (
		p1 = "Pod "
		p2 = " has condition "
		p3 = " matching "
		p4 = " rule at index "
	)
	var num [20]byte
	var b strings.Builder
	b.Grow(len(p1) + len(pod.Namespace) + 1 + len(pod.Name) + len(p2) + len(condition) +
		len(p3) + len(action) + len(p4) + 20)
	b.WriteString(p1)
	b.WriteString(pod.Namespace)
	b.WriteByte('/')
	b.WriteString(pod.Name)
	b.WriteString(p2)
	b.WriteString(string(condition))
	b.WriteString(p3)
	b.WriteString(string(action))
	b.WriteString(p4)
	b.Write(strconv.AppendInt(num[:0], int64(index), 10))
	return b.String()
}
