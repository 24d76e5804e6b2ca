package successpolicy

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/plain/fielderr"
	plainsp "github.com/jobkit/jobkit/plain/successpolicy"
)

// Validate checks spec.successPolicy as the API server does when a Job is created or
// updated, and returns every error found; a nil spec or a nil successPolicy gives none.
// fldPath is the path of spec; nil means field.NewPath("spec").
//
// It reports, with the API server's field paths and messages:
//   - a policy on a Job that is not Indexed ("requires indexed completion mode"; no other
//     check is made then);
//   - no rules (Required) and more than 20 rules (TooMany);
//   - a rule with neither succeededCount nor succeededIndexes (Required);
//   - a succeededIndexes longer than 65,536 bytes (64 KiB; TooLong);
//   - a succeededIndexes that does not parse, is not strictly increasing or lists an index
//     not below completions (Invalid, "error parsing succeededIndexes: ...");
//   - a negative succeededCount, or one above completions or above the number of indexes
//     in succeededIndexes (Invalid). As upstream, an unparsable succeededIndexes counts
//     as zero indexes.
//
// A Job without completions and parallelism is checked with the API default
// completions=1; an Indexed Job with parallelism but no completions gets the API server's
// Required error on completions, and the checks that need completions are skipped.
//
// Validate runs in O(number of rules + total length of the succeededIndexes strings)
// and does not modify spec.
func Validate(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	if spec == nil || spec.SuccessPolicy == nil {
		return nil
	}
	if fldPath == nil {
		fldPath = field.NewPath("spec")
	}
	policyPath := fldPath.Child("successPolicy")
	mode := ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion)
	if mode != batchv1.IndexedCompletion {
		return field.ErrorList{field.Invalid(policyPath, *spec.SuccessPolicy, "requires indexed completion mode")}
	}

	var errs field.ErrorList
	completions, known := int64(1), true
	switch {
	case spec.Completions != nil:
		completions = int64(*spec.Completions)
	case spec.Parallelism != nil:
		// API defaulting sets completions only when parallelism is unset too.
		known = false
		errs = append(errs, field.Required(fldPath.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
	}

	comp := plainsp.UnknownCompletions
	if known {
		comp = int(completions)
	}
	return append(errs, fieldErrors(policyPath, plainsp.Validate(policyOf(spec.SuccessPolicy), comp))...)
}

// fieldErrors returns the plain package's errors as field errors under policyPath.
func fieldErrors(policyPath *field.Path, perrs plainsp.Errors) field.ErrorList {
	var errs field.ErrorList
	prefix := policyPath.String() + "."
	for _, e := range perrs {
		path := field.NewPath(prefix + e.Field)
		switch e.Type {
		case fielderr.Required:
			errs = append(errs, field.Required(path, e.Detail))
		case fielderr.TooMany:
			errs = append(errs, field.TooMany(path, e.BadValue.(int), e.Max))
		case fielderr.TooLong:
			errs = append(errs, field.TooLong(path, e.BadValue, e.Max))
		default:
			fe := field.Invalid(path, e.BadValue, e.Detail)
			if e.Origin != "" {
				fe = fe.WithOrigin(e.Origin)
			}
			errs = append(errs, fe)
		}
	}
	return errs
}
