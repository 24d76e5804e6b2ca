package successpolicy

import (
	"errors"
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	plainsp "github.com/jobkit/jobkit/plain/successpolicy"
)

// The plain package's reason is batch/v1's.
var _ = [1]struct{}{}[len(plainsp.ReasonSuccessPolicy)-len(batchv1.JobReasonSuccessPolicy)]

// RuleError reports a succeededIndexes value that could not be read completely. The
// rule still takes part in matching with the indexes that could be read.
type RuleError struct {
	// Rule is the position of the rule in spec.successPolicy.rules.
	Rule int
	// Value is the succeededIndexes string as written in the rule.
	Value string
	// Err is the parse error, usually an *plainindexes.ParseError.
	Err error
}

// Field returns the path of the offending field, spec.successPolicy.rules[i].succeededIndexes.
func (e *RuleError) Field() string {
	return "spec.successPolicy.rules[" + strconv.Itoa(e.Rule) + "].succeededIndexes"
}

// Error names the field and the value, then says what could not be read.
func (e *RuleError) Error() string {
	var pe *plainindexes.ParseError
	if errors.As(e.Err, &pe) {
		// A ParseError already quotes the value.
		return e.Field() + ": " + e.Err.Error()
	}
	v := e.Value
	if len(v) > 64 {
		v = v[:64] + "..."
	}
	return fmt.Sprintf("%s %q: %v", e.Field(), v, e.Err)
}

// Unwrap returns the parse error.
func (e *RuleError) Unwrap() error { return e.Err }

// PolicyOf returns policy as a plain policy; the rules share their strings and
// counts with policy (neither side modifies them). A nil policy gives nil.
func PolicyOf(policy *batchv1.SuccessPolicy) *plainsp.Policy {
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
// given spec.completions: [plainsp.Compile] of [PolicyOf](policy). A nil policy gives a
// nil *Compiled, which matches nothing.
//
// Listed indexes at or above completions are left out, as the upstream controller does.
// Compile returns an error exactly when the API server would reject the policy for
// these completions ([Validate] of an Indexed Job): when a succeededIndexes string
// cannot be read completely, each such rule in a *RuleError (several are joined with
// errors.Join; the readable part is kept); otherwise the validation errors as a
// field.ErrorList aggregate with paths under spec.successPolicy. The returned
// *Compiled is usable even when the error is not nil. Compile does not modify policy.
//
// Compile runs in O(total length of the succeededIndexes strings + number of rules) for
// strings the API server accepts (plainindexes.Parse sorts parts written out of order).
func Compile(policy *batchv1.SuccessPolicy, completions int) (*plainsp.Compiled, error) {
	c, err := plainsp.Compile(PolicyOf(policy), completions)
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
				errs = append(errs, &RuleError{Rule: re.Rule, Value: re.Value, Err: re.Err})
			}
		}
	}
	return c, errors.Join(errs...)
}
