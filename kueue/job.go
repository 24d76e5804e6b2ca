package kueue

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/jobstatus"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// ErrUnsupported is wrapped by the errors of an owner whose shape the
// integration cannot queue yet: a group of child Jobs.
var ErrUnsupported = errors.New("kueue: unsupported owner shape")

// Job is one owner T as Kueue's job framework sees it (a
// jobframework.GenericJob, with reclaimable pods), read through the owner's
// reconcile.Type on every call: Kueue reads the owner into Object and then asks
// the questions, so nothing is cached between calls. Job-shaped owners are one
// pod set, named "main" as Kueue names a batch/v1 Job's; owners of roles are one
// pod set per role, named after the role, in the roles' order. A pod set's
// count is the pods the owner (or role) runs at once when nothing has succeeded
// yet (plan.Spec.WantActive of its spec unsuspended: parallelism, at most
// completions), its template the owner's.
//
// The writes go into Object: the suspension through Type.SetSuspend, the
// flavour's node selectors, tolerations, labels and annotations into the pod
// templates the conversions point to (which must point into the owner, as
// plan.JobWorkload's does; RunWithPodSetsInfo says so when they do not). A Job
// is not safe for concurrent use; Kueue uses one per reconcile.
type Job[T client.Object] struct {
	typ *reconcile.Type[T]
	gvk schema.GroupVersionKind
	obj T
	// controller is the name of jobkit's controller for the kind
	// (Options.ControllerName): a managedBy naming it counts as unset.
	controller string
}

// NewJob returns a Job over obj, an owner of kind gvk described by typ (whose
// SetSuspend must be set to stop or start it). obj is read and, by Suspend,
// RunWithPodSetsInfo and RestorePodSetsInfo, modified.
func NewJob[T client.Object](typ *reconcile.Type[T], gvk schema.GroupVersionKind, obj T) *Job[T] {
	return &Job[T]{typ: typ, gvk: gvk, obj: obj}
}

var (
	_ jobframework.GenericJob             = (*Job[*batchv1.Job])(nil)
	_ jobframework.JobWithReclaimablePods = (*Job[*batchv1.Job])(nil)
	_ jobframework.JobWithManagedBy       = (*Job[*batchv1.Job])(nil)
)

// view is one reading of the owner: a Job-shaped one (w), one of roles (g) or
// a group of child Jobs (c).
type view struct {
	w *plan.Workload
	g *ownedpods.Workload
	c *childjobs.Input
}

func (j *Job[T]) read() (view, error) {
	w, g, c, err := j.typ.Shape(j.obj)
	if err != nil {
		return view{}, err
	}
	return view{w: w, g: g, c: c}, nil
}

// part is one pod set of a view as Kueue counts it: its name, its template
// (for a group of child Jobs, a copy), the pods it runs at once when nothing
// has succeeded and it is not suspended, and from its status: whether a pod
// is active, the pods ready or succeeded, and the pods no longer needed.
type part struct {
	name        kueueapi.PodSetReference
	template    *corev1.PodTemplateSpec
	count       int32
	active      bool
	started     int32
	reclaimable int32
}

func (v view) parts() []part {
	switch {
	case v.w != nil:
		return []part{jobPart(kueueapi.DefaultPodSetName, &v.w.Spec, &v.w.Status)}
	case v.g != nil:
		out := make([]part, len(v.g.Roles))
		for i := range v.g.Roles {
			r := &v.g.Roles[i]
			st := &batchv1.JobStatus{}
			if i < len(v.g.Status.Roles) && v.g.Status.Roles[i].Name == r.Name {
				st = &v.g.Status.Roles[i].Job
			}
			out[i] = jobPart(kueueapi.PodSetReference(r.Name), &r.Spec, st)
		}
		return out
	}
	return childParts(v.c)
}

// jobPart is the pod set of pods owned directly under spec, with status.
func jobPart(name kueueapi.PodSetReference, spec *plan.Spec, status *batchv1.JobStatus) part {
	want := func(succeeded int32) int32 {
		s := *spec
		s.Suspend = nil
		return s.WantActive(succeeded, 0)
	}
	p := part{name: name, template: spec.Template, count: want(0), active: status.Active > 0,
		started: status.Succeeded + ptr.Deref(status.Ready, 0)}
	if u := status.UncountedTerminatedPods; u != nil {
		p.started += int32(len(u.Succeeded))
	}
	if status.Succeeded > 0 {
		p.reclaimable = max(p.count-want(status.Succeeded), 0)
	}
	return p
}

// childParts are the pod sets of a group of child Jobs, one per role: a role
// runs replicas children of min(parallelism, completions) pods each; its
// children's status counts Jobs, each ready or succeeded child counting its
// pods as started, each succeeded one its pods as reclaimable.
func childParts(in *childjobs.Input) []part {
	out := make([]part, len(in.Spec.Roles))
	for i := range in.Spec.Roles {
		role := in.Spec.Roles[i]
		var tmpl *corev1.PodTemplateSpec
		if i < len(in.Templates) {
			t := &in.Templates[i].Spec
			tmpl = &t.Template
			role.Parallelism, role.Completions = ptr.Deref(t.Parallelism, 1), t.Completions
		}
		per := max(role.ExpectedPods(), 0)
		p := part{name: kueueapi.PodSetReference(role.Name), template: tmpl, count: max(role.Replicas, 0) * per}
		for k := range in.Status.ReplicatedJobs {
			if st := &in.Status.ReplicatedJobs[k]; st.Name == role.Name {
				p.active = st.Active > 0
				p.started = (st.Ready + st.Succeeded) * per
				p.reclaimable = min(st.Succeeded*per, p.count)
			}
		}
		out[i] = p
	}
	return out
}

// Object returns the owner.
func (j *Job[T]) Object() client.Object { return j.obj }

// GVK returns the owner's kind.
func (j *Job[T]) GVK() schema.GroupVersionKind { return j.gvk }

// IsSuspended reports the owner's spec.suspend; an owner the conversions
// refuse reads as not suspended (Kueue then stops it).
func (j *Job[T]) IsSuspended() bool {
	v, err := j.read()
	switch {
	case err != nil:
		return false
	case v.w != nil:
		return ptr.Deref(v.w.Spec.Suspend, false)
	case v.g != nil:
		return v.g.Suspend
	}
	return v.c.Suspend
}

// Suspend sets the owner's spec.suspend through Type.SetSuspend; jobkit's
// controller then stops its pods, counting them as a suspension does.
func (j *Job[T]) Suspend() { j.typ.SetSuspend(j.obj, true) }

// templates returns the pod templates of the owner's pod sets, checked to
// point into the owner: those the conversions point to, or for a group of
// child Jobs those of Type.ChildJobTemplates.
func (j *Job[T]) templates() ([]*corev1.PodTemplateSpec, error) {
	first, err := j.read()
	if err != nil {
		return nil, err
	}
	a := first.parts()
	var b []*corev1.PodTemplateSpec
	if first.c != nil {
		b, err = j.childTemplates(len(a))
	} else {
		var again view
		again, err = j.read()
		for _, p := range again.parts() {
			b = append(b, p.template)
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.PodTemplateSpec, len(a))
	for i := range a {
		out[i] = b[i]
		if first.c == nil && (out[i] == nil || out[i] != a[i].template) {
			return nil, fmt.Errorf("kueue: %s %s/%s: the template of pod set %q is nil or a copy: the Type's conversion must point it into the owner so that the flavour's node selectors reach the pods",
				j.gvk.Kind, j.obj.GetNamespace(), j.obj.GetName(), a[i].name)
		}
	}
	return out, nil
}

// childTemplates returns the pod templates of a group of n roles through
// Type.ChildJobTemplates, twice to check they point into the owner.
func (j *Job[T]) childTemplates(n int) ([]*corev1.PodTemplateSpec, error) {
	if j.typ.ChildJobTemplates == nil {
		return nil, fmt.Errorf("%w: %s %s/%s is a group of child Jobs and Type.ChildJobTemplates is not set: the flavour has no template to go into",
			ErrUnsupported, j.gvk.Kind, j.obj.GetNamespace(), j.obj.GetName())
	}
	a, b := j.typ.ChildJobTemplates(j.obj), j.typ.ChildJobTemplates(j.obj)
	if len(a) != n || len(b) != n {
		return nil, fmt.Errorf("kueue: %s %s/%s: Type.ChildJobTemplates returned %d templates, the group has %d roles",
			j.gvk.Kind, j.obj.GetNamespace(), j.obj.GetName(), len(a), n)
	}
	out := make([]*corev1.PodTemplateSpec, n)
	for i := range a {
		if a[i] == nil || a[i] != b[i] {
			return nil, fmt.Errorf("kueue: %s %s/%s: Type.ChildJobTemplates()[%d] is nil or a copy: it must point into the owner so that the flavour's node selectors reach the pods",
				j.gvk.Kind, j.obj.GetNamespace(), j.obj.GetName(), i)
		}
		out[i] = &a[i].Spec.Template
	}
	return out, nil
}

// RunWithPodSetsInfo unsuspends the owner and merges each admitted pod set's
// node selector, tolerations, labels, annotations and scheduling gates into
// its template. A conflict (a node selector key the template sets to another
// value) is Kueue's error, and nothing is unsuspended.
func (j *Job[T]) RunWithPodSetsInfo(_ context.Context, infos []podset.PodSetInfo) error {
	tmpls, err := j.templates()
	if err != nil {
		return err
	}
	if len(infos) != len(tmpls) {
		return podset.BadPodSetsInfoLenError(len(tmpls), len(infos))
	}
	for i, t := range tmpls {
		if err := podset.Merge(&t.ObjectMeta, &t.Spec, infos[i]); err != nil {
			return err
		}
	}
	j.typ.SetSuspend(j.obj, false)
	return nil
}

// RestorePodSetsInfo puts back the templates' node selectors, tolerations,
// labels, annotations and scheduling gates as they were before admission, and
// reports whether any changed.
func (j *Job[T]) RestorePodSetsInfo(infos []podset.PodSetInfo) bool {
	tmpls, err := j.templates()
	if err != nil || len(infos) != len(tmpls) {
		return false
	}
	changed := false
	for i, t := range tmpls {
		changed = podset.RestorePodSpec(&t.ObjectMeta, &t.Spec, infos[i]) || changed
	}
	return changed
}

// Finished reports whether the owner has finished and how: the condition
// Complete or Failed of a Job-shaped owner, the group condition Completed or
// Failed of an owner of roles or a group of child Jobs, with its message.
func (j *Job[T]) Finished(context.Context) (message string, success, finished bool) {
	v, err := j.read()
	if err != nil {
		return "", true, false
	}
	if v.w != nil {
		typ, ok := jobstatus.Finished(&v.w.Status)
		if !ok {
			return "", true, false
		}
		for _, c := range v.w.Status.Conditions {
			if c.Type == typ {
				message = c.Message
			}
		}
		return message, typ != batchv1.JobFailed, true
	}
	var conds []metav1.Condition
	if v.g != nil {
		conds = v.g.Status.Conditions
	} else {
		conds = v.c.Status.Conditions
	}
	c := groups.Finished(conds)
	if c == nil {
		return "", true, false
	}
	return c.Message, c.Type != plaingroup.ConditionFailed, true
}

// PodSets returns the owner's pod sets: their names, counts and templates.
func (j *Job[T]) PodSets(context.Context) ([]kueueapi.PodSet, error) {
	v, err := j.read()
	if err != nil {
		return nil, err
	}
	parts := v.parts()
	out := make([]kueueapi.PodSet, len(parts))
	for i, p := range parts {
		if p.template == nil {
			return nil, fmt.Errorf("kueue: %s %s/%s: pod set %q: spec.template: required", j.gvk.Kind, j.obj.GetNamespace(), j.obj.GetName(), p.name)
		}
		out[i] = kueueapi.PodSet{Name: p.name, Count: p.count, Template: *p.template.DeepCopy()}
	}
	return out, nil
}

// IsActive reports whether any pod of the owner (of a group: any child Job)
// is active.
func (j *Job[T]) IsActive() bool {
	v, err := j.read()
	if err != nil {
		return false
	}
	for _, p := range v.parts() {
		if p.active {
			return true
		}
	}
	return false
}

// PodsReady reports whether every pod set has as many pods ready or succeeded
// as its count (of a group: every role's children ready or succeeded): the
// start Kueue's waitForPodsReady waits for.
func (j *Job[T]) PodsReady(context.Context) bool {
	v, err := j.read()
	if err != nil {
		return false
	}
	for _, p := range v.parts() {
		if p.started < p.count {
			return false
		}
	}
	return true
}

// ReclaimablePods returns, per pod set, the pods no longer needed, which
// Kueue gives back to the queue: as the pods of a Job-shaped owner or role
// succeed, fewer than its count remain to run (completions minus succeeded
// below parallelism); each succeeded child Job of a group's role frees its
// pods.
func (j *Job[T]) ReclaimablePods(context.Context) ([]kueueapi.ReclaimablePod, error) {
	v, err := j.read()
	if err != nil {
		return nil, err
	}
	var out []kueueapi.ReclaimablePod
	for _, p := range v.parts() {
		if p.reclaimable > 0 {
			out = append(out, kueueapi.ReclaimablePod{Name: p.name, Count: p.reclaimable})
		}
	}
	return out, nil
}
