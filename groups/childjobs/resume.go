package childjobs

import (
	"maps"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// resumed returns the Job a Resume action writes for child job of the role
// at index role: job itself when the role's pod template adds nothing to the
// child's, else a copy whose pod template has the role's labels,
// annotations and nodeSelector laid over the child's (the role's value wins
// a key both hold) and the role's tolerations and scheduling gates that the
// child lacks appended to the child's. These are the fields a queue (such as
// Kueue) changes in a suspended group's templates to place it, and the ones
// the API server lets a suspended Job that has not started change. The
// child's own keys and items stay: other controllers may have added them.
func resumed(job *batchv1.Job, tmpl *corev1.PodTemplateSpec) *batchv1.Job {
	cur := &job.Spec.Template
	if covers(cur.Labels, tmpl.Labels) && covers(cur.Annotations, tmpl.Annotations) && covers(cur.Spec.NodeSelector, tmpl.Spec.NodeSelector) &&
		containsAll(cur.Spec.Tolerations, tmpl.Spec.Tolerations, sameToleration) && containsAll(cur.Spec.SchedulingGates, tmpl.Spec.SchedulingGates, sameGate) {
		return job
	}
	out := job.DeepCopy()
	t := &out.Spec.Template
	t.Labels = overlay(t.Labels, tmpl.Labels)
	t.Annotations = overlay(t.Annotations, tmpl.Annotations)
	t.Spec.NodeSelector = overlay(t.Spec.NodeSelector, tmpl.Spec.NodeSelector)
	t.Spec.Tolerations = union(t.Spec.Tolerations, tmpl.Spec.Tolerations, sameToleration)
	t.Spec.SchedulingGates = union(t.Spec.SchedulingGates, tmpl.Spec.SchedulingGates, sameGate)
	return out
}

// covers reports whether every key of add is in m with the same value.
func covers(m, add map[string]string) bool {
	for k, v := range add {
		if w, ok := m[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// overlay returns m with add's keys set (m is a copy the caller owns).
func overlay(m, add map[string]string) map[string]string {
	if len(add) == 0 {
		return m
	}
	if m == nil {
		m = make(map[string]string, len(add))
	}
	maps.Copy(m, add)
	return m
}

// sameToleration reports whether a and b are the same toleration, their
// tolerationSeconds compared by value.
func sameToleration(a, b corev1.Toleration) bool {
	return a.Key == b.Key && a.Operator == b.Operator && a.Value == b.Value && a.Effect == b.Effect &&
		(a.TolerationSeconds == nil) == (b.TolerationSeconds == nil) &&
		(a.TolerationSeconds == nil || *a.TolerationSeconds == *b.TolerationSeconds)
}

// sameGate reports whether a and b are the same scheduling gate.
func sameGate(a, b corev1.PodSchedulingGate) bool { return a == b }

// containsAll reports whether every item of add is in s (eq tells items
// apart).
func containsAll[T any](s, add []T, eq func(a, b T) bool) bool {
	for _, x := range add {
		if !slices.ContainsFunc(s, func(y T) bool { return eq(x, y) }) {
			return false
		}
	}
	return true
}

// union returns s with the items of add that it lacks appended, in add's
// order (s is a copy the caller owns).
func union[T any](s, add []T, eq func(a, b T) bool) []T {
	for _, x := range add {
		if !slices.ContainsFunc(s, func(y T) bool { return eq(x, y) }) {
			s = append(s, x)
		}
	}
	return s
}

// resumed returns the Job of the Resume action of s.jobs[i]: the child with
// its role's pod template changes (resumed). A child of no role of the spec
// is resumed as it is.
func (s *sync) resumed(i int) *batchv1.Job {
	for r := range s.spec.Roles {
		if s.spec.Roles[r].Name == s.facts[i].Role {
			return resumed(s.jobs[i], &s.in.Templates[r].Spec.Template)
		}
	}
	return s.jobs[i]
}
