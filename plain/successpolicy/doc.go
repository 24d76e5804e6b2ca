// Package successpolicy decides when a success policy (batch/v1 spec.successPolicy)
// declares an indexed job succeeded, and validates a policy as the API server does,
// over plain values (an index string and a count per rule) with the standard library
// only. It needs no JobSpec: the completions are an argument.
//
// # Matching
//
// [Compile] reads a [Policy] once for a number of completions; [Compiled.Match] then
// takes the succeeded indexes (an [indexes.Intervals]) and returns a [Result] naming
// the first satisfied rule, with the reason ([ReasonSuccessPolicy]) and message
// ("Matched rules at index N") of the SuccessCriteriaMet condition the Job controller
// adds. The rules are evaluated in order and the first satisfied one wins:
//
//   - SucceededIndexes only: every listed index has succeeded;
//   - SucceededIndexes and SucceededCount: at least SucceededCount of the listed
//     indexes have succeeded (or all of them have);
//   - SucceededCount only: at least SucceededCount indexes have succeeded.
//
// As in the Job controller, nothing matches before some index has succeeded, listed
// indexes at or above completions are left out, and a rule whose list holds no index
// below completions (the empty string, say) is skipped even when it has a count.
//
// # Validation
//
// [Validate] returns the API server's errors for a policy (a *fielderr.Error each,
// with the API's field names, error types and messages): 1 to 20 rules, a count or a
// list in every rule, lists at most 64 KiB, strictly increasing and below
// completions, counts between 0 and both completions and the number of listed
// indexes. Every error is reported, not just the first. [Compile]
// returns an error exactly when Validate rejects the policy, and a policy Validate
// accepts is read by Compile exactly as the API server reads it.
//
// Package github.com/jobkit/jobkit/successpolicy is this package for Jobs: it adds
// the checks on the rest of the JobSpec (indexed completion mode, completions
// defaulting) and reports the errors as Kubernetes field errors.
//
// # Invariants and cost
//
// Nothing here modifies its inputs. Compile costs O(total length of the
// SucceededIndexes strings); Compiled.Match does not allocate and costs, for each
// rule with SucceededIndexes, O(l·log n + k) (l listed intervals, n succeeded
// intervals, k succeeded intervals inside the listed ranges) and stops as soon as the
// answer is known; count-only rules share one O(n) count. Validate is linear in the
// size of the policy. A *Compiled is immutable, so every function and method is safe
// for concurrent use.
//
// # Differences from the Job controller and the API server
//
//   - Compile reads SucceededIndexes with indexes.Parse. For a string the API server
//     rejects, the Job controller reads what strconv.Atoi allows, stops at the first
//     index at or above completions, takes the first two numbers of "1-2-3" and keeps
//     out-of-order parts unmerged; Compile keeps every well-formed part, merges
//     out-of-order and overlapping ones, drops malformed ones and reports them in a
//     *RuleError, because a policy with a typo should neither panic nor silently lose
//     its other indexes.
//   - A number written with a '+' sign ("+3") or with more than ten digits
//     ("00000000003") passes the API server's strconv.Atoi but not indexes.Parse;
//     Validate rejects it, so that a policy it accepts is read the same way here.
//   - Where the API server stops at the first problem of a SucceededIndexes string,
//     Validate lists up to ten in the same Invalid error, joined by "; ". The first is
//     worded exactly as the API server words it.
//   - Match counts only succeeded indexes below completions. The Job controller
//     trims the set before matching, so the result is the same; callers here need not.
package successpolicy
