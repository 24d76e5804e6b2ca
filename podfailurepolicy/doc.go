// Package podfailurepolicy decides how a failed pod of a Job is handled under the
// Job's pod failure policy (spec.podFailurePolicy) and validates such a policy the
// way the API server does.
//
// [Match] tries the rules of a policy in order against a failed pod and returns a
// [Result]: whether a rule matched, its action and index, whether the failure counts
// towards backoffLimit (and backoffLimitPerIndex), and the message that the Job
// controller of Kubernetes 1.37 writes into the job's FailureTarget and Failed
// conditions when a FailJob rule matches. [Validate] checks a policy in the context
// of its JobSpec and returns a field.ErrorList with the API server's error types,
// paths and messages.
//
// The rules themselves live in package github.com/jobkit/jobkit/plain/podfailurepolicy
// ([plainpfp]), over plain values (exit codes by container name, condition types):
// [Match] converts the policy and the pod's terminated containers and conditions
// and calls it; [Validate] calls [plainpfp.Validate] with
// the template's container names and reports its errors as field errors, with the
// values typed as in batch/v1, and adds the two checks on the rest of the spec. This
// package re-exports none of the plain names (the limits are [plainpfp.MaxRules],
// [plainpfp.MaxExitCodeValues] and [plainpfp.MaxConditionPatterns]). A caller without
// pods asks the plain package directly.
//
// # Behaviour
//
//   - The first matching rule wins. A rule with an action this package does not know
//     is skipped, as the API documentation asks of clients.
//   - Ignore does not count the failure; Count, FailJob and FailIndex count it, and
//     so does a failure no rule matches.
//   - onExitCodes considers terminated containers with a non-zero exit code only,
//     regular containers before init containers. NotIn therefore never matches a
//     zero exit code, and a container still running is never looked at.
//   - onPodConditions compares type and status; an empty pattern status means True.
//
// # Invariants
//
// Neither function modifies its arguments, which may come from an informer cache.
// When Result.Matched is false, RuleIndex is -1, Action is empty and the failure
// counts. When it is true, policy.Rules[RuleIndex].Action == Action.
//
// # Cost
//
// Match is O(rules × (containers × values + conditions × patterns)) and allocates
// nothing unless a rule matches; a match allocates its message once. (The
// conversion of rules, containers and conditions is done on the stack for a valid
// policy and a pod of up to 8 containers and 8 conditions.) Validate is
// linear in the size of the policy and the number of containers of the template,
// and allocates its errors and their paths.
//
// # Concurrency
//
// Both functions are pure and safe for concurrent use.
//
// # Differences from upstream
//
//   - Result.Message is filled for every matched rule. Upstream builds it only for
//     FailJob, the one action that puts it into a condition; for the other actions
//     the same sentence is useful in events and logs. For FailJob it is identical.
//   - An empty onPodConditions status is matched and validated as True. Upstream's
//     controller and validation never see an empty status because API defaulting
//     fills it first; a Job built in code without defaulting is treated as the API
//     server would treat it after defaulting.
//   - Match of a nil pod gives "no match" instead of a panic. A pod without a
//     namespace is named "name" in messages, not "/name".
//   - Validate covers the policy and the two spec fields it constrains
//     (template.spec.restartPolicy and podReplacementPolicy). It reports the
//     restartPolicy errors only when a policy is set, while upstream's general Job
//     validation reports an empty, Always or unknown restartPolicy for every Job. It
//     does not check that the policy is unchanged on update (the field is immutable).
package podfailurepolicy
