package successpolicy

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/indexes"
)

// Limits the API server enforces on spec.successPolicy.
const (
	// MaxRules is the largest number of rules in a success policy.
	MaxRules = 20
	// MaxSucceededIndexesLength is the largest length, in bytes, of a succeededIndexes
	// string (64 KiB).
	MaxSucceededIndexesLength = 64 * 1024
)

// maxListedProblems caps how many problems of one succeededIndexes string are spelled
// out, so a 64 KiB string of garbage gives a readable message.
const maxListedProblems = 10

// Validate checks spec.successPolicy as the API server does when a Job is created or
// updated, and returns every error found; a nil spec or a nil successPolicy gives none.
// fldPath is the path of spec; nil means field.NewPath("spec").
//
// It reports, with the API server's field paths and messages:
//   - a policy on a Job that is not Indexed ("requires indexed completion mode"; no other
//     check is made then);
//   - no rules (Required) and more than MaxRules rules (TooMany);
//   - a rule with neither succeededCount nor succeededIndexes (Required);
//   - a succeededIndexes longer than MaxSucceededIndexesLength bytes (TooLong);
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

	rules := spec.SuccessPolicy.Rules
	rulesPath := policyPath.Child("rules")
	if len(rules) == 0 {
		errs = append(errs, field.Required(rulesPath, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(rules) > MaxRules {
		errs = append(errs, field.TooMany(rulesPath, len(rules), MaxRules))
	}
	for i := range rules {
		errs = append(errs, validateRule(&rules[i], rulesPath.Index(i), completions, known)...)
	}
	return errs
}

func validateRule(rule *batchv1.SuccessPolicyRule, rulePath *field.Path, completions int64, known bool) field.ErrorList {
	var errs field.ErrorList
	if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
		errs = append(errs, field.Required(rulePath, "at least one of succeededCount or succeededIndexes must be specified"))
	}
	var listed int64
	if rule.SucceededIndexes != nil {
		s := *rule.SucceededIndexes
		indexesPath := rulePath.Child("succeededIndexes")
		if len(s) > MaxSucceededIndexesLength {
			errs = append(errs, field.TooLong(indexesPath, s, MaxSucceededIndexesLength))
		}
		limit := completions
		if !known {
			limit = math.MaxInt32 + 1
		}
		n, problems := checkIndexes(s, limit)
		if len(problems) == 0 {
			problems = parseProblems(s, limit)
		}
		if len(problems) > 0 {
			errs = append(errs, field.Invalid(indexesPath, s, "error parsing succeededIndexes: "+joinProblems(problems)))
		} else {
			listed = n
		}
	}
	if rule.SucceededCount != nil {
		count := *rule.SucceededCount
		countPath := rulePath.Child("succeededCount")
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(count), countPath)...)
		if known && int64(count) > completions {
			errs = append(errs, field.Invalid(countPath, count, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
		}
		if rule.SucceededIndexes != nil && int64(count) > listed {
			errs = append(errs, field.Invalid(countPath, count, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", listed)))
		}
	}
	return errs
}

// checkIndexes applies the API server's reading of an index list to s: comma-separated
// parts, each a decimal index or two indexes joined by '-', every index below limit,
// every part strictly after the previous one and a range's end strictly above its start.
// It returns the number of listed indexes and one problem per bad part, worded as the
// API server words the first one. The empty string lists nothing and is valid.
//
// Unlike the API server, a '+' sign in front of a number is refused, because the
// controller side of jobkit (indexes.Parse) does not read it.
func checkIndexes(s string, limit int64) (int64, []string) {
	if s == "" {
		return 0, nil
	}
	var (
		total    int64
		problems []string
		prevLast int64 = -1
	)
	for part := range strings.SplitSeq(s, ",") {
		first, last, isRange := strings.Cut(part, "-")
		if isRange && strings.Contains(last, "-") {
			problems = append(problems, fmt.Sprintf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", part))
			continue
		}
		x, problem := checkIndex(first, limit)
		if problem != "" {
			problems = append(problems, problem)
			continue
		}
		y := x
		if isRange {
			if y, problem = checkIndex(last, limit); problem != "" {
				problems = append(problems, problem)
				continue
			}
			if x >= y {
				problems = append(problems, nonIncreasing(x, y))
				continue
			}
		}
		if x <= prevLast {
			problems = append(problems, nonIncreasing(prevLast, x))
			prevLast = max(prevLast, y)
			continue
		}
		total += y - x + 1
		prevLast = y
	}
	return total, problems
}

// checkIndex reads one index; it accepts ASCII digits only.
func checkIndex(s string, limit int64) (int64, string) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Sprintf("cannot convert string to integer for index: %q", s)
		}
	}
	x, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Sprintf("cannot convert string to integer for index: %q", s)
	}
	if x >= limit {
		return 0, fmt.Sprintf("too large index: %q", s)
	}
	return x, ""
}

func nonIncreasing(prev, cur int64) string {
	return fmt.Sprintf("non-increasing order, previous: %d, current: %d", prev, cur)
}

// parseProblems lists what indexes.Parse, the reader behind Compile, refuses in s. It
// catches the few strings the API server's reading accepts but indexes.Parse does not
// (such as a number written with more than ten digits), so that a policy Validate
// accepts always compiles without error.
func parseProblems(s string, limit int64) []string {
	_, err := indexes.Parse(s, int(min(max(limit, 0), math.MaxInt32+1)))
	if err == nil {
		return nil
	}
	pe, ok := err.(*indexes.ParseError)
	if !ok {
		return []string{err.Error()}
	}
	problems := make([]string, 0, len(pe.Parts))
	for _, p := range pe.Parts {
		problems = append(problems, p.Error())
	}
	return problems
}

func joinProblems(problems []string) string {
	if len(problems) <= maxListedProblems {
		return strings.Join(problems, "; ")
	}
	return strings.Join(problems[:maxListedProblems], "; ") + fmt.Sprintf("; and %d more", len(problems)-maxListedProblems)
}
