package successpolicy

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jobkit/jobkit/plain/fielderr"
	"github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plain/internal/fieldcheck"
)

// Limits the API server enforces on a success policy; a *fielderr.Error of type
// TooMany or TooLong carries the limit in Max.
const (
	// maxRules is the largest number of rules in a success policy.
	maxRules = 20
	// maxSucceededIndexesLength is the largest length, in bytes, of a succeededIndexes
	// string (64 KiB).
	maxSucceededIndexesLength = 64 * 1024
)

// UnknownCompletions passed to [Validate] says the job's completions are not known
// (an indexed Job with parallelism but no completions): the checks against
// completions are skipped and indexes are only bounded by math.MaxInt32.
const UnknownCompletions = math.MinInt

// maxListedProblems caps how many problems of one succeededIndexes string are spelled
// out, so a 64 KiB string of garbage gives a readable message.
const maxListedProblems = 10

// Errors is every error Validate found, in the API server's order. Each is a
// [fielderr.Error]: its Type, the Field from the policy in the API's names
// ("rules[1].succeededCount"; a whole rule is "rules[1]"), the BadValue (the
// succeededIndexes string; the succeededCount as int32, or int64 for a negative one,
// as the API server reports it; the number of rules for fielderr.TooMany; nil for
// fielderr.Required), the Detail in the API server's words, the Max length
// (fielderr.TooMany, fielderr.TooLong) and the Origin ("minimum" for a negative
// count).
type Errors []*fielderr.Error

func (es Errors) Error() string { return fieldcheck.Join("successpolicy", es) }

// Validate checks a success policy for an indexed job of the given completions as
// the API server does, and returns every error found; a nil policy gives none.
// completions may be [UnknownCompletions].
//
// It reports, with the API server's field names and messages:
//   - no rules (Required) and more than 20 rules (TooMany);
//   - a rule with neither succeededCount nor succeededIndexes (Required);
//   - a succeededIndexes longer than 65,536 bytes (64 KiB; TooLong);
//   - a succeededIndexes that does not parse, is not strictly increasing or lists an
//     index not below completions (Invalid, "error parsing succeededIndexes: ...");
//   - a negative succeededCount, or one above completions or above the number of
//     indexes in succeededIndexes (Invalid). As the API server does, an unparsable
//     succeededIndexes counts as zero indexes.
//
// Validate runs in O(number of rules + total length of the succeededIndexes strings)
// and does not modify policy.
func Validate(policy *Policy, completions int) Errors {
	return validate(policy, completions, nil)
}

// validate is Validate. A non-nil listed says that indexes.Parse already read every
// succeededIndexes string without error with the limit of these completions (as
// Compile does) and counted listed[i] indexes in rule i: then the API server's
// reading can only differ on ranges with equal ends, which is all that is checked.
func validate(policy *Policy, completions int, listed []int) Errors {
	if policy == nil {
		return nil
	}
	var errs Errors
	rules := policy.Rules
	if len(rules) == 0 {
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: "rules", Detail: "at least one rules must be specified when the successPolicy is specified"})
	}
	if len(rules) > maxRules {
		errs = append(errs, fieldcheck.TooManyItems("rules", len(rules), maxRules))
	}
	known := completions != UnknownCompletions
	for i := range rules {
		parsed := -1
		if listed != nil {
			parsed = listed[i]
		}
		errs = validateRule(errs, &rules[i], "rules["+strconv.Itoa(i)+"]", int64(completions), known, parsed)
	}
	return errs
}

// validateRule checks one rule; parsed is the number of indexes Compile read from
// its succeededIndexes without error, or -1.
func validateRule(errs Errors, rule *Rule, rulePath string, completions int64, known bool, parsed int) Errors {
	if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: rulePath, Detail: "at least one of succeededCount or succeededIndexes must be specified"})
	}
	var listed int64
	if rule.SucceededIndexes != nil {
		s := *rule.SucceededIndexes
		indexesPath := rulePath + ".succeededIndexes"
		if len(s) > maxSucceededIndexesLength {
			errs = append(errs, &fielderr.Error{Type: fielderr.TooLong, Field: indexesPath, BadValue: s, Max: maxSucceededIndexesLength,
				Detail: "may not be more than " + strconv.Itoa(maxSucceededIndexesLength) + " bytes"})
		}
		limit := completions
		if !known {
			limit = math.MaxInt32 + 1
		}
		var n int64
		var problems []string
		if parsed >= 0 {
			n, problems = int64(parsed), equalEnds(s)
		} else if n, problems = checkIndexes(s, limit); len(problems) == 0 {
			problems = parseProblems(s, limit)
		}
		if len(problems) > 0 {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: indexesPath, BadValue: s,
				Detail: "error parsing succeededIndexes: " + joinProblems(problems)})
		} else {
			listed = n
		}
	}
	if rule.SucceededCount != nil {
		count := *rule.SucceededCount
		countPath := rulePath + ".succeededCount"
		if count < 0 {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: countPath, BadValue: int64(count), Detail: "must be greater than or equal to 0", Origin: "minimum"})
		}
		if known && int64(count) > completions {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: countPath, BadValue: count,
				Detail: fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)})
		}
		if rule.SucceededIndexes != nil && int64(count) > listed {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: countPath, BadValue: count,
				Detail: fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", listed)})
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

// equalEnds reports, as checkIndexes would, the ranges of s whose ends are equal
// ("3-3"): the one thing the API server refuses in a string indexes.Parse read
// without error. It reads s as text and allocates only for a problem.
func equalEnds(s string) []string {
	var problems []string
	for rest := s; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		first, last, isRange := strings.Cut(part, "-")
		if isRange && strings.TrimLeft(first, "0") == strings.TrimLeft(last, "0") {
			x, _ := strconv.ParseInt(first, 10, 64)
			problems = append(problems, nonIncreasing(x, x))
		}
	}
	return problems
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
