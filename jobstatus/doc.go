// Package jobstatus holds the rules of a batch/v1 Job's status: reading and setting
// its conditions with the API's transition-time conventions, and validating a status
// update the way the API server does, so that a controller (or a test) can know before
// writing that the API server will accept the write.
//
// # Validation
//
// ValidateUpdate reproduces the status rules of the API server of Kubernetes 1.37 with
// the JobManagedBy gate on (GA since 1.35), including its habit of checking a rule only
// when an update touches the fields the rule reads. Validate checks every rule
// unconditionally, which is stricter and suits tests that assert a plan never produces
// an invalid status. Both return field.ErrorList with paths under "status" and the API
// server's messages.
//
// Index strings are parsed with package indexes, which reports every invalid part; the
// messages therefore list each bad part where the API server names only the first.
//
// # Conditions
//
// SetCondition never modifies its input; it returns a new slice when something
// changed, and changes lastTransitionTime only when a condition's status changes.
// MetaConditions and JobConditions convert a Job's conditions to and from
// metav1.Condition, the shape a custom resource's status usually keeps them in
// (plan's "Status contract" says what must survive).
//
// # Cost and concurrency
//
// Validation is linear in the length of the status (conditions, uncounted UIDs, index
// strings). Every function is pure and safe for concurrent use.
package jobstatus
