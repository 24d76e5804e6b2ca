package ownedpods_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

var (
	t0   = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	kind = owner.Kind{Group: "example.com", Version: "v1", Kind: "TrainingJob",
		Finalizer: "example.com/tracking", KeyPrefix: "example.com/"}
)

const (
	ns         = "ns"
	ownerName  = "train"
	ownerUID   = types.UID("owner-uid")
	controller = "example.com/trainingjob-controller"
)

func template() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
	}}
}

// launcherRole is one launcher pod.
func launcherRole() ownedpods.Role {
	return ownedpods.Role{Name: "launcher", Spec: plan.Spec{Template: template(), BackoffLimit: ptr.To[int32](0)}}
}

// workerRole is n Indexed workers, each failing its index on its first failure.
func workerRole(n int32) ownedpods.Role {
	return ownedpods.Role{Name: "worker", Spec: plan.Spec{
		Template: template(), Completions: ptr.To(n), Parallelism: ptr.To(n),
		CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimitPerIndex: ptr.To[int32](0), MaxFailedIndexes: ptr.To[int32](0),
	}}
}

// trainingJob is workers then a launcher that waits for them to be ready; the
// group succeeds when the launcher does and restarts up to maxRestarts times.
func trainingJob(workers, maxRestarts int32) *ownedpods.Workload {
	l := launcherRole()
	l.DependsOn = []plaingroup.Dependency{{Name: "worker", Status: plaingroup.DependsOnReady}}
	return &ownedpods.Workload{
		Namespace: ns, Name: ownerName, UID: ownerUID,
		Roles:         []ownedpods.Role{workerRole(workers), l},
		SuccessPolicy: &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{"launcher"}},
		FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: maxRestarts},
	}
}

// cluster is an owner and its pods as a store holds them, with a kubelet the
// test drives by hand and an executor of plans.
type cluster struct {
	t    testing.TB
	w    *ownedpods.Workload
	pods map[string]*corev1.Pod
	uid  int
	now  time.Time
	// counted is every pod UID a role status counted, per role and attempt.
	syncs int
	last  *ownedpods.Plan
	// linger keeps deleted pods running until the kubelet stops them
	// (terminate), as a real node does.
	linger bool
}

func newCluster(t testing.TB, w *ownedpods.Workload) *cluster {
	return &cluster{t: t, w: w, pods: map[string]*corev1.Pod{}, now: t0}
}

func (c *cluster) input() ownedpods.Input {
	names := make([]string, 0, len(c.pods))
	for n := range c.pods {
		names = append(names, n)
	}
	slices.Sort(names)
	pods := make([]*corev1.Pod, len(names))
	for i, n := range names {
		pods[i] = c.pods[n].DeepCopy()
	}
	return ownedpods.Input{Workload: c.w, Pods: pods, ControllerName: controller, ExpectationsSatisfied: true, Now: c.now, Owner: kind}
}

// compute runs one Compute over what the store holds.
func (c *cluster) compute() *ownedpods.Plan {
	c.t.Helper()
	p, err := ownedpods.Compute(c.input())
	if err != nil {
		c.t.Fatalf("Compute: %v", err)
	}
	c.syncs++
	c.last = p
	return p
}

// sync computes and executes a whole plan.
func (c *cluster) sync() *ownedpods.Plan {
	c.t.Helper()
	p := c.compute()
	c.applyStatus(p)
	for _, a := range p.RemoveFinalizers {
		c.removeFinalizer(a.Pod.Name)
	}
	for _, d := range p.Delete {
		c.deletePod(d)
	}
	for _, cr := range p.Create {
		c.create(cr.Pod)
	}
	c.now = c.now.Add(time.Second)
	return p
}

// syncUntil syncs until the plan asks for nothing and the status is written,
// at most n times.
func (c *cluster) syncUntil(n int) *ownedpods.Plan {
	c.t.Helper()
	var p *ownedpods.Plan
	for range n {
		p = c.sync()
		if p.Skip != "" || !p.StatusChanged && len(p.RemoveFinalizers)+len(p.Delete)+len(p.Create) == 0 {
			return p
		}
	}
	c.t.Fatalf("no quiet sync after %d syncs; last plan: %+v", n, summary(p))
	return p
}

func summary(p *ownedpods.Plan) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("skip=%q changed=%v remove=%d delete=%d create=%d warnings=%q", p.Skip, p.StatusChanged,
		len(p.RemoveFinalizers), len(p.Delete), len(p.Create), p.Warnings)
}

func (c *cluster) applyStatus(p *ownedpods.Plan) {
	if p.Skip == "" && p.StatusChanged {
		c.w.Status = *deepCopyStatus(&p.Status)
	}
}

func deepCopyStatus(s *ownedpods.Status) *ownedpods.Status {
	out := *s
	out.Conditions = nil
	for _, c := range s.Conditions {
		out.Conditions = append(out.Conditions, *c.DeepCopy())
	}
	out.Roles = nil
	for _, r := range s.Roles {
		r.Job = *r.Job.DeepCopy()
		out.Roles = append(out.Roles, r)
	}
	return &out
}

func (c *cluster) removeFinalizer(name string) {
	p, ok := c.pods[name]
	if !ok {
		return
	}
	p.Finalizers = slices.DeleteFunc(p.Finalizers, func(f string) bool { return f == kind.Finalizer })
	terminal := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	if p.DeletionTimestamp != nil && len(p.Finalizers) == 0 && (terminal || !c.linger) {
		delete(c.pods, name)
	}
}

// deletePod deletes as the API server and a kubelet do: a pod with a finalizer
// stays, terminated (Failed when it was running), until the finalizer goes.
func (c *cluster) deletePod(d plan.Deletion) {
	if d.RemoveFinalizerFirst {
		c.removeFinalizer(d.Pod.Name)
	}
	p, ok := c.pods[d.Pod.Name]
	if !ok {
		return
	}
	terminal := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	if len(p.Finalizers) == 0 && (terminal || !c.linger) {
		delete(c.pods, p.Name)
		return
	}
	if p.DeletionTimestamp == nil {
		p.DeletionTimestamp = ptr.To(metav1.NewTime(c.now))
	}
	if !terminal && !c.linger {
		p.Status.Phase = corev1.PodFailed
	}
}

// terminate is the kubelet stopping a pod being deleted.
func (c *cluster) terminate(p *corev1.Pod) {
	if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions = nil
	}
	if len(p.Finalizers) == 0 {
		delete(c.pods, p.Name)
	}
}

func (c *cluster) create(p *corev1.Pod) {
	p = p.DeepCopy()
	if p.Name == "" {
		c.uid++
		p.Name = fmt.Sprintf("%s%05d", p.GenerateName, c.uid)
	}
	if _, taken := c.pods[p.Name]; taken {
		return
	}
	c.uid++
	p.UID = types.UID(fmt.Sprintf("uid-%d", c.uid))
	p.CreationTimestamp = metav1.NewTime(c.now)
	p.Status.Phase = corev1.PodPending
	c.pods[p.Name] = p
}

// role lists the live pods of a role, by name.
func (c *cluster) role(name string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.pods {
		if p.Labels[plaingroup.LabelRoleName] == name {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// The kubelet.
func (c *cluster) run(p *corev1.Pod) {
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
}

func (c *cluster) finish(p *corev1.Pod, exitCode int32) {
	p.Status.Phase = corev1.PodSucceeded
	if exitCode != 0 {
		p.Status.Phase = corev1.PodFailed
	}
	p.Status.Conditions = nil
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, FinishedAt: metav1.NewTime(c.now)}}}}
}

func (c *cluster) runAll(role string) {
	for _, p := range c.role(role) {
		if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil {
			c.run(p)
		}
	}
}

func (c *cluster) roleStatus(name string) ownedpods.RoleStatus {
	for _, r := range c.w.Status.Roles {
		if r.Name == name {
			return r
		}
	}
	c.t.Fatalf("no status entry for role %q: %+v", name, c.w.Status.Roles)
	return ownedpods.RoleStatus{}
}

func condition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func attemptOf(p *corev1.Pod) string { return p.Labels[plaingroup.LabelRestartAttempt] }

func shuffled[T any](r *rand.Rand, s []T) []T {
	s = slices.Clone(s)
	r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s
}

var _ = sets.New[string]

func sortStrings(s []string) []string {
	slices.Sort(s)
	return s
}
