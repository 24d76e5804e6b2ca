package podfailurepolicy

// Action is what a matching rule does with a failure.
type Action string

// The actions of the batch/v1 API.
const (
	// ActionFailJob fails the whole job (group) at once.
	ActionFailJob Action = "FailJob"
	// ActionFailIndex fails the pod's index; only with per-index backoff.
	ActionFailIndex Action = "FailIndex"
	// ActionIgnore does not count the failure: the pod is replaced.
	ActionIgnore Action = "Ignore"
	// ActionCount counts the failure as usual.
	ActionCount Action = "Count"
)

// Operator says how an exit code is compared with a rule's values.
type Operator string

// The operators of onExitCodes.
const (
	// OpIn matches an exit code among the values.
	OpIn Operator = "In"
	// OpNotIn matches a non-zero exit code not among the values.
	OpNotIn Operator = "NotIn"
)

// ConditionStatus is the status of a pod condition.
type ConditionStatus string

// The statuses of a condition.
const (
	// StatusTrue is a condition that holds.
	StatusTrue ConditionStatus = "True"
	// StatusFalse is a condition that does not hold.
	StatusFalse ConditionStatus = "False"
	// StatusUnknown is a condition whose state is not known.
	StatusUnknown ConditionStatus = "Unknown"
)

// Policy is a pod failure policy: rules tried in order, the first match wins.
type Policy struct {
	// Rules are the rules, at most MaxRules in a valid policy.
	Rules []Rule
}

// Rule is one rule of a policy: an action and exactly one requirement.
type Rule struct {
	// Action is what a match does; a rule with an action this package does not
	// know is skipped by Match (and rejected by Validate).
	Action Action
	// OnExitCodes matches the exit codes of terminated containers.
	OnExitCodes *ExitCodes
	// OnPodConditions are patterns of the pod's conditions (onPodConditions),
	// any of which must match; an empty list counts as absent. A pattern's
	// Type is a label key such as "DisruptionTarget"; its Status "" means
	// StatusTrue, as API defaulting sets it.
	OnPodConditions []Condition
}

// ExitCodes is a rule's requirement on exit codes.
type ExitCodes struct {
	// ContainerName restricts the rule to the container of that name (regular or
	// init); nil means any container.
	ContainerName *string
	// Operator compares each exit code with Values.
	Operator Operator
	// Values are the exit codes, ascending and without repeats in a valid rule
	// (1 to MaxExitCodeValues of them).
	Values []int32
}

// Container is a terminated container of a failed pod.
type Container struct {
	// Name is the container's name.
	Name string
	// Init is true for an init container. Regular containers are tried first.
	Init bool
	// ExitCode is the code it exited with; 0 (success) is never matched.
	ExitCode int32
}

// Condition is a pod condition: one of a failed pod's ([Failure].Conditions), or
// a pattern of a rule ([Rule].OnPodConditions), which a pod's condition matches
// when both its Type and its Status are equal (a pattern's empty Status meaning
// StatusTrue).
type Condition struct {
	// Type is the condition type.
	Type string
	// Status is its status.
	Status ConditionStatus
}

// Failure is what Match reads of a failed pod (or of any failed run of a task).
type Failure struct {
	// Namespace and Name name the pod in messages, as "namespace/name" (or "name"
	// without a namespace); both empty leaves the pod out of the message.
	Namespace, Name string
	// Containers are the containers that terminated, in the pod's order; containers
	// still running have no exit code and are left out.
	Containers []Container
	// Conditions are the pod's conditions, in the pod's order.
	Conditions []Condition
}
