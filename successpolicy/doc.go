// Package successpolicy decides when the success policy of an Indexed Job
// (spec.successPolicy) declares the Job succeeded, and validates a policy as the API
// server does.
//
// The rules and their validation live in package
// github.com/jobkit/jobkit/plain/successpolicy, over plain values (an index string and
// a count per rule) with no JobSpec: [Compile] and [Validate] convert the
// policy and call it, and return its types ([plainsp.Result],
// [plainsp.Compiled]); this package re-exports none of its names. Validate adds the checks on the rest of the spec (indexed completion mode, completions
// defaulting) and reports the plain errors as field errors.
//
// # Matching
//
// [Compile] reads a policy once for a given spec.completions; [plainsp.Compiled.Match]
// then takes the set of succeeded indexes (a [plainindexes.Intervals], as in
// status.completedIndexes) and returns a [plainsp.Result] naming the first satisfied rule, with the reason
// (batchv1.JobReasonSuccessPolicy) and message ("Matched rules at index N") of the
// SuccessCriteriaMet condition the controller adds.
// The rules are evaluated in order and the first satisfied one wins:
//
//   - succeededIndexes only: every listed index has succeeded;
//   - succeededIndexes and succeededCount: at least succeededCount of the listed indexes
//     have succeeded (or all of them have);
//   - succeededCount only: at least succeededCount indexes have succeeded.
//
// As in the upstream controller, nothing matches before some index has succeeded, listed
// indexes at or above completions are left out, and a rule whose list holds no index
// below completions (the empty string, say) is skipped even when it has a count.
//
// # Validation
//
// [Validate] returns the API server's errors for spec.successPolicy as a
// field.ErrorList, with its field paths, error types and messages: indexed completion
// mode only, 1 to 20 rules, succeededCount or succeededIndexes in every rule,
// succeededIndexes at most 64 KiB, strictly increasing and below completions,
// succeededCount between 0 and both completions and the number of listed indexes.
// Every error is reported, not just the first. [Compile] returns an
// error exactly when Validate rejects the policy of an Indexed Job with the same
// completions.
//
// # Invariants and cost
//
// Nothing here modifies its inputs. Compile costs O(total length of the
// succeededIndexes strings); Compiled.Match does not allocate and costs, for each rule
// with succeededIndexes, O(l·log n + k) (l listed intervals, n succeeded intervals, k
// succeeded intervals inside the listed ranges) and stops as soon as the answer is
// known; count-only rules share one O(n) count. Validate is linear in the size of the
// policy. A *Compiled is immutable, so every function and method is safe for
// concurrent use.
//
// # Differences from upstream
//
// These only concern inputs the API server rejects, or near enough:
//
//   - Compile reads succeededIndexes with plainindexes.Parse. For a string the API server
//     rejects, upstream's controller reads what strconv.Atoi allows, stops at the first
//     index at or above completions, takes the first two numbers of "1-2-3" and keeps
//     out-of-order parts unmerged; jobkit keeps every well-formed part, merges
//     out-of-order and overlapping ones, drops malformed ones and reports them (a
//     [plainsp.RuleError] for each rule), because a policy with a typo should neither panic nor silently lose
//     its other indexes.
//   - A number written with a '+' sign ("+3") or with more than ten digits
//     ("00000000003") passes the API server's strconv.Atoi but not plainindexes.Parse;
//     Validate rejects it, so that a policy it accepts is read the same way here.
//   - Where the API server stops at the first problem of a succeededIndexes string,
//     Validate lists up to ten in the same Invalid error, joined by "; ". The first is
//     worded exactly as the API server words it.
//   - Match counts only succeeded indexes below completions. Upstream's controller
//     trims the set before matching, so the result is the same; callers here need not.
//   - An Indexed Job with parallelism but no completions (which API defaulting leaves
//     without completions) gets the API server's Required error on spec.completions
//     instead of having its rules checked against a missing value.
package successpolicy
