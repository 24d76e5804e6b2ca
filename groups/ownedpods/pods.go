package ownedpods

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// The environment variables every container of a role's pods gets, unless it
// declares its own.
const (
	envRole    = "JOBKIT_ROLE"
	envAttempt = "JOBKIT_RESTART_ATTEMPT"
)

// sortPods hands each pod of the owner to its role's plan when it carries the
// role's name and current attempt, and deals with every other pod of the
// owner as a stray. Pods of another controller are left out.
func (s *sync) sortPods() {
	w := s.in.Workload
	at := make(map[string]int, len(w.Roles))
	for i := range w.Roles {
		at[w.Roles[i].Name] = i
	}
	s.pods = make([][]*corev1.Pod, len(w.Roles))
	for _, p := range s.in.Pods {
		if p == nil || !s.in.Owner.IsControlledBy(p, string(w.UID)) {
			continue
		}
		name, ok := p.Labels[plaingroup.LabelRoleName]
		i, known := at[name]
		switch {
		case !ok:
			s.stray(p, fmt.Sprintf("label %s is missing", plaingroup.LabelRoleName))
			continue
		case !known:
			s.stray(p, fmt.Sprintf("label %s=%q names no role", plaingroup.LabelRoleName, name))
			continue
		}
		v := p.Labels[plaingroup.LabelRestartAttempt]
		a, err := strconv.ParseInt(v, 10, 32)
		switch {
		case err != nil || a < 0:
			s.stray(p, fmt.Sprintf("label %s=%q is not an attempt", plaingroup.LabelRestartAttempt, v))
		case int32(a) != s.status[i].Attempt:
			s.stray(p, fmt.Sprintf("label %s=%q: role %q is at attempt %d", plaingroup.LabelRestartAttempt, v, name, s.status[i].Attempt))
		default:
			s.pods[i] = append(s.pods[i], p)
		}
	}
}

// stray stops a pod that belongs to no role's current attempt without counting
// it: its finalizer goes first.
func (s *sync) stray(p *corev1.Pod, why string) {
	has := s.in.Owner.HasFinalizer(p) && !s.in.PendingFinalizerRemovals.Has(p.UID)
	reason := "stray pod: " + why
	switch {
	case p.DeletionTimestamp == nil:
		s.out.Delete = append(s.out.Delete, plan.Deletion{Pod: p, RemoveFinalizerFirst: has, Reason: reason})
	case has:
		s.out.RemoveFinalizers = append(s.out.RemoveFinalizers, plan.PodAction{Pod: p, Reason: reason})
	default:
		return // on its way out, uncounted
	}
	s.warn("pod %s/%s is a stray (%s): deleted, not counted", p.Namespace, p.Name, why)
}

// template returns a copy of role i's pod template for the given attempt: the
// group, role and attempt labels, and the role and attempt in the environment
// of every container and init container that does not declare them. Nil stays
// nil (plan.Compute reports it).
func (s *sync) template(i int, attempt int32) *corev1.PodTemplateSpec {
	r := &s.in.Workload.Roles[i]
	if r.Spec.Template == nil {
		return nil
	}
	t := r.Spec.Template.DeepCopy()
	if t.Labels == nil {
		t.Labels = make(map[string]string, 3)
	}
	a := strconv.Itoa(int(attempt))
	t.Labels[plaingroup.LabelJobSetName] = s.in.Workload.Name
	t.Labels[plaingroup.LabelRoleName] = r.Name
	t.Labels[plaingroup.LabelRestartAttempt] = a
	env := []corev1.EnvVar{{Name: envRole, Value: r.Name}, {Name: envAttempt, Value: a}}
	for k := range t.Spec.InitContainers {
		addEnv(&t.Spec.InitContainers[k], env)
	}
	for k := range t.Spec.Containers {
		addEnv(&t.Spec.Containers[k], env)
	}
	return t
}

// addEnv appends the variables of env that c does not declare. It modifies c.
func addEnv(c *corev1.Container, env []corev1.EnvVar) {
	for _, e := range env {
		declared := false
		for k := range c.Env {
			if c.Env[k].Name == e.Name {
				declared = true
				break
			}
		}
		if !declared {
			c.Env = append(c.Env, e)
		}
	}
}

// ownCreations points the controller reference of role i's new pods at the
// owner: plan names the reference after the role's Workload (<owner>-<role>),
// and the garbage collector looks an owner up by name.
func (s *sync) ownCreations(p *plan.Plan) {
	w := s.in.Workload
	for _, c := range p.Create {
		for k := range c.Pod.OwnerReferences {
			ref := &c.Pod.OwnerReferences[k]
			if ref.UID == w.UID {
				ref.Name = w.Name
			}
		}
	}
}
