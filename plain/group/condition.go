package group

import (
	"slices"
	"time"
)

// ConditionStatus is the status of a [Condition].
type ConditionStatus string

// The statuses of a condition.
const (
	True  ConditionStatus = "True"
	False ConditionStatus = "False"
)

// The condition types of a group, as JobSet names them.
const (
	ConditionCompleted               = "Completed"
	ConditionFailed                  = "Failed"
	ConditionSuspended               = "Suspended"
	ConditionRestarting              = "RestartingJobSet"
	ConditionStartupPolicyInProgress = "StartupPolicyInProgress"
	ConditionStartupPolicyCompleted  = "StartupPolicyCompleted"
)

// The condition reasons and messages of a group, in JobSet's words (the
// messages that name the group or its children are worded by [Terms]). They
// reach a user only inside the conditions and events this package returns (the
// package doc lists the reasons), so they are not exported: a caller tells
// outcomes apart by Decision.Effect and Decision.Action, not by a reason string.
const (
	reasonAllJobsCompleted   = "AllJobsCompleted"
	reasonFailedJobs         = "FailedJobs"
	reasonReachedMaxRestarts = "ReachedMaxRestarts"

	reasonFailJobSet  = "FailJobSetFailurePolicyAction"
	messageFailJobSet = "applying FailJobSet failure policy action"

	// reasonDefaultFailurePolicy is the RestartingJobSet reason when no rule
	// matched; a matched rule gives "FailurePolicy_<rule name>".
	reasonDefaultFailurePolicy = "DefaultFailurePolicy"
	// reasonFailurePolicyPrefix prefixes the rule name in a RestartingJobSet
	// reason.
	reasonFailurePolicyPrefix = "FailurePolicy_"

	reasonSuspended = "SuspendedJobs"
	reasonResumed   = "ResumeJobs"

	reasonStartupInProgress  = "InOrderStartupPolicyInProgress"
	messageStartupInProgress = "in order startup policy is in progress"
	reasonStartupCompleted   = "InOrderStartupPolicyCompleted"
	messageStartupCompleted  = "in order startup policy has completed"
)

// The terminal states of a group (status.terminalState), which Decision and
// Success carry.
const (
	terminalCompleted = "Completed"
	terminalFailed    = "Failed"
)

// Condition is one condition of a group's status (a metav1.Condition without the
// observed generation).
type Condition struct {
	Type               string
	Status             ConditionStatus
	Reason             string
	Message            string
	LastTransitionTime time.Time
}

// findCondition returns the condition of type t in conds, or nil.
func findCondition(conds []Condition, t string) *Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// isTrue reports whether conds holds a condition of type t with status True.
func isTrue(conds []Condition, t string) bool {
	c := findCondition(conds, t)
	return c != nil && c.Status == True
}

// SetCondition upserts c into conds the way JobSet does and reports whether
// anything changed:
//
//   - a condition of the same type, status, reason and message is a no-op;
//   - the same type and status with a new reason or message is updated in place
//     and keeps its LastTransitionTime;
//   - the same type with another status takes c whole, with LastTransitionTime
//     now;
//   - a new type is added only when c is True, with LastTransitionTime now.
//
// conds is not modified: when something changes, the result is a new slice.
// c.LastTransitionTime is ignored.
func SetCondition(conds []Condition, c Condition, now time.Time) ([]Condition, bool) {
	for i := range conds {
		old := &conds[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			if old.Reason == c.Reason && old.Message == c.Message {
				return conds, false
			}
			c.LastTransitionTime = old.LastTransitionTime
		} else {
			c.LastTransitionTime = now
		}
		out := slices.Clone(conds)
		out[i] = c
		return out, true
	}
	if c.Status != True {
		return conds, false
	}
	c.LastTransitionTime = now
	out := make([]Condition, len(conds), len(conds)+1)
	copy(out, conds)
	return append(out, c), true
}

// Finished returns the Completed or Failed condition that is True, or nil while
// the group runs.
func Finished(conds []Condition) *Condition {
	for i := range conds {
		c := &conds[i]
		if (c.Type == ConditionCompleted || c.Type == ConditionFailed) && c.Status == True {
			return c
		}
	}
	return nil
}

// The reasons that end a restart (RestartingJobSet=False).
const (
	reasonRestartJobsReady = "JobsReady"
	reasonRestartFailed    = "JobSetFailed"
	reasonRestartCompleted = "JobSetCompleted"
	reasonRestartSuspended = "JobSetSuspended"
)

// RestartEnded is [Terms.RestartEnded] in JobSet's words.
func RestartEnded(conds []Condition, roles []Role, statuses []RoleStatus, suspended bool) *Condition {
	return Terms{}.RestartEnded(conds, roles, statuses, suspended)
}

// RestartEnded returns the RestartingJobSet=False condition that ends a restart
// in progress, or nil while it goes on (or when none is in progress): the group
// failed, completed or was suspended (in that order), or every role has started
// again (each status Started for its replicas, statuses in the order of roles as
// [Statuses] returns them). Its messages are worded by t.
func (t Terms) RestartEnded(conds []Condition, roles []Role, statuses []RoleStatus, suspended bool) *Condition {
	if !isTrue(conds, ConditionRestarting) {
		return nil
	}
	end := func(reason, msg string) *Condition {
		return &Condition{Type: ConditionRestarting, Status: False, Reason: reason, Message: msg}
	}
	switch {
	case isTrue(conds, ConditionFailed):
		return end(reasonRestartFailed, t.restartFailed())
	case isTrue(conds, ConditionCompleted):
		return end(reasonRestartCompleted, t.restartCompleted())
	case suspended:
		return end(reasonRestartSuspended, t.suspended())
	}
	if len(statuses) != len(roles) {
		return nil
	}
	for i := range roles {
		if statuses[i].Name != roles[i].Name || !statuses[i].Started(roles[i].Replicas) {
			return nil
		}
	}
	return end(reasonRestartJobsReady, t.childrenReady())
}
