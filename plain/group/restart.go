package group

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
)

// The label (and annotation) keys JobSet puts on child Jobs and their pods that a
// reader needs: the group and its UID, which select the children and their pods,
// and the role, index and attempts, which [Child] holds.
const (
	LabelJobSetName         = "jobset.sigs.k8s.io/jobset-name"
	LabelJobSetUID          = "jobset.sigs.k8s.io/jobset-uid"
	LabelRoleName           = "jobset.sigs.k8s.io/replicatedjob-name"
	LabelJobIndex           = "jobset.sigs.k8s.io/job-index"
	LabelRestartAttempt     = "jobset.sigs.k8s.io/restart-attempt"
	LabelJobRestartAttempt  = "jobset.sigs.k8s.io/job-restart-attempt"
	AnnotationNamespacedJob = "alpha.jobset.sigs.k8s.io/namespaced-job"
)

// The keys only [Identity.Labels] writes: no rule reads them back (a workload
// reads them through the downward API), so they are not exported; the package
// doc lists them.
const (
	labelRoleReplicas   = "jobset.sigs.k8s.io/replicatedjob-replicas"
	labelJobGlobalIndex = "jobset.sigs.k8s.io/job-global-index"
	labelGlobalReplicas = "jobset.sigs.k8s.io/global-replicas"
	labelGroupName      = "jobset.sigs.k8s.io/group-name"
	labelGroupReplicas  = "jobset.sigs.k8s.io/group-replicas"
	labelJobGroupIndex  = "jobset.sigs.k8s.io/job-group-index"
	labelJobKey         = "jobset.sigs.k8s.io/job-key"
	labelCoordinator    = "jobset.sigs.k8s.io/coordinator"
)

// Obsolete returns the positions in children of the children of an old attempt
// (their restart-attempt below status.restarts, or their job-restart-attempt below
// their index's jobRestarts): they must be deleted before their replacements are
// created. Children already being deleted are included; deleting again is
// harmless and the caller may skip them. O(children); allocates the result.
func Obsolete(children []Child, c Counters) []int {
	var out []int
	for i := range children {
		if !c.Current(&children[i]) {
			out = append(out, i)
		}
	}
	return out
}

// Slot is one child a role should have: its role and index.
type Slot struct {
	// Role is the position of the role in the roles slice.
	Role int
	// Index is the child's index within the role.
	Index int32
}

// Creations returns the children to create now, role by role in the order of
// roles and by index: every index below a role's replicas that has no child,
// for the roles that may start (allowed[i]; nil allows every role). A name is
// taken while any child holds it, old or being deleted, so with Recreate (and
// InPlaceRestart) an index waits for its old child to be gone; with
// BlockingRecreate nothing is created while any obsolete child exists. A child
// whose role is not in roles, or whose index is out of range, blocks nothing.
// Children are keyed by role and index, so two children of one index count as
// one. O(roles + children + replicas); allocates the result and one flag per
// replica of the allowed roles.
func Creations(roles []Role, children []Child, c Counters, strategy RestartStrategy, allowed []bool) []Slot {
	pos := roleIndex(roles)
	taken := make([][]bool, len(roles))
	for r := range roles {
		if allowed == nil || (r < len(allowed) && allowed[r]) {
			taken[r] = make([]bool, max(roles[r].Replicas, 0))
		}
	}
	for i := range children {
		ch := &children[i]
		if strategy == BlockingRecreate && !c.Current(ch) {
			return nil
		}
		if r, ok := pos(ch.Role); ok && ch.Index >= 0 && int(ch.Index) < len(taken[r]) {
			taken[r][ch.Index] = true
		}
	}
	var out []Slot
	for r, t := range taken {
		for i, held := range t {
			if !held {
				out = append(out, Slot{Role: r, Index: int32(i)})
			}
		}
	}
	return out
}

// childName returns the name of a child: <group>-<role>-<index>.
func childName(group, role string, index int32) string {
	var b strings.Builder
	b.Grow(len(group) + len(role) + 13)
	b.WriteString(group)
	b.WriteByte('-')
	b.WriteString(role)
	b.WriteByte('-')
	var d [11]byte
	b.Write(strconv.AppendInt(d[:0], int64(index), 10))
	return b.String()
}

// podHostname returns the hostname of a pod of a child: <child name>-<pod index>.
func podHostname(group, role string, jobIndex, podIndex int32) string {
	return childName(group, role, jobIndex) + "-" + strconv.FormatInt(int64(podIndex), 10)
}

// jobKey returns the job-key label value of a child: the hex SHA-1 of
// "<namespace>/<name>", one short key for the child's identity.
func jobKey(namespace, name string) string {
	sum := sha1.Sum([]byte(namespace + "/" + name))
	return hex.EncodeToString(sum[:])
}

// Coordinator names the pod every child and pod is told about
// (spec.coordinator).
type Coordinator struct {
	// ReplicatedJob is the coordinator's role.
	ReplicatedJob string
	// JobIndex is the index of its child; PodIndex its completion index there.
	JobIndex, PodIndex int32
}

// Value returns the coordinator label value: the pod's stable DNS name,
// <group>-<role>-<jobIndex>-<podIndex>.<subdomain>; subdomain "" means the group
// name.
func (c *Coordinator) Value(group, subdomain string) string {
	if subdomain == "" {
		subdomain = group
	}
	return podHostname(group, c.ReplicatedJob, c.JobIndex, c.PodIndex) + "." + subdomain
}

// Identity is who a child is: its name and the values of its labels.
type Identity struct {
	// Name is <group>-<role>-<index>.
	Name string
	// Role, RoleReplicas and Index place the child in its role.
	Role         string
	RoleReplicas int32
	Index        int32
	// GlobalIndex is unique in the group: the replicas of earlier roles plus
	// Index; GlobalReplicas is the sum of all replicas.
	GlobalIndex, GlobalReplicas int32
	// GroupName, GroupIndex and GroupReplicas do the same within the role's
	// group (roles with the same GroupName).
	GroupName                 string
	GroupIndex, GroupReplicas int32
	// Attempt and JobAttempt are the restart-attempt and job-restart-attempt the
	// child is created for.
	Attempt, JobAttempt int32
}

// Identities returns the identities of the given slots of a group named group
// with counters c, in the order of slots. O(roles + slots).
func Identities(group string, roles []Role, c Counters, slots []Slot) []Identity {
	global := make([]int32, len(roles))
	inGroup := make([]int32, len(roles))
	var total int32
	groupTotal := map[string]int32{}
	for i := range roles {
		r := &roles[i]
		global[i] = total
		inGroup[i] = groupTotal[r.group()]
		total += r.Replicas
		groupTotal[r.group()] += r.Replicas
	}
	out := make([]Identity, len(slots))
	for k, s := range slots {
		r := &roles[s.Role]
		out[k] = Identity{
			Name: childName(group, r.Name, s.Index), Role: r.Name, RoleReplicas: r.Replicas, Index: s.Index,
			GlobalIndex: global[s.Role] + s.Index, GlobalReplicas: total,
			GroupName: r.group(), GroupIndex: inGroup[s.Role] + s.Index, GroupReplicas: groupTotal[r.group()],
			Attempt: c.Restarts, JobAttempt: c.JobRestarts(r.Name, s.Index),
		}
	}
	return out
}

// Labels returns the child's labels (JobSet puts the same on the Job, on its pod
// template and as annotations), for a group of the given name, UID and
// namespace; coordinator is the coordinator value, "" for none. The job-key
// label is the hex SHA-1 of "<namespace>/<name>"; the namespaced-job annotation is not a label and is left to
// the caller (<namespace>_<name>).
func (id *Identity) Labels(group, uid, namespace, coordinator string) map[string]string {
	fmtI := func(v int32) string { return strconv.FormatInt(int64(v), 10) }
	m := map[string]string{
		LabelJobSetName:        group,
		LabelJobSetUID:         uid,
		LabelRoleName:          id.Role,
		labelRoleReplicas:      fmtI(id.RoleReplicas),
		LabelJobIndex:          fmtI(id.Index),
		labelJobGlobalIndex:    fmtI(id.GlobalIndex),
		labelGlobalReplicas:    fmtI(id.GlobalReplicas),
		labelGroupName:         id.GroupName,
		labelGroupReplicas:     fmtI(id.GroupReplicas),
		labelJobGroupIndex:     fmtI(id.GroupIndex),
		LabelRestartAttempt:    fmtI(id.Attempt),
		LabelJobRestartAttempt: fmtI(id.JobAttempt),
		labelJobKey:            jobKey(namespace, id.Name),
	}
	if coordinator != "" {
		m[labelCoordinator] = coordinator
	}
	return m
}
