package successpolicy

import (
	"errors"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	plainsp "github.com/jobkit/jobkit/plain/successpolicy"
)

// The plain package's reason is batch/v1's.
var _ = [1]struct{}{}[len(plainsp.ReasonSuccessPolicy)-len(batchv1.JobReasonSuccessPolicy)]

// ruleError is a [plainsp.RuleError] placed in the Job: its text names the field
// under spec.successPolicy, and it unwraps to the plain error, whose Rule, Value and
// Err say which rule could not be read and why.
type ruleError struct{ plain *plainsp.RuleError }

func (e *ruleError) Error() string { return "spec.successPolicy." + e.plain.Error() }

// Unwrap returns the *plainsp.RuleError.
func (e *ruleError) Unwrap() error { return e.plain }

// policyOf returns policy as a plain policy; the rules share their strings and
// counts with policy (neither side modifies them). A nil policy gives nil.
func policyOf(policy *batchv1.SuccessPolicy) *plainsp.Policy {
	if policy == nil {
		return nil
	}
	p := &plainsp.Policy{Rules: make([]plainsp.Rule, len(policy.Rules))}
	for i, r := range policy.Rules {
		p.Rules[i] = plainsp.Rule{SucceededIndexes: r.SucceededIndexes, SucceededCount: r.SucceededCount}
	}
	return p
}

// Compile prepares policy for matching the succeeded indexes of an Indexed Job with the
// given spec.completions: [plainsp.Compile] of the policy's rules. A nil policy gives a
// nil *Compiled, which matches nothing.
//
// Listed indexes at or above completions are left out, as the upstream controller does.
// Compile returns an error exactly when the API server would reject the policy for
// these completions ([Validate] of an Indexed Job): when a succeededIndexes string
// cannot be read completely, each such rule in an error that errors.As finds as a
// *[plainsp.RuleError] and whose text names the field under spec.successPolicy
// (several are joined with errors.Join; the readable part is kept); otherwise the validation errors as a
// field.ErrorList aggregate with paths under spec.successPolicy. The returned
// *Compiled is usable even when the error is not nil. Compile does not modify policy.
//
// Compile runs in O(total length of the succeededIndexes strings + number of rules) for
// strings the API server accepts (plainindexes.Parse sorts parts written out of order).
func Compile(policy *batchv1.SuccessPolicy, completions int) (*plainsp.Compiled, error) {
	c, err := plainsp.Compile(policyOf(policy), completions)
	if err == nil {
		return c, nil
	}
	var verrs plainsp.Errors
	if errors.As(err, &verrs) {
		return c, fieldErrors(field.NewPath("spec", "successPolicy"), verrs).ToAggregate()
	}
	var errs []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			var re *plainsp.RuleError
			if errors.As(e, &re) {
				errs = append(errs, &ruleError{plain: re})
			}
		}
	}
	return c, errors.Join(errs...)
}
