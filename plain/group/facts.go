package group

import (
	"strconv"
	"time"
)

// defaultGroupName is the group of a role whose GroupName is empty, as the JobSet
// CRD schema defaults it.
const defaultGroupName = "default"

// Role is one replicated job of a group: Replicas children built from one template.
type Role struct {
	// Name names the role; children are named <group>-<role>-<index>.
	Name string
	// GroupName is the role's group for the group index labels; "" means
	// "default", as the JobSet CRD schema defaults it.
	GroupName string
	// Replicas is the number of children, indexed 0 to Replicas-1.
	Replicas int32
	// Parallelism is the child's spec.parallelism after API defaulting (1 when the
	// template leaves it out).
	Parallelism int32
	// Completions is the child's spec.completions; nil when the template leaves it
	// out, in which case a child expects Parallelism pods.
	Completions *int32
	// DependsOn lists the earlier roles this one waits for before its children are
	// created.
	DependsOn []Dependency

	// NonIndexed is set when the child's completionMode is NonIndexed; the zero
	// value is Indexed, JobSet's webhook default. Only Validate reads it.
	NonIndexed bool
	// BackoffLimit and PodReplacementPolicy are the child's spec.backoffLimit
	// (nil when unset) and spec.podReplacementPolicy ("" when unset): Validate
	// checks them under the in-place restart strategy.
	BackoffLimit         *int32
	PodReplacementPolicy string
	// VolumeMounts are the names of the volumes the template's containers and
	// init containers mount, and Volumes the names of the template's volumes,
	// in order: Validate checks the volume claims against them, and
	// [Spec.Claims] gives the role the claims it mounts.
	VolumeMounts, Volumes []string
	// ExclusiveTopology and NodeSelectorStrategy are the same annotations as
	// the Spec's, on the role's Job template: the role's own exclusive
	// placement, over the group's ([Spec.Exclusive]).
	ExclusiveTopology    string
	NodeSelectorStrategy bool
}

// group returns the role's group name with the default applied.
func (r *Role) group() string {
	if r.GroupName == "" {
		return defaultGroupName
	}
	return r.GroupName
}

// ExpectedPods is the number of ready or succeeded pods that make a child of this
// role ready: min(parallelism, completions).
func (r *Role) ExpectedPods() int32 {
	if r.Completions != nil && *r.Completions < r.Parallelism {
		return *r.Completions
	}
	return r.Parallelism
}

// Outcome is how far a child has come: still running, or finished one way or the
// other.
type Outcome int8

// The outcomes of a child.
const (
	// Running: neither Complete nor Failed is True on the child.
	Running Outcome = iota
	// Succeeded: the child's Complete condition is True.
	Succeeded
	// Failed: the child's Failed condition is True.
	Failed
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case Running:
		return "Running"
	case Succeeded:
		return "Succeeded"
	case Failed:
		return "Failed"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Child is what the rules read of one child job (a batch/v1 Job, or anything run
// for one index of one role).
type Child struct {
	// Name is the child's name, used in messages only.
	Name string
	// Role is the child's role (the replicatedjob-name label); "" when the label
	// is missing, and such a child matches no failure policy rule.
	Role string
	// Index is the child's index within its role (the job-index label).
	Index int32
	// Attempt is the group restart attempt the child was created for (the
	// restart-attempt label).
	Attempt int32
	// JobAttempt is the child's own restart attempt (the job-restart-attempt
	// label).
	JobAttempt int32
	// Outcome says whether the child is running, succeeded or failed.
	Outcome Outcome
	// Reason and Message are those of the child's Failed (or Complete) condition.
	Reason, Message string
	// FinishedAt is the lastTransitionTime of that condition.
	FinishedAt time.Time
	// Ready, Succeeded, Failed and Active count the child's pods.
	Ready, Succeeded, Failed, Active int32
	// Suspended is the child's spec.suspend.
	Suspended bool
	// Deleting is true once the child is marked for deletion; it still exists
	// (its name is taken) until it is gone.
	Deleting bool
	// Parallelism and Completions are the child's spec.parallelism (after API
	// defaulting) and spec.completions (nil when unset): [Spec.Resized]
	// compares them with its role's.
	Parallelism int32
	Completions *int32
}

// RoleRestarts holds the per-index restart counters of one role
// (status.replicatedJobsStatus[].jobRestarts and jobRestartsCountTowardsMax). A
// missing item counts as zero.
type RoleRestarts struct {
	// Restarts[i] counts every restart of the child with index i alone.
	Restarts []int32
	// CountTowardsMax[i] counts those that count towards maxRestarts.
	CountTowardsMax []int32
}

// Counters are the restart counters of a group's status.
type Counters struct {
	// Restarts counts every restart of the whole group (status.restarts).
	Restarts int32
	// RestartsCountTowardsMax counts those that count towards maxRestarts.
	RestartsCountTowardsMax int32
	// Jobs holds the per-index counters by role name; nil means all zero.
	Jobs map[string]RoleRestarts
}

// at returns s[i], or 0 when s is too short.
func at(s []int32, i int32) int32 {
	if i < 0 || int(i) >= len(s) {
		return 0
	}
	return s[i]
}

// JobRestarts returns the restart attempt the child with this role and index is
// on: jobRestarts[index] of the role.
func (c *Counters) JobRestarts(role string, index int32) int32 {
	return at(c.Jobs[role].Restarts, index)
}

// CountedTowardsMax returns the restarts that count towards maxRestarts: the
// group's RestartsCountTowardsMax plus every role's CountTowardsMax.
func (c *Counters) CountedTowardsMax() int64 {
	n := int64(c.RestartsCountTowardsMax)
	for _, r := range c.Jobs {
		for _, v := range r.CountTowardsMax {
			n += int64(v)
		}
	}
	return n
}

// Clone returns a deep copy of the counters.
func (c Counters) Clone() Counters {
	if c.Jobs == nil {
		return c
	}
	jobs := make(map[string]RoleRestarts, len(c.Jobs))
	for k, v := range c.Jobs {
		jobs[k] = RoleRestarts{Restarts: clone(v.Restarts), CountTowardsMax: clone(v.CountTowardsMax)}
	}
	c.Jobs = jobs
	return c
}

func clone(s []int32) []int32 {
	if s == nil {
		return nil
	}
	return append([]int32(nil), s...)
}

// Current reports whether the child belongs to the current attempt: it was created
// for the group's current restart attempt and for its index's current attempt. A
// child of an older attempt is obsolete and must go (see [Obsolete]).
func (c *Counters) Current(ch *Child) bool {
	return ch.Attempt >= c.Restarts && ch.JobAttempt >= c.JobRestarts(ch.Role, ch.Index)
}
