package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/jobstatus"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// Invariants of a group scaled on the run or placed exclusively.
const (
	// InvGroupSize: at the end, a child beyond its role's replicas left
	// behind, or a Completed group whose roles do not have one completed child
	// of the current attempt per index of their last size, or whose per-role
	// counters do not say so.
	InvGroupSize Invariant = "group-size"
	// InvExclusivePlacement: pods of two child Jobs ran in one topology domain
	// of a group placed exclusively.
	InvExclusivePlacement Invariant = "exclusive-placement"
)

// shapeStream is the PCG stream that draws, per child-Jobs seed, the size
// changes and the exclusive placement: the other draws of a seed stay as
// they were.
const shapeStream = inPlaceStream + 2

// simTopology is the node label whose values are the simulated topology
// domains; simDomains is how many there are.
const (
	simTopology = "sim.jobkit.dev/rack"
	simDomains  = 6
)

// groupShape is what a child-Jobs seed draws besides its group: the size
// changes of its workers made while it runs, and its exclusive placement
// with the scheduler that honours it.
type groupShape struct {
	rng *rand.Rand
	// changes maps a chaotic step to the workers' new size: replicas, and
	// parallelism = completions (0: unchanged).
	changes map[int][2]int32
	// exclusive places each child's pods in a domain of its own; domain
	// holds the domain of every pod bound (by UID).
	exclusive bool
	domain    map[types.UID]string
	violate   func(inv Invariant, format string, args ...any)
	// applied counts the changes made on the running group; size is the
	// workers' last size (replicas, pods per child).
	applied int
	size    [2]int32
}

// drawShape draws the shape of seed's group: one seed in two changes its
// workers' size once or twice during the chaotic phase (replicas 1 to 3, and
// in one change in two the Indexed workers' parallelism = completions 1 to
// 4), and one in two places its children exclusively over simTopology.
func drawShape(seed uint64, g *simGroup) *groupShape {
	r := rand.New(rand.NewPCG(seed, shapeStream))
	x := &groupShape{rng: r, changes: map[int][2]int32{}, domain: map[types.UID]string{}}
	if r.IntN(2) == 0 {
		for range 1 + r.IntN(2) {
			var pods int32
			if r.IntN(2) == 0 {
				pods = 1 + r.Int32N(4)
			}
			x.changes[1+r.IntN(5)] = [2]int32{1 + r.Int32N(3), pods}
		}
	}
	if r.IntN(2) == 0 {
		x.exclusive = true
		if g.Annotations == nil {
			g.Annotations = map[string]string{}
		}
		g.Annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] = simTopology
	}
	return x
}

// describe is the shape's part of the group's description, at the end of
// its run.
func (x *groupShape) describe() string {
	s := ""
	if x.applied > 0 {
		s += fmt.Sprintf(" resized %d times while running, to %d replicas of %d", x.applied, x.size[0], x.size[1])
	}
	if x.exclusive {
		s += " exclusive"
	}
	return s
}

// resize applies the size change drawn for chaotic step n, as a user's update
// of a group that has not finished (the API refuses it after).
func (x *groupShape) resize(n int, store *reconciletest.Store[*simGroup]) {
	ch, ok := x.changes[n]
	if !ok {
		return
	}
	_, _ = store.Update("sim", "group", func(g *simGroup) {
		if g.Status.TerminalState != "" {
			return
		}
		x.applied++
		g.Spec.Roles[1].Replicas = ch[0]
		if ch[1] > 0 {
			g.Templates[1].Spec.Parallelism, g.Templates[1].Spec.Completions = ptr.To(ch[1]), ptr.To(ch[1])
		}
		x.size = [2]int32{ch[0], ptr.Deref(g.Templates[1].Spec.Parallelism, 1)}
	})
}

// hold reports whether a running pod of a group to be resized keeps running
// this step in the chaotic phase (one step in two), so that the group is
// still running when its size changes.
func (x *groupShape) hold() bool {
	return len(x.changes) > 0 && x.rng.IntN(2) == 0
}

// leaving reports whether p is of a child beyond its role's replicas, or of a
// completion index beyond its role's parallelism, in the group as stored.
func leavingPod(store *reconciletest.Store[*simGroup]) func(p *corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		g, err := store.Get("sim", "group")
		if err != nil {
			return false
		}
		for i, r := range g.Spec.Roles {
			if r.Name != p.Labels[plaingroup.LabelRoleName] {
				continue
			}
			index, _ := strconv.Atoi(p.Labels[plaingroup.LabelJobIndex])
			completion, _ := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
			return int32(index) >= r.Replicas || int32(completion) >= ptr.Deref(g.Templates[i].Spec.Parallelism, 1)
		}
		return false
	}
}

// schedule binds a pending pod to a domain, as a scheduler honouring its
// required pod affinity and anti-affinity would, among the pods bound that
// have not finished; it reports false when no domain fits (the pod stays
// Pending). A group not placed exclusively schedules every pod. A pod
// without the terms lands in a domain drawn at random: the placement check
// then finds out.
func (x *groupShape) schedule(c *reconciletest.Cluster, p *corev1.Pod) bool {
	if !x.exclusive {
		return true
	}
	if _, ok := x.domain[p.UID]; ok {
		return true
	}
	var bound []*corev1.Pod
	for _, q := range c.ListPods(p.Namespace) {
		if _, ok := x.domain[q.UID]; ok && q.UID != p.UID && !isTerminal(q) {
			bound = append(bound, q)
		}
	}
	for _, d := range x.rng.Perm(simDomains) {
		dom := "rack-" + strconv.Itoa(d)
		if x.fits(p, dom, bound) {
			x.domain[p.UID] = dom
			return true
		}
	}
	return false
}

// fits reports whether p may run in dom beside the pods bound: each of its
// affinity terms over simTopology is met in dom (or by no pod anywhere: the
// first pod of its kind), none of its anti-affinity terms matches a pod in
// dom, and no pod in dom has an anti-affinity term matching p.
func (x *groupShape) fits(p *corev1.Pod, dom string, bound []*corev1.Pod) bool {
	a := p.Spec.Affinity
	if a != nil && a.PodAffinity != nil {
		for _, t := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			here, anywhere := false, false
			for _, q := range bound {
				if matches(t, q) {
					anywhere = true
					here = here || x.domain[q.UID] == dom
				}
			}
			if anywhere && !here {
				return false
			}
		}
	}
	for _, q := range bound {
		if x.domain[q.UID] != dom {
			continue
		}
		if a != nil && a.PodAntiAffinity != nil && anyMatch(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, q) {
			return false
		}
		if qa := q.Spec.Affinity; qa != nil && qa.PodAntiAffinity != nil && anyMatch(qa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, p) {
			return false
		}
	}
	return true
}

func anyMatch(terms []corev1.PodAffinityTerm, q *corev1.Pod) bool {
	for _, t := range terms {
		if matches(t, q) {
			return true
		}
	}
	return false
}

// matches reports whether term t, over simTopology, selects pod q.
func matches(t corev1.PodAffinityTerm, q *corev1.Pod) bool {
	if t.TopologyKey != simTopology {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	return err == nil && sel.Matches(labels.Set(q.Labels))
}

// checkPlacement checks, after every step, that the pods bound in each
// domain and not finished belong to one child Job (by name: a child
// recreated by a restart keeps its name and its key).
func (x *groupShape) checkPlacement(c *reconciletest.Cluster) {
	if !x.exclusive {
		return
	}
	jobs := map[string]string{}
	for _, p := range c.ListPods("sim") {
		dom, ok := x.domain[p.UID]
		if !ok || isTerminal(p) {
			continue
		}
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		if other, ok := jobs[dom]; ok && other != ref.Name {
			x.violate(InvExclusivePlacement, "pods of child Jobs %s and %s run in %s %s", other, ref.Name, simTopology, dom)
			return
		}
		jobs[dom] = ref.Name
	}
}

// checkSize checks the end of a group's run against its last size: no child
// beyond a role's replicas is left (not being deleted), and a Completed
// group has, per role, one completed child of the current attempt per index,
// as many succeeded in its role status, none active, and at most one
// per-index restart counter per replica.
func (x *groupShape) checkSize(g *simGroup, jobs []*batchv1.Job) {
	st := &g.Status
	done := make([]map[int32]bool, len(g.Spec.Roles))
	for i := range done {
		done[i] = map[int32]bool{}
	}
	for _, j := range jobs {
		ch, err := childjobs.ReadChild(j)
		if err != nil || j.DeletionTimestamp != nil {
			continue
		}
		for i, r := range g.Spec.Roles {
			if r.Name != ch.Role {
				continue
			}
			if ch.Index >= r.Replicas {
				x.violate(InvGroupSize, "child %s of index %d left behind: role %s has %d replicas", j.Name, ch.Index, r.Name, r.Replicas)
				return
			}
			if c, ok := jobstatus.Finished(&j.Status); ok && c == batchv1.JobComplete && ch.Attempt == st.Restarts {
				done[i][ch.Index] = true
			}
		}
	}
	if st.TerminalState != plaingroup.ConditionCompleted {
		return
	}
	for i, r := range g.Spec.Roles {
		if int32(len(done[i])) != r.Replicas {
			x.violate(InvGroupSize, "the group Completed with %d completed children of role %s, which has %d replicas", len(done[i]), r.Name, r.Replicas)
			return
		}
		for _, rs := range st.ReplicatedJobs {
			if rs.Name == r.Name && (rs.Succeeded != r.Replicas || rs.Active != 0 || int32(len(rs.JobRestarts)) > r.Replicas) {
				x.violate(InvGroupSize, "role %s of %d replicas: status succeeded %d, active %d, %d per-index counters", r.Name, r.Replicas, rs.Succeeded, rs.Active, len(rs.JobRestarts))
				return
			}
		}
	}
}
