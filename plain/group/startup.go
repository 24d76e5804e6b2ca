package group

// DependsOnStatus is the state a dependency must reach (dependsOn[].status).
type DependsOnStatus string

// The states a dependency can wait for.
const (
	// DependsOnReady: every child of the dependency is ready or finished (failed
	// children count).
	DependsOnReady DependsOnStatus = "Ready"
	// DependsOnComplete: every child of the dependency has succeeded.
	DependsOnComplete DependsOnStatus = "Complete"
)

// Dependency is one item of a role's dependsOn.
type Dependency struct {
	// Name is an earlier role.
	Name string
	// Status is what that role must reach.
	Status DependsOnStatus
}

// StartupOrder is spec.startupPolicy.startupPolicyOrder.
type StartupOrder string

// The startup orders.
const (
	// AnyOrder starts every role at once (the default, also for "").
	AnyOrder StartupOrder = "AnyOrder"
	// InOrder starts the roles one at a time in spec order.
	InOrder StartupOrder = "InOrder"
)

// Startup says which roles may have their children created or resumed now.
type Startup struct {
	// Allowed[i] is true when roles[i] may start.
	Allowed []bool
	// Conditions are the startup conditions to set for InOrder (nil otherwise):
	// StartupPolicyInProgress=True and StartupPolicyCompleted=False while a role
	// waits, the reverse once every role has started; [SetCondition] of each
	// keeps the two exclusive.
	Conditions []Condition
}

// MayStart decides which roles may start, from the role statuses the group
// recorded (status.replicatedJobsStatus; a role without an entry has not
// started):
//
//   - InOrder: roles[0] may start; roles[i] may start once every earlier role has
//     started ([RoleStatus.Started]);
//   - otherwise a role may start once each of its dependencies has an entry and
//     has reached its state (Ready: [RoleStatus.Started]; Complete:
//     [RoleStatus.Complete]); a role without dependencies may always start. A
//     dependency on a role that is not in roles is never met.
//
// MayStart modifies nothing and is O(roles × dependencies + roles × statuses).
func MayStart(order StartupOrder, roles []Role, statuses []RoleStatus) Startup {
	st := Startup{Allowed: make([]bool, len(roles))}
	if order == InOrder {
		all := true
		for i := range roles {
			st.Allowed[i] = true
			s := findStatus(statuses, roles[i].Name)
			if s == nil || !s.Started(roles[i].Replicas) {
				all = false
				break
			}
		}
		progress, done := True, False
		reasonP, msgP := reasonStartupInProgress, messageStartupInProgress
		reasonD, msgD := reasonStartupCompleted, messageStartupCompleted
		if all {
			progress, done = False, True
		}
		st.Conditions = []Condition{
			{Type: ConditionStartupPolicyInProgress, Status: progress, Reason: reasonP, Message: msgP},
			{Type: ConditionStartupPolicyCompleted, Status: done, Reason: reasonD, Message: msgD},
		}
		return st
	}
	for i := range roles {
		st.Allowed[i] = dependenciesMet(&roles[i], roles, statuses)
	}
	return st
}

func dependenciesMet(r *Role, roles []Role, statuses []RoleStatus) bool {
	for _, d := range r.DependsOn {
		var dep *Role
		for j := range roles {
			if roles[j].Name == d.Name {
				dep = &roles[j]
				break
			}
		}
		s := findStatus(statuses, d.Name)
		if dep == nil || s == nil {
			return false
		}
		switch d.Status {
		case DependsOnReady:
			if !s.Started(dep.Replicas) {
				return false
			}
		case DependsOnComplete:
			if !s.Complete(dep.Replicas) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
