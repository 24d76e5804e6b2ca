package childjobs_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

var (
	t0       = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	jobSetGV = schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}
)

// template returns a Job template of parallelism = completions = pods.
func template(pods int32) batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(pods), Completions: ptr.To(pods),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		},
	}
}

// leaderWorkers is a group "js" of a leader (one child of one pod) and workers
// (n children of two pods each).
func leaderWorkers(n int32) *childjobs.Input {
	return &childjobs.Input{
		Name: "js", Namespace: "ns", UID: "js-uid", Generation: 1, Owner: jobSetGV,
		Spec: plaingroup.Spec{Roles: []plaingroup.Role{
			{Name: "leader", Replicas: 1},
			{Name: "workers", Replicas: n},
		}},
		Templates: []batchv1.JobTemplateSpec{template(1), template(2)},
		Now:       t0,
	}
}

// world holds a group's Input across syncs and applies plans to it, as a
// controller and the Job controller would.
type world struct {
	t  *testing.T
	in *childjobs.Input
}

// sync computes a plan at now and applies it: status written, deleted Jobs
// marked as being deleted, suspensions set, children created, the Service made.
func (w *world) sync(now time.Time) childjobs.Plan {
	w.t.Helper()
	w.in.Now = now
	p, err := childjobs.Compute(w.in)
	require.NoError(w.t, err)
	if p.StatusChanged {
		w.in.Status = p.Status
	}
	for _, d := range p.Delete {
		d.Job.DeletionTimestamp = &metav1.Time{Time: now}
	}
	for _, a := range p.Suspend {
		a.Job.Spec.Suspend = ptr.To(true)
	}
	for _, a := range p.Resume {
		// A Resume item may be a copy carrying pod template changes: it
		// replaces the child, as the write would.
		j := a.Job.DeepCopy()
		j.Spec.Suspend = ptr.To(false)
		i := slices.IndexFunc(w.in.Children, func(c *batchv1.Job) bool { return c.Name == j.Name })
		w.in.Children[i] = j
	}
	w.in.Children = append(w.in.Children, jobsOf(p.Create)...)
	if p.Service != nil {
		w.in.ServiceExists = true
	}
	return p
}

// gone removes the Jobs being deleted, as the garbage collector does.
func (w *world) gone() {
	w.in.Children = slices.DeleteFunc(w.in.Children, func(j *batchv1.Job) bool { return j.DeletionTimestamp != nil })
}

func (w *world) job(name string) *batchv1.Job {
	w.t.Helper()
	for _, j := range w.in.Children {
		if j.Name == name {
			return j
		}
	}
	w.t.Fatalf("no job %s", name)
	return nil
}

// ready makes every pod of the child ready.
func (w *world) ready(name string) {
	j := w.job(name)
	j.Status.Active = *j.Spec.Parallelism
	j.Status.Ready = ptr.To(*j.Spec.Parallelism)
}

// finish gives the child a terminal condition at time at.
func (w *world) finish(name string, t batchv1.JobConditionType, reason, msg string, at time.Time) {
	j := w.job(name)
	j.Status.Active, j.Status.Ready = 0, ptr.To[int32](0)
	if t == batchv1.JobComplete {
		j.Status.Succeeded = *j.Spec.Parallelism
	} else {
		j.Status.Failed = 1
	}
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{
		Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(at),
	})
}

func jobsOf(as []childjobs.JobAction) []*batchv1.Job {
	out := make([]*batchv1.Job, len(as))
	for i, a := range as {
		out[i] = a.Job
	}
	return out
}

func names(jobs []*batchv1.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Name
	}
	return out
}

func deleted(p childjobs.Plan) []string {
	out := make([]string, len(p.Delete))
	for i, d := range p.Delete {
		out[i] = d.Job.Name
	}
	return out
}

func condition(st childjobs.Status, t string) *metav1.Condition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

func eventReasons(p childjobs.Plan) []string {
	var out []string
	for _, e := range p.Events {
		out = append(out, e.Type+"/"+e.Reason)
	}
	return out
}
