package reconciletest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

// Task is the custom resource of a Cluster whose Options.Owner is not a batch/v1
// Job: an owner of pods the way an operator's own type is (a TrainingJob, a CI run),
// with its spec in Job terms and a batchv1.JobStatus as its status, as a CRD that
// embeds them would have. Its apiVersion and kind are the cluster's owner kind.
//
// The Cluster stores, versions, watches and deletes Tasks as it does Jobs, with
// these differences, which are those of a CRD: no selector and no template labels
// are generated (only controller references make a pod a Task's), and the status
// subresource is UpdateTaskStatus (call log operation OpUpdateStatus).
type Task struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the Task's spec in Job terms; the fields plan.Spec reads decide its
	// syncs. Set ManagedBy to the name of the Reconciler that syncs it.
	Spec batchv1.JobSpec `json:"spec,omitempty"`
	// Status is written by the controller through UpdateTaskStatus.
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

// taskOwner returns what the orphan decision and Reconciler.ObservePodEvent need of
// t, an owner of kind, as production reads it (plan.Workload.OrphanOwner: an
// unset managedBy is any controller's of the kind), or nil for a nil t.
func taskOwner(t *Task, kind owner.Kind) *finalizers.OrphanOwner {
	if t == nil {
		return nil
	}
	return t.Workload().OrphanOwner(kind)
}

// taskAsJob presents t as a Job sharing its spec and status, for the rules written
// for Jobs (status validation, the orphan facts). It does not copy.
func taskAsJob(t *Task) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: t.ObjectMeta, Spec: t.Spec, Status: t.Status}
}

// taskResource and taskGroupKind name the cluster's Tasks in API errors.
func (c *Cluster) taskResource() schema.GroupResource {
	return schema.GroupResource{Group: c.owner.Group, Resource: strings.ToLower(c.owner.Kind) + "s"}
}

func (c *Cluster) taskGroupKind() schema.GroupKind {
	return schema.GroupKind{Group: c.owner.Group, Kind: c.owner.Kind}
}

// errNoTasks is CreateTask's error on a cluster whose owner kind is batch/v1 Job,
// or whose owners live in the test's own store (Options.Owners).
var errNoTasks = fmt.Errorf("reconciletest: the cluster holds no Tasks: set Options.Owner to a kind other than %v, and no Options.Owners", owner.BatchJob)

// CreateTask stores a copy of t as the API server stores a custom resource: a name
// from GenerateName when Name is empty, a UID, resourceVersion, generation 1, the
// creation time, the cluster's owner kind as apiVersion and kind, and the API
// defaults of a Job's spec fields (parallelism, completions, backoffLimit,
// completionMode, suspend, podReplacementPolicy); no selector is generated. Its
// status is kept as given. It fails when the cluster holds Jobs only or its owners live in Options.Owners.
// It is not a controller call: no fault applies and the call log does not record it.
func (c *Cluster) CreateTask(t *Task) (*Task, error) {
	if t == nil {
		return nil, apierrors.NewBadRequest("task is nil")
	}
	if c.owner == owner.BatchJob || c.owners != nil {
		return nil, errNoTasks
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	gvk := c.owner.GroupVersionKind()
	return c.tasks.createLocked(c, t, func(task *Task) {
		task.APIVersion, task.Kind = gvk.GroupVersion().String(), gvk.Kind
		defaultJobSpec(&task.Spec)
	})
}

// UpdateTask applies mutate to a copy of the stored Task and stores the result as a
// user's update would be: status changes are ignored, the generation is incremented
// when the spec changed. It is not a controller call.
func (c *Cluster) UpdateTask(namespace, name string, mutate func(*Task)) (*Task, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks.updateLocked(c, namespace, name, mutate)
}

// DeleteTask removes a Task at once. Its pods stay, with their owner reference and
// finalizers, until CollectGarbage or the test removes them. It is not a controller
// call.
func (c *Cluster) DeleteTask(namespace, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks.deleteLocked(c, namespace, name)
}

// GetTask returns a copy of the stored Task, or a NotFound error.
func (c *Cluster) GetTask(ctx context.Context, namespace, name string) (*Task, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks.getLocked(namespace, name)
}

// ListTasks returns copies of the stored Tasks, sorted by namespace and name.
func (c *Cluster) ListTasks() []*Task {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks.listLocked()
}

// sortByName sorts objects by namespace and name.
func sortByName[T metav1.Object](objs []T) {
	slices.SortFunc(objs, func(a, b T) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
}

// UpdateTaskStatus is the status subresource of Tasks, a controller call (operation
// OpUpdateStatus, faults apply): it replaces the stored Task's status with t.Status
// when t's UID and resourceVersion are current (or empty) and the update passes
// jobstatus.ValidateUpdate, the rules the API server applies to a Job's status;
// spec and metadata changes in t are ignored.
func (c *Cluster) UpdateTaskStatus(ctx context.Context, t *Task) (*Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t == nil {
		return nil, apierrors.NewBadRequest("task is nil")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	call := Call{Op: OpUpdateStatus, Namespace: t.Namespace, Name: t.Name, Task: t.DeepCopy()}
	stored, err := statusCallLocked(c, call, func() (*Task, error) { return c.tasks.updateStatusLocked(c, t) })
	if err != nil {
		return nil, err
	}
	return stored.DeepCopy(), nil
}

// taskStore returns the store of the Cluster's Tasks.
func (c *Cluster) taskStore() ownerStore[*Task] {
	return ownerStore[*Task]{
		objs:      map[types.NamespacedName]*Task{},
		resource:  c.taskResource(),
		kind:      c.taskGroupKind(),
		copy:      (*Task).DeepCopy,
		asJob:     taskAsJob,
		setStatus: func(t *Task, st *batchv1.JobStatus) { st.DeepCopyInto(&t.Status) },
		event:     func(typ watch.EventType, t *Task) WatchEvent { return WatchEvent{Type: typ, Task: t} },
	}
}

// WriteStatus implements reconcile.StatusWriter for both kinds of owner the cluster
// holds: a Workload whose Object is a *Task is written through UpdateTaskStatus and
// converted back with Task.Workload, one whose Object is a *batchv1.Job through
// UpdateJobStatus (reconcile.JobWorkload). The Workload's UID and ResourceVersion are
// the preconditions.
func (c *Cluster) WriteStatus(ctx context.Context, w *plan.Workload, status batchv1.JobStatus) (*plan.Workload, error) {
	if w == nil {
		return nil, apierrors.NewBadRequest("workload is nil")
	}
	switch obj := w.Object.(type) {
	case *Task:
		t := obj.DeepCopy()
		t.UID, t.ResourceVersion, t.Status = w.UID, w.ResourceVersion, status
		out, err := c.UpdateTaskStatus(ctx, t)
		if err != nil {
			return nil, err
		}
		return out.Workload(), nil
	case *batchv1.Job:
		j := obj.DeepCopy()
		j.UID, j.ResourceVersion, j.Status = w.UID, w.ResourceVersion, status
		out, err := c.UpdateJobStatus(ctx, j)
		if err != nil {
			return nil, err
		}
		return plan.JobWorkload(out), nil
	}
	return nil, apierrors.NewBadRequest(fmt.Sprintf("reconciletest: WriteStatus: Workload.Object is a %T, not a *reconciletest.Task or *batchv1.Job", w.Object))
}
