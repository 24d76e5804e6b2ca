package podfailurepolicy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	plainpfp "github.com/jobkit/jobkit/plain/podfailurepolicy"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// fuzzBytes hands out fuzzed bytes; past the end it gives zeros.
type fuzzBytes []byte

func (b *fuzzBytes) next() byte {
	if len(*b) == 0 {
		return 0
	}
	c := (*b)[0]
	*b = (*b)[1:]
	return c
}

func pick[T any](b *fuzzBytes, from []T) T { return from[int(b.next())%len(from)] }

var (
	fuzzActions = []batchv1.PodFailurePolicyAction{"", failJob, failIndex, ignore, count, "Retry"}
	fuzzOps     = []batchv1.PodFailurePolicyOnExitCodesOperator{"", opIn, opNotIn, "Between"}
	fuzzStatus  = []corev1.ConditionStatus{"", corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown, "Maybe"}
	fuzzRestart = []corev1.RestartPolicy{corev1.RestartPolicyNever, "", corev1.RestartPolicyOnFailure, corev1.RestartPolicyAlways, "Sometimes"}
)

// fuzzSpec builds a JobSpec with a pod failure policy, and a failed pod, from b.
// word is used as one more condition type and container name.
func fuzzSpec(b *fuzzBytes, word string) (*batchv1.JobSpec, *corev1.Pod) {
	condTypes := []corev1.PodConditionType{corev1.DisruptionTarget, corev1.PodReady, "", "bad type!", "example.com/Custom", corev1.PodConditionType(word)}
	names := []string{"main", "sidecar", "init", "other", "", word}

	spec := jobSpec()
	spec.Template.Spec.RestartPolicy = pick(b, fuzzRestart)
	switch b.next() % 3 {
	case 1:
		spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	case 2:
		spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
	}
	if b.next()%2 == 1 {
		spec.BackoffLimitPerIndex = ptr.To[int32](1)
	}
	nRules := int(b.next() % 24)
	for range nRules {
		rule := batchv1.PodFailurePolicyRule{Action: pick(b, fuzzActions)}
		kind := b.next() % 4
		if kind == 0 || kind == 2 {
			req := &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: pick(b, fuzzOps)}
			if b.next()%2 == 1 {
				req.ContainerName = ptr.To(pick(b, names))
			}
			n := int(b.next() % 8)
			if n == 7 {
				n = plainpfp.MaxExitCodeValues + int(b.next()%3)
			}
			for range n {
				req.Values = append(req.Values, int32(int8(b.next())))
			}
			rule.OnExitCodes = req
		}
		if kind == 1 || kind == 2 {
			n := int(b.next() % 6)
			if n == 5 {
				n = plainpfp.MaxConditionPatterns + int(b.next()%2)
			}
			rule.OnPodConditions = []batchv1.PodFailurePolicyOnPodConditionsPattern{}
			for range n {
				rule.OnPodConditions = append(rule.OnPodConditions, pattern(pick(b, condTypes), pick(b, fuzzStatus)))
			}
		}
		spec.PodFailurePolicy.Rules = append(spec.PodFailurePolicy.Rules, rule)
	}

	statuses := func() []corev1.ContainerStatus {
		var s []corev1.ContainerStatus
		for range int(b.next() % 3) {
			if b.next()%4 == 0 {
				s = append(s, running(pick(b, names)))
			} else {
				s = append(s, terminated(pick(b, names), int32(int8(b.next()))))
			}
		}
		return s
	}
	var conds []corev1.PodCondition
	for range int(b.next() % 4) {
		conds = append(conds, cond(pick(b, condTypes), pick(b, fuzzStatus[1:])))
	}
	pod := failedPod(statuses(), statuses(), conds...)
	return spec, pod
}

func FuzzValidate(f *testing.F) {
	f.Add([]byte{}, "")
	f.Add([]byte{0, 0, 0, 3, 1, 0, 0, 1, 1, 3, 42, 1, 1, 1, 42}, "main")
	f.Add([]byte{0, 1, 1, 5, 2, 1, 2, 7, 1, 1, 2, 0, 1, 3}, "Custom")
	f.Add([]byte{2, 2, 0, 21, 5, 2, 3, 1, 3, 7, 2, 9, 9, 9, 9, 9, 9}, "example.com/x")
	f.Add([]byte(strings.Repeat("\x07\x03", 300)), "a/b/c")
	f.Fuzz(func(t *testing.T, data []byte, word string) {
		// The plain package's check of a condition type is jobkit's own copy of the
		// API server's label key rule; apimachinery's (the same rule under the name
		// it has at every supported version) is the reference. The plain package's
		// FuzzConditionType checks its fast path against its regular expressions.
		want := validation.IsQualifiedName(word) //nolint:staticcheck // the reference at every supported version
		got := conditionTypeErrors(word)
		if (len(got) == 0) != (len(want) == 0) {
			t.Fatalf("condition type %q: plainpfp.Validate says %q, apimachinery says %q", word, got, want)
		}
		// apimachinery says "no more than 63 characters" up to v0.36 and "63 bytes"
		// from v0.37 (the same rule: a valid name part is ASCII); the core is tested
		// at both ends of its range.
		for i := range want {
			want[i] = strings.Replace(want[i], " bytes", " characters", 1)
		}
		if strings.Count(word, "/") < 2 && !slices.Equal(got, want) {
			t.Fatalf("condition type %q: plainpfp.Validate says %q, want %q", word, got, want)
		}

		b := fuzzBytes(data)
		spec, pod := fuzzSpec(&b, word)
		specBefore, podBefore := spec.DeepCopy(), pod.DeepCopy()

		errs := Validate(spec, nil)
		for _, e := range errs {
			if e == nil || !strings.HasPrefix(e.Field, "spec.") {
				t.Fatalf("Validate() returned a malformed error %#v", e)
			}
		}
		res := Match(spec.PodFailurePolicy, pod)

		if !reflect.DeepEqual(specBefore, spec) {
			t.Fatal("Validate or Match modified the spec")
		}
		if !reflect.DeepEqual(podBefore, pod) {
			t.Fatal("Match modified the pod")
		}

		if !res.Matched {
			if res != noMatch {
				t.Fatalf("Match() = %+v without a match, want %+v", res, noMatch)
			}
			return
		}
		rules := spec.PodFailurePolicy.Rules
		if res.RuleIndex < 0 || res.RuleIndex >= len(rules) || rules[res.RuleIndex].Action != res.Action {
			t.Fatalf("Match() = %+v, which is not a rule of the policy", res)
		}
		// The action of a match is a known one for every policy, so in particular
		// for one that Validate accepts.
		switch res.Action {
		case failJob, failIndex, count:
			if !res.CountsTowardBackoff {
				t.Fatalf("Match() = %+v: a %s failure must count", res, res.Action)
			}
		case ignore:
			if res.CountsTowardBackoff {
				t.Fatalf("Match() = %+v: an Ignore failure must not count", res)
			}
		default:
			t.Fatalf("Match() = %+v: matched a rule with an unknown action (policy valid: %t)", res, len(errs) == 0)
		}
		if res.Message == "" {
			t.Fatalf("Match() = %+v: a match has a message", res)
		}
	})
}

// conditionTypeErrors returns the details plainpfp.Validate reports for a pod
// condition pattern of type word, in order.
func conditionTypeErrors(word string) []string {
	policy := &plainpfp.Policy{Rules: []plainpfp.Rule{{Action: plainpfp.ActionIgnore,
		OnPodConditions: []plainpfp.Condition{{Type: word, Status: plainpfp.StatusTrue}}}}}
	var out []string
	for _, e := range plainpfp.Validate(policy, plainpfp.Context{}) {
		if e.Field == "rules[0].onPodConditions[0].type" {
			out = append(out, e.Detail)
		}
	}
	return out
}
