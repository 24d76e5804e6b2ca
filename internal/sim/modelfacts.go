package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func isActive(pod *corev1.Pod) bool {
	return pod != nil && !isTerminal(pod) && pod.DeletionTimestamp == nil
}

func podIndex(pod *corev1.Pod) int {
	v, ok := pod.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

func describePod(pod *corev1.Pod) string {
	s := string(pod.Status.Phase)
	if pod.DeletionTimestamp != nil {
		s += ", being deleted"
	}
	return s
}

func indexText(ix int) string {
	if ix < 0 {
		return ""
	}
	return ", index " + strconv.Itoa(ix)
}

func condTrue(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func replacementPolicy(spec *batchv1.JobSpec) batchv1.PodReplacementPolicy {
	if spec.PodReplacementPolicy != nil {
		return *spec.PodReplacementPolicy
	}
	if spec.PodFailurePolicy != nil {
		return batchv1.Failed
	}
	return batchv1.TerminatingOrFailed
}

// matchPolicy returns the action of the first rule that matches a failed pod.
func matchPolicy(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) (batchv1.PodFailurePolicyAction, bool) {
	if policy == nil {
		return "", false
	}
	for _, rule := range policy.Rules {
		switch rule.Action {
		case batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionFailIndex,
			batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyActionCount:
		default:
			continue
		}
		if req := rule.OnExitCodes; req != nil {
			for _, statuses := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
				for _, cs := range statuses {
					t := cs.State.Terminated
					if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {
						continue
					}
					in := slices.Contains(req.Values, t.ExitCode)
					if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in) ||
						(req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in) {
						return rule.Action, true
					}
				}
			}
			continue
		}
		for _, c := range pod.Status.Conditions {
			for _, p := range rule.OnPodConditions {
				want := p.Status
				if want == "" {
					want = corev1.ConditionTrue
				}
				if c.Type == p.Type && c.Status == want {
					return rule.Action, true
				}
			}
		}
	}
	return "", false
}

// parseIndexes reads "1,3-5,7" into a set; bad parts are skipped (the API server
// would have refused them).
func parseIndexes(s string) map[int]bool {
	out := map[int]bool{}
	if s == "" {
		return out
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for ix := a; ix <= b && ix-a < 1<<20; ix++ {
			out[ix] = true
		}
	}
	return out
}

// formatIndexes writes the indexes of set below limit as "1,3,5-7" (ranges of three
// or more), the form the API uses.
func formatIndexes(set map[int]bool, limit int) string {
	var xs []int
	for ix := range set {
		if ix < limit {
			xs = append(xs, ix)
		}
	}
	slices.Sort(xs)
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		default:
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.Itoa(xs[k]))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func toSet(xs []int) map[int]bool {
	out := make(map[int]bool, len(xs))
	for _, x := range xs {
		out[x] = true
	}
	return out
}

func countBelow(set map[int]bool, limit int) int {
	n := 0
	for ix := range set {
		if ix < limit {
			n++
		}
	}
	return n
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func deref32(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// hasLivePod says whether index i holds an active pod of the owner.
func (m *model) hasLivePod(i int) bool {
	for _, ps := range m.order {
		if ps.index == i && !ps.gone && !ps.released && ps.last != nil && isActive(ps.last) {
			return true
		}
	}
	return false
}
