package explain

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/indexes"
)

// ErrBadAssumption is wrapped by the errors of ParseAssumption and of Explain for an
// assumption that does not parse or matches no pod.
var ErrBadAssumption = errors.New("bad --assume")

// Outcomes an Assumption applies to the active pods it selects.
const (
	// OutcomeSucceed: every container exits 0, phase Succeeded.
	OutcomeSucceed = "succeed"
	// OutcomeFail: every container exits with Exit (default 1), phase Failed; with
	// Condition, the pod also gets that condition True (DisruptionTarget for an
	// eviction).
	OutcomeFail = "fail"
	// OutcomeReady: the pod runs with the Ready condition True.
	OutcomeReady = "ready"
	// OutcomeDelete: the pod is being deleted (deletionTimestamp now plus 30s).
	OutcomeDelete = "delete"
)

// Assumption is a what-if pod outcome applied before planning, written
// SELECTOR:OUTCOME[:KEY=VALUE]...:
//
//	index=3:fail:exit=42                  the active pods of index 3 fail with exit code 42
//	oldest=2:succeed                      the 2 oldest active pods succeed
//	newest=1:fail:condition=DisruptionTarget
//	pod=NAME:delete                       that pod is being deleted
//	all:ready
//
// Selectors pick among the Job's active pods (not terminal, not being deleted):
// index=N, pod=NAME, oldest=N, newest=N (by creation time, then name) and all.
type Assumption struct {
	Selector string
	// N is the number of oldest=/newest=, or the index of index=.
	N int
	// Pod is the name of pod=.
	Pod     string
	Outcome string
	// Exit is the exit code of a failure (default 1).
	Exit int32
	// Condition is a pod condition type set True on a failed pod.
	Condition string
}

// String writes the assumption back in its syntax.
func (a Assumption) String() string {
	s := a.Selector
	switch a.Selector {
	case "index", "oldest", "newest":
		s += "=" + strconv.Itoa(a.N)
	case "pod":
		s += "=" + a.Pod
	}
	s += ":" + a.Outcome
	if a.Outcome == OutcomeFail {
		s += ":exit=" + strconv.Itoa(int(a.Exit))
		if a.Condition != "" {
			s += ":condition=" + a.Condition
		}
	}
	return s
}

// ParseAssumption parses the syntax of Assumption.
func ParseAssumption(s string) (Assumption, error) {
	bad := func(format string, args ...any) (Assumption, error) {
		return Assumption{}, fmt.Errorf("%w %q: %s", ErrBadAssumption, s, fmt.Sprintf(format, args...))
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 {
		return bad("want SELECTOR:OUTCOME[:KEY=VALUE]..., for example index=3:fail:exit=42")
	}
	a := Assumption{Exit: 1}
	sel, val, hasVal := strings.Cut(parts[0], "=")
	a.Selector = sel
	switch sel {
	case "index", "oldest", "newest":
		n, err := strconv.Atoi(val)
		if !hasVal || err != nil || n < 0 || (sel != "index" && n == 0) {
			return bad("selector %s needs a number (%s=N), got %q", sel, sel, val)
		}
		a.N = n
	case "pod":
		if val == "" {
			return bad("selector pod needs a name (pod=NAME)")
		}
		a.Pod = val
	case "all":
		if hasVal {
			return bad("selector all takes no value")
		}
	default:
		return bad("unknown selector %q (want index=N, pod=NAME, oldest=N, newest=N or all)", sel)
	}
	a.Outcome = parts[1]
	switch a.Outcome {
	case OutcomeSucceed, OutcomeFail, OutcomeReady, OutcomeDelete:
	default:
		return bad("unknown outcome %q (want succeed, fail, ready or delete)", a.Outcome)
	}
	for _, kv := range parts[2:] {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "exit" && a.Outcome == OutcomeFail:
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n == 0 {
				return bad("exit needs a non-zero exit code, got %q", v)
			}
			a.Exit = int32(n)
		case k == "condition" && a.Outcome == OutcomeFail:
			if v == "" {
				return bad("condition needs a pod condition type")
			}
			a.Condition = v
		default:
			return bad("unknown option %q for outcome %s", kv, a.Outcome)
		}
	}
	return a, nil
}

// applyAssumptions returns pods with the outcomes applied to copies of the
// selected pods; pods is not modified.
func applyAssumptions(w *workload, pods []*corev1.Pod, as []Assumption, now time.Time) ([]*corev1.Pod, error) {
	out := slices.Clone(pods)
	for _, a := range as {
		var active []int
		for i, p := range out {
			ref := metav1.GetControllerOfNoCopy(p)
			if p == nil || p.Namespace != w.Namespace || ref == nil || ref.UID != w.UID || isTerminal(p) || p.DeletionTimestamp != nil {
				continue
			}
			active = append(active, i)
		}
		slices.SortStableFunc(active, func(x, y int) int {
			a, b := out[x], out[y]
			if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
				return c
			}
			return cmp.Compare(a.Name, b.Name)
		})
		var picked []int
		switch a.Selector {
		case "all":
			picked = active
		case "oldest":
			picked = active[:min(a.N, len(active))]
		case "newest":
			picked = active[max(0, len(active)-a.N):]
		case "index":
			for _, i := range active {
				if ix, err := indexes.PodIndex(w.kind, out[i]); err == nil && ix == a.N {
					picked = append(picked, i)
				}
			}
		case "pod":
			for _, i := range active {
				if out[i].Name == a.Pod {
					picked = append(picked, i)
				}
			}
		}
		if len(picked) == 0 {
			return nil, fmt.Errorf("%w %q: no active pod of the %s matches", ErrBadAssumption, a.String(), w.noun)
		}
		for _, i := range picked {
			out[i] = applyOutcome(out[i], a, now)
		}
	}
	return out, nil
}

func applyOutcome(in *corev1.Pod, a Assumption, now time.Time) *corev1.Pod {
	pod := in.DeepCopy()
	t := metav1.NewTime(now)
	switch a.Outcome {
	case OutcomeReady:
		pod.Status.Phase = corev1.PodRunning
		setPodCondition(pod, corev1.PodReady, corev1.ConditionTrue, t)
	case OutcomeDelete:
		grace := int64(30)
		pod.DeletionTimestamp = &metav1.Time{Time: now.Add(30 * time.Second)}
		pod.DeletionGracePeriodSeconds = &grace
	case OutcomeSucceed, OutcomeFail:
		phase, code, reason := corev1.PodSucceeded, int32(0), "Completed"
		if a.Outcome == OutcomeFail {
			phase, code, reason = corev1.PodFailed, a.Exit, "Error"
		}
		pod.Status.Phase = phase
		names := make([]string, 0, len(pod.Spec.Containers))
		for _, c := range pod.Spec.Containers {
			names = append(names, c.Name)
		}
		if len(names) == 0 {
			names = []string{"main"}
		}
		pod.Status.ContainerStatuses = nil
		for _, n := range names {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
				Name:  n,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: t}},
			})
		}
		setPodCondition(pod, corev1.PodReady, corev1.ConditionFalse, t)
		if a.Condition != "" {
			setPodCondition(pod, corev1.PodConditionType(a.Condition), corev1.ConditionTrue, t)
		}
	}
	return pod
}

func setPodCondition(pod *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus, now metav1.Time) {
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; c.Type == t {
			if c.Status != s {
				c.Status, c.LastTransitionTime = s, now
			}
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now})
}
