package successpolicy

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/jobkit/jobkit/plain/indexes"
)

// ReasonSuccessPolicy is the reason of the SuccessCriteriaMet (and later Complete)
// condition of a job that a success policy declares succeeded (batch/v1's
// JobReasonSuccessPolicy).
const ReasonSuccessPolicy = "SuccessPolicy"

// Policy is a success policy: rules tried in order, the first satisfied one wins.
type Policy struct {
	// Rules are the rules, 1 to 20 in a valid policy.
	Rules []Rule
}

// Rule is one rule of a success policy. A valid rule sets at least one field.
type Rule struct {
	// SucceededIndexes lists indexes in the status form ("0,2-4"); nil means
	// unset, which differs from "" (a list of no index, which never matches).
	SucceededIndexes *string
	// SucceededCount is how many indexes (of SucceededIndexes, when set) must have
	// succeeded; nil means unset.
	SucceededCount *int32
}

// messagePrefix starts the message of the SuccessCriteriaMet condition; the rule index
// follows after a space, as in the upstream controller.
const messagePrefix = "Matched rules at index"

// Result says whether, and through which rule, a success policy declares a Job
// succeeded.
type Result struct {
	// Matched is true when a rule is satisfied.
	Matched bool
	// RuleIndex is the position of the first satisfied rule in the policy, or -1 when
	// nothing matched.
	RuleIndex int
	// Reason is ReasonSuccessPolicy when Matched, else "". It is the reason
	// of the SuccessCriteriaMet (and later Complete) condition.
	Reason string
	// Message is the condition message, "Matched rules at index N", or "" when nothing
	// matched.
	Message string
}

// noMatch is the Result of a policy that declares nothing.
var noMatch = Result{RuleIndex: -1}

// RuleError reports a succeededIndexes value that could not be read completely. The
// rule still takes part in matching with the indexes that could be read.
type RuleError struct {
	// Rule is the position of the rule in the policy.
	Rule int
	// Value is the succeededIndexes string as written in the rule.
	Value string
	// Err is the parse error, usually an *indexes.ParseError.
	Err error
}

// Field returns the path of the offending field, rules[i].succeededIndexes.
func (e *RuleError) Field() string {
	return "rules[" + strconv.Itoa(e.Rule) + "].succeededIndexes"
}

// Error names the field and the value, then says what could not be read.
func (e *RuleError) Error() string {
	var pe *indexes.ParseError
	if errors.As(e.Err, &pe) {
		// A ParseError already quotes the value.
		return e.Field() + ": " + e.Err.Error()
	}
	return fmt.Sprintf("%s %q: %v", e.Field(), truncate(e.Value, 64), e.Err)
}

// Unwrap returns the parse error.
func (e *RuleError) Unwrap() error { return e.Err }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// compiledRule is one rule with its succeededIndexes read once.
type compiledRule struct {
	// hasIndexes is true when the rule sets succeededIndexes (even to "").
	hasIndexes bool
	// listed holds the listed indexes below completions.
	listed indexes.Intervals
	// listedCount is listed.Count().
	listedCount int
	hasCount    bool
	count       int
	message     string
}

// Compiled is a success policy prepared for repeated matching against one value of
// number of completions: every succeededIndexes string is parsed once and every condition
// message is built once, so [Compiled.Match] neither parses nor allocates.
//
// A Compiled is immutable and safe for concurrent use. The nil *Compiled is a valid
// policy that matches nothing, like a job without a success policy.
type Compiled struct {
	completions int
	rules       []compiledRule
}

// Compile prepares policy for matching the succeeded indexes of an indexed job with
// the given number of completions. A nil policy gives a nil *Compiled, which matches
// nothing.
//
// Listed indexes at or above completions are left out, as the Job controller does.
// Compile returns an error exactly when [Validate] rejects the policy for these
// completions: when a succeededIndexes string cannot be read completely, one
// *RuleError per such rule (joined with errors.Join; the readable part is kept);
// otherwise Validate's [Errors]. The returned *Compiled is usable even when the
// error is not nil. Compile does not modify policy.
//
// Compile runs in O(total length of the succeededIndexes strings + number of rules)
// for strings the API server accepts (indexes.Parse sorts parts written out of order).
func Compile(policy *Policy, completions int) (*Compiled, error) {
	if policy == nil {
		return nil, nil
	}
	// indexes.Parse reads a negative limit as "no limit"; a job with no completions
	// has no index to list.
	limit := max(completions, 0)
	c := &Compiled{completions: limit, rules: make([]compiledRule, len(policy.Rules))}
	var errs []error
	for i, rule := range policy.Rules {
		r := &c.rules[i]
		r.message = messagePrefix + " " + strconv.Itoa(i)
		if rule.SucceededCount != nil {
			r.hasCount = true
			r.count = int(*rule.SucceededCount)
		}
		if rule.SucceededIndexes == nil {
			continue
		}
		r.hasIndexes = true
		listed, err := indexes.Parse(*rule.SucceededIndexes, limit)
		if err != nil {
			errs = append(errs, &RuleError{Rule: i, Value: *rule.SucceededIndexes, Err: err})
		}
		r.listed = listed
		r.listedCount = listed.Count()
	}
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	listed := make([]int, len(c.rules))
	for i := range c.rules {
		listed[i] = c.rules[i].listedCount
	}
	if verrs := validate(policy, completions, listed); len(verrs) > 0 {
		return c, verrs
	}
	return c, nil
}

// Match reports the first rule of c that the succeeded indexes satisfy. succeeded must
// be canonical, as every Intervals built by package indexes is; indexes at or above
// completions are ignored.
//
// The rules, in order:
//   - nothing matches while no index below completions has succeeded;
//   - a rule with succeededIndexes is skipped when no listed index lies below
//     completions (whatever its succeededCount);
//   - a rule with succeededIndexes only matches when every listed index succeeded;
//   - a rule with both matches when every listed index succeeded or when at least
//     succeededCount of the listed indexes succeeded;
//   - a rule with succeededCount only matches when at least succeededCount indexes
//     succeeded;
//   - a rule with neither never matches.
//
// Match does not allocate. For each rule with succeededIndexes it costs
// O(l·log n + k), where l is the number of listed intervals, n the number of succeeded
// intervals and k those inside the listed ranges, and it stops as soon as the answer is
// known; count-only rules share one O(n) count.
func (c *Compiled) Match(succeeded indexes.Intervals) Result {
	if c == nil || len(succeeded) == 0 || succeeded[0].First >= c.completions {
		return noMatch
	}
	total := -1 // succeeded indexes below completions, counted on first need
	for i := range c.rules {
		r := &c.rules[i]
		var ok bool
		switch {
		case r.hasIndexes:
			if r.listedCount == 0 {
				continue
			}
			ok = r.matchListed(succeeded)
		case r.hasCount:
			if total < 0 {
				total = countBelow(succeeded, c.completions)
			}
			ok = total >= r.count
		}
		if ok {
			return Result{Matched: true, RuleIndex: i, Reason: ReasonSuccessPolicy, Message: r.message}
		}
	}
	return noMatch
}

// matchListed reports whether all listed indexes succeeded or, when the rule has a
// count, at least count of them did.
func (r *compiledRule) matchListed(succeeded indexes.Intervals) bool {
	need := r.listedCount
	if r.hasCount && r.count < need {
		need = r.count
	}
	if need <= 0 {
		return true
	}
	// missing grows as listed indexes are found absent; once more are missing than
	// the rule can spare, neither condition can hold any more.
	spare := r.listedCount - need
	found, missing, from := 0, 0, 0
	for _, iv := range r.listed {
		// Listed intervals increase, so the search resumes at the last succeeded
		// interval seen, which may reach into this listed interval too.
		j := seek(succeeded, from, iv.First)
		next := iv.First // first index of iv not yet accounted for
		for ; j < len(succeeded) && succeeded[j].First <= iv.Last; j++ {
			lo, hi := max(succeeded[j].First, iv.First), min(succeeded[j].Last, iv.Last)
			if missing += lo - next; missing > spare {
				return false
			}
			if found += hi - lo + 1; found >= need {
				return true
			}
			next = hi + 1
		}
		from = max(j-1, from)
		if missing += iv.Last + 1 - next; missing > spare {
			return false
		}
	}
	return false
}

// seek returns the first position j >= from of canonical ivs with ivs[j].Last >= x, or
// len(ivs). It gallops from from and then bisects, so a walk over increasing x costs
// O(log d) per step, d being the distance moved.
func seek(ivs indexes.Intervals, from, x int) int {
	if from >= len(ivs) || ivs[from].Last >= x {
		return from
	}
	// Invariant: ivs[lo].Last < x, and ivs[hi].Last >= x or hi == len(ivs).
	lo, step := from, 1
	hi := lo + step
	for hi < len(ivs) && ivs[hi].Last < x {
		lo = hi
		step *= 2
		hi = lo + step
	}
	hi = min(hi, len(ivs))
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if ivs[mid].Last < x {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// countBelow counts the indexes of canonical ivs below limit.
func countBelow(ivs indexes.Intervals, limit int) int {
	n := 0
	for _, iv := range ivs {
		if iv.First >= limit {
			break
		}
		n += min(iv.Last, limit-1) - iv.First + 1
	}
	return n
}
