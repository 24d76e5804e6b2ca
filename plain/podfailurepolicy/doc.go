// Package podfailurepolicy decides how a failure is handled under a pod failure
// policy (batch/v1 spec.podFailurePolicy), over plain values, and validates such a
// policy the way the API server does, with the standard library only.
//
// A [Failure] is what the rules read of a failed pod, or of any failed run of a
// task: the exit code of each terminated container by name (init or not) and the
// conditions (type and status). [Match] tries the rules of a [Policy] in order and
// returns a [Result]: whether a rule matched, its action and index, whether the
// failure counts towards the backoff limits, and the Job controller's message. So
// "does exit code 42 of container task fail the group?" needs no pod:
//
//	r := podfailurepolicy.Match(policy, &podfailurepolicy.Failure{
//		Containers: []podfailurepolicy.Container{{Name: "task", ExitCode: 42}},
//	})
//	// r.Action == ActionFailJob, r.Message == "Container task failed with exit code 42 matching FailJob rule at index 0"
//
// [Validate] checks a policy, given the container names of the pod template and
// whether a per-index backoff limit is set ([Context]), and returns every error
// (a *fielderr.Error each) with the API server's types, field names and messages.
// Package github.com/jobkit/jobkit/podfailurepolicy reads the same from Jobs and
// pods, converts them, and calls this package: the rules are written once, here.
//
// # Behaviour
//
//   - The first matching rule wins. A rule with an action this package does not
//     know is skipped, as the API documentation asks of clients.
//   - Ignore does not count the failure; Count, FailJob and FailIndex count it, and
//     so does a failure no rule matches.
//   - onExitCodes considers containers with a non-zero exit code only, regular
//     containers before init containers. NotIn therefore never matches a zero exit
//     code.
//   - onPodConditions compares type and status; an empty pattern status means True.
//   - The condition type is checked as the API server checks a label key
//     (written with the standard library, in the messages of Kubernetes 1.37).
//
// # Invariants
//
// Nothing modifies its arguments. When Result.Matched is false, RuleIndex is -1,
// Action and Message are empty and the failure counts. When it is true, Action is
// a known action equal to that of policy.Rules[RuleIndex].
//
// # Cost
//
// Match is O(rules × (containers × values + conditions × patterns)) and allocates
// nothing unless a rule matches; a match allocates its message once. Validate is
// linear in the size of the policy and allocates its errors.
//
// # Concurrency
//
// Every function is pure and safe for concurrent use.
//
// # Differences from the Job controller
//
//   - Result.Message is filled for every matched rule; the Job controller builds
//     it only for FailJob, the one action that puts it into a condition. For
//     FailJob with a named pod it is identical. Without a name (Failure.Namespace
//     and Name empty) the message leaves the pod out ("Container task failed
//     with exit code 42 ..."; "Condition DisruptionTarget matching ..."), and a
//     name without a namespace is written without the slash.
//   - An empty onPodConditions status is matched and validated as True, as the
//     API server would after defaulting.
package podfailurepolicy
