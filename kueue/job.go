package kueue

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/jobkit/jobkit/groups"
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
)

// view is one reading of the owner: a Job-shaped one (w) or one of roles (g).
type view struct {
	w *plan.Workload
	g *ownedpods.Workload
}

func (j *Job[T]) read() (view, error) {
	w, g, in, err := j.typ.Shape(j.obj)
	if err != nil {
		return view{}, err
	}
	if in != nil {
		return view{}, fmt.Errorf("%w: %s %s/%s is a group of child Jobs: only Job-shaped owners and owners of roles are queued yet",
			ErrUnsupported, j.gvk.Kind, j.obj.GetNamespace(), j.obj.GetName())
	}
	return view{w: w, g: g}, nil
}

// part is one pod set of a view: its name, its spec in Job terms and the
// status of its pods.
type part struct {
	name   kueueapi.PodSetReference
	spec   *plan.Spec
	status *batchv1.JobStatus
}

func (v view) parts() []part {
	if v.w != nil {
		return []part{{name: kueueapi.DefaultPodSetName, spec: &v.w.Spec, status: &v.w.Status}}
	}
	out := make([]part, len(v.g.Roles))
	for i := range v.g.Roles {
		r := &v.g.Roles[i]
		out[i] = part{name: kueueapi.PodSetReference(r.Name), spec: &r.Spec, status: &batchv1.JobStatus{}}
		if i < len(v.g.Status.Roles) && v.g.Status.Roles[i].Name == r.Name {
			out[i].status = &v.g.Status.Roles[i].Job
		}
	}
	return out
}

// count is the pods p runs at once when nothing has succeeded and it is not
// suspended.
func (p part) count() int32 { return p.wantActive(0) }

func (p part) wantActive(succeeded int32) int32 {
	s := *p.spec
	s.Suspend = nil
	return s.WantActive(succeeded, 0)
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
	}
	return v.g.Suspend
}

// Suspend sets the owner's spec.suspend through Type.SetSuspend; jobkit's
// controller then stops its pods, counting them as a suspension does.
func (j *Job[T]) Suspend() { j.typ.SetSuspend(j.obj, true) }

// templates returns the pod templates of the owner's pod sets, checked to
// point into the owner.
func (j *Job[T]) templates() ([]*corev1.PodTemplateSpec, error) {
	first, err := j.read()
	if err != nil {
		return nil, err
	}
	again, err := j.read()
	if err != nil {
		return nil, err
	}
	a, b := first.parts(), again.parts()
	out := make([]*corev1.PodTemplateSpec, len(a))
	for i := range a {
		out[i] = a[i].spec.Template
		if out[i] == nil || out[i] != b[i].spec.Template {
			return nil, fmt.Errorf("kueue: %s %s/%s: the template of pod set %q is nil or a copy: the Type's conversion must point it into the owner so that the flavour's node selectors reach the pods",
				j.gvk.Kind, j.obj.GetNamespace(), j.obj.GetName(), a[i].name)
		}
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
// Failed of an owner of roles, with its message.
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
	c := groups.Finished(v.g.Status.Conditions)
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
		if p.spec.Template == nil {
			return nil, fmt.Errorf("kueue: %s %s/%s: pod set %q: spec.template: required", j.gvk.Kind, j.obj.GetNamespace(), j.obj.GetName(), p.name)
		}
		out[i] = kueueapi.PodSet{Name: p.name, Count: p.count(), Template: *p.spec.Template.DeepCopy()}
	}
	return out, nil
}

// IsActive reports whether any pod of the owner is active.
func (j *Job[T]) IsActive() bool {
	v, err := j.read()
	if err != nil {
		return false
	}
	for _, p := range v.parts() {
		if p.status.Active > 0 {
			return true
		}
	}
	return false
}

// PodsReady reports whether every pod set has as many pods ready or succeeded
// as its count: the start Kueue's waitForPodsReady waits for.
func (j *Job[T]) PodsReady(context.Context) bool {
	v, err := j.read()
	if err != nil {
		return false
	}
	for _, p := range v.parts() {
		done := p.status.Succeeded + ptr.Deref(p.status.Ready, 0)
		if p.status.UncountedTerminatedPods != nil {
			done += int32(len(p.status.UncountedTerminatedPods.Succeeded))
		}
		if done < p.count() {
			return false
		}
	}
	return true
}

// ReclaimablePods returns, per pod set, the pods no longer needed: as its
// pods succeed, fewer than its count remain to run (completions minus
// succeeded below parallelism), and Kueue gives the difference back to the
// queue.
func (j *Job[T]) ReclaimablePods(context.Context) ([]kueueapi.ReclaimablePod, error) {
	v, err := j.read()
	if err != nil {
		return nil, err
	}
	var out []kueueapi.ReclaimablePod
	for _, p := range v.parts() {
		if p.status.Succeeded == 0 {
			continue
		}
		if n := p.count() - p.wantActive(p.status.Succeeded); n > 0 {
			out = append(out, kueueapi.ReclaimablePod{Name: p.name, Count: n})
		}
	}
	return out, nil
}
