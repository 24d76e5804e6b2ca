package reconciletest

import (
	"cmp"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// Task is the rig's own Job-shaped custom resource: an owner of pods the way an
// operator's own type is (a TrainingJob, a CI run), with its spec in Job terms and
// a batchv1.JobStatus as its status, as a CRD that embeds them would have. A
// Store holds Tasks (NewStore with TaskType), with the cluster's Options.Owner as
// their apiVersion and kind.
//
// The Store creates Tasks with a Job's API defaults on their spec but, as for a
// CRD, no selector and no template labels (only controller references make a pod
// a Task's); their status subresource is Store.WriteStatus (call log operation
// OpUpdateStatus), with the rules of a Job's status.
type Task struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the Task's spec in Job terms; the fields plan.Spec reads decide its
	// syncs. Set ManagedBy to the name of the Reconciler that syncs it.
	Spec batchv1.JobSpec `json:"spec,omitempty"`
	// Status is written by the controller through the Store's WriteStatus.
	Status batchv1.JobStatus `json:"status,omitempty"`
}

var _ runtime.Object = (*Task)(nil)

// DeepCopyInto copies t into out.
func (t *Task) DeepCopyInto(out *Task) {
	*out = *t
	out.TypeMeta = t.TypeMeta
	t.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	t.Spec.DeepCopyInto(&out.Spec)
	t.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of t, or nil.
func (t *Task) DeepCopy() *Task {
	if t == nil {
		return nil
	}
	out := new(Task)
	t.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (t *Task) DeepCopyObject() runtime.Object { return t.DeepCopy() }

// Workload presents t as a plan.Workload: what a controller of the custom resource
// converts its object into for Reconciler.Sync. The Workload points into t: do not
// modify t while it is in use.
func (t *Task) Workload() *plan.Workload {
	return &plan.Workload{
		Namespace:       t.Namespace,
		Name:            t.Name,
		UID:             t.UID,
		Deleting:        t.DeletionTimestamp != nil,
		Spec:            plan.JobSpec(&t.Spec),
		Status:          t.Status,
		ResourceVersion: t.ResourceVersion,
		Object:          t,
	}
}

// TaskType is the reconcile.Type of Tasks: every Task is Job-shaped
// (Task.Workload; the status is the Task's own). NewStore(opts, TaskType) gives
// a Cluster of Tasks, with a Job's API defaults on their specs.
var TaskType = reconcile.Type[*Task]{
	New:       func() *Task { return &Task{} },
	Workload:  func(t *Task) (*plan.Workload, error) { return t.Workload(), nil },
	SetStatus: func(t *Task, st batchv1.JobStatus) { t.Status = st },
	ManagedBy: func(t *Task) *string { return t.Spec.ManagedBy },
}

// sortByName sorts objects by namespace and name.
func sortByName[T metav1.Object](objs []T) {
	slices.SortFunc(objs, func(a, b T) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
}
