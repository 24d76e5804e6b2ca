package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// childRecord is what the watch saw of one child Job of a group.
type childRecord struct {
	Group, Role, Name   string
	Index               int
	Attempt, JobAttempt int // restart-attempt and job-restart-attempt labels
	CreatedRV           uint64
	// SatisfiedRV is the first version with a ready or succeeded pod, or complete
	// (what dependsOn waits for); CompleteRV the first complete one.
	SatisfiedRV, CompleteRV uint64
	GoneRV                  uint64 // the revision of its deletion; 0 while none was seen
	GoneUnseen              bool   // deleted while the watch was away (missing from a list)
}

// groupCounters are a JobSet's counters as the watch saw them last.
type groupCounters struct {
	Restarts, TowardsMax int64
	JobRestarts          map[string][]int64 // by role
}

// groupHistory records the child Jobs, the pods and the JobSets of the group run
// from watch events; safe for concurrent use.
type groupHistory struct {
	mu       sync.Mutex
	children map[types.UID]*childRecord
	pods     map[string]map[types.UID]bool // by group: every pod seen
	counters map[string]groupCounters      // by group
	finished map[string]uint64             // by group: the first revision with a finished condition
	// failures are the pods kwok failed (exit code chaosPlainFailCode), by group:
	// the child (role, index, attempts) each failed. A pod deleted while running
	// (its child deleted by a restart, a scale-down, the group's end) ends with 137
	// and is no failure of the plan.
	failures map[string]map[failure]bool
	// backwards are the counters seen going down.
	backwards []string
}

func newGroupHistory() *groupHistory {
	return &groupHistory{children: map[types.UID]*childRecord{}, pods: map[string]map[types.UID]bool{},
		counters: map[string]groupCounters{}, finished: map[string]uint64{}, failures: map[string]map[failure]bool{}}
}

// failure is the child of a pod that kwok failed.
type failure struct {
	Role                       string
	Index, Attempt, JobAttempt int
}

func labelInt(l map[string]string, key string) int {
	v, err := strconv.Atoi(l[key])
	if err != nil {
		return -1
	}
	return v
}

func (h *groupHistory) observeJob(typ watch.EventType, j *batchv1.Job) {
	group := j.Labels[labelJobSetName]
	if group == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.children[j.UID]
	if r == nil {
		r = &childRecord{Group: group, Role: j.Labels[labelRoleName], Name: j.Name, Index: labelInt(j.Labels, labelJobIndex),
			Attempt: labelInt(j.Labels, labelRestartAttempt), JobAttempt: max(labelInt(j.Labels, labelJobRestart), 0)}
		if typ == watch.Added {
			r.CreatedRV = parseRV(j.ResourceVersion)
		}
		h.children[j.UID] = r
	}
	rv := parseRV(j.ResourceVersion)
	if typ == watch.Deleted {
		r.GoneRV = rv
	}
	complete := isComplete(j)
	if complete && r.CompleteRV == 0 {
		r.CompleteRV = rv
	}
	if (complete || ptr.Deref(j.Status.Ready, 0) > 0 || j.Status.Succeeded > 0) && r.SatisfiedRV == 0 {
		r.SatisfiedRV = rv
	}
}

// resyncJobs takes in a fresh list of the Jobs after the watch lost its place: a
// child missing from it was deleted while the watch was away.
func (h *groupHistory) resyncJobs(jobs []batchv1.Job) {
	listed := map[types.UID]bool{}
	for i := range jobs {
		listed[jobs[i].UID] = true
		h.observeJob(watch.Modified, &jobs[i])
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for uid, r := range h.children {
		if !listed[uid] && r.GoneRV == 0 {
			r.GoneUnseen = true
		}
	}
}

func (h *groupHistory) observePod(p *corev1.Pod) {
	group := p.Labels[labelJobSetName]
	if group == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pods[group] == nil {
		h.pods[group] = map[types.UID]bool{}
	}
	h.pods[group][p.UID] = true
	if p.Status.Phase != corev1.PodFailed {
		return
	}
	for _, c := range p.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil && t.ExitCode == chaosPlainFailCode {
			if h.failures[group] == nil {
				h.failures[group] = map[failure]bool{}
			}
			h.failures[group][failure{Role: p.Labels[labelRoleName], Index: labelInt(p.Labels, labelJobIndex),
				Attempt: labelInt(p.Labels, labelRestartAttempt), JobAttempt: max(labelInt(p.Labels, labelJobRestart), 0)}] = true
		}
	}
}

// failuresOf returns the children of the group whose pods kwok failed.
func (h *groupHistory) failuresOf(group string) []failure {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []failure
	for f := range h.failures[group] {
		out = append(out, f)
	}
	return out
}

func (h *groupHistory) podCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ps := range h.pods {
		n += len(ps)
	}
	return n
}

// observeGroup records the counters of a JobSet and any that went down.
func (h *groupHistory) observeGroup(u *unstructured.Unstructured) {
	restarts, _, _ := unstructured.NestedInt64(u.Object, "status", "restarts")
	towards, _, _ := unstructured.NestedInt64(u.Object, "status", "restartsCountTowardsMax")
	now := groupCounters{Restarts: restarts, TowardsMax: towards, JobRestarts: jobRestartsOf(u)}
	_, _, finished := groupFinished(u)
	h.mu.Lock()
	defer h.mu.Unlock()
	if finished > 0 && h.finished[u.GetName()] == 0 {
		h.finished[u.GetName()] = parseRV(u.GetResourceVersion())
	}
	was, seen := h.counters[u.GetName()]
	h.counters[u.GetName()] = now
	if !seen {
		return
	}
	if now.Restarts < was.Restarts || now.TowardsMax < was.TowardsMax {
		h.backwards = append(h.backwards, fmt.Sprintf("%s: restarts %d→%d, restartsCountTowardsMax %d→%d (resourceVersion %s)",
			u.GetName(), was.Restarts, now.Restarts, was.TowardsMax, now.TowardsMax, u.GetResourceVersion()))
	}
	for role, old := range was.JobRestarts {
		cur := now.JobRestarts[role]
		for i, v := range old {
			if i >= len(cur) || cur[i] < v {
				h.backwards = append(h.backwards, fmt.Sprintf("%s: jobRestarts of %q went %v→%v (resourceVersion %s)", u.GetName(), role, old, cur, u.GetResourceVersion()))
				break
			}
		}
	}
}

// jobRestartsOf reads status.replicatedJobsStatus[].jobRestarts by role.
func jobRestartsOf(u *unstructured.Unstructured) map[string][]int64 { return perRole(u, "jobRestarts") }

// perRole reads status.replicatedJobsStatus[].FIELD, a list of counters, by role.
func perRole(u *unstructured.Unstructured, field string) map[string][]int64 {
	out := map[string][]int64{}
	roles, _, _ := unstructured.NestedSlice(u.Object, "status", "replicatedJobsStatus")
	for _, r := range roles {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		list, _ := m[field].([]any)
		for _, v := range list {
			n, _ := v.(int64)
			out[name] = append(out[name], n)
		}
	}
	return out
}

// childrenOf returns the records of the group's children.
func (h *groupHistory) childrenOf(group string) []childRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []childRecord
	for _, r := range h.children {
		if r.Group == group {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b childRecord) int { return int(a.CreatedRV) - int(b.CreatedRV) })
	return out
}

// watchGroups starts the watches of the run's child Jobs, pods and JobSets that
// feed the group history, with the chaos run's follow (resume, relist when too
// old).
func (g *groupChaos) watchGroups(ctx context.Context) error {
	all := metav1.ListOptions{}
	pods := g.cs.CoreV1().Pods(g.namespace)
	jobs := g.cs.BatchV1().Jobs(g.namespace)
	listPods := func(ctx context.Context) (string, error) {
		l, err := pods.List(ctx, all)
		if err == nil {
			for i := range l.Items {
				g.gh.observePod(&l.Items[i])
			}
		}
		return resourceVersionOf(l, err)
	}
	listJobs := func(ctx context.Context) (string, error) {
		l, err := jobs.List(ctx, all)
		if err == nil {
			g.gh.resyncJobs(l.Items)
		}
		return resourceVersionOf(l, err)
	}
	type feed struct {
		kind  string
		list  func(context.Context) (string, error)
		watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
		obs   func(watch.EventType, runtime.Object) bool
	}
	feeds := []feed{
		{"pods", listPods, pods.Watch, func(_ watch.EventType, o runtime.Object) bool {
			p, ok := o.(*corev1.Pod)
			if ok {
				g.gh.observePod(p)
			}
			return ok
		}},
		{"Jobs", listJobs, jobs.Watch, func(t watch.EventType, o runtime.Object) bool {
			j, ok := o.(*batchv1.Job)
			if ok {
				g.gh.observeJob(t, j)
			}
			return ok
		}},
	}
	for _, gvr := range g.apis() {
		r := g.jobSets(gvr)
		feeds = append(feeds, feed{"JobSets " + r.group, func(ctx context.Context) (string, error) {
			l, err := r.List(ctx, all)
			if err != nil {
				return "", err
			}
			for i := range l.Items {
				g.gh.observeGroup(&l.Items[i])
			}
			return l.GetResourceVersion(), nil
		}, r.Watch, func(_ watch.EventType, o runtime.Object) bool {
			u, ok := o.(*unstructured.Unstructured)
			if ok {
				g.gh.observeGroup(u)
			}
			return ok
		}})
	}
	for _, f := range feeds {
		rv, err := f.list(ctx)
		if err != nil {
			return fmt.Errorf("list the %s: %w", f.kind, err)
		}
		watchAll := func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = ""
			return f.watch(ctx, o)
		}
		go g.follow(ctx, f.kind, rv, watchAll, f.list, f.obs)
	}
	return nil
}

// dynamicNS is the JobSets of one API in the run's namespace.
type dynamicNS struct {
	dynamic.ResourceInterface
	group string
}

func (g *groupChaos) jobSets(gvr schema.GroupVersionResource) dynamicNS {
	return dynamicNS{g.dyn.Resource(gvr).Namespace(g.namespace), gvr.Group}
}

// apis are the APIs of the groups in the plan.
func (g *groupChaos) apis() []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	for _, gvr := range []schema.GroupVersionResource{gvrExampleJobSets, gvrUpstreamJobSets} {
		if slices.ContainsFunc(g.groups, func(cg chaosGroup) bool { return cg.gvr() == gvr }) {
			out = append(out, gvr)
		}
	}
	return out
}
