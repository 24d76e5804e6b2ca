package reconciletest

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/jobstatus"
)

// owned is an owner object as the Cluster stores it: a *batchv1.Job or a *Task.
type owned interface {
	metav1.Object
	runtime.Object
}

// ownerStore holds the owners of one kind (Jobs, or the Cluster's Tasks) and does
// for both what the API server does alike: create, update, delete and write the
// status in Job terms. Its methods run under the Cluster's lock.
type ownerStore[T owned] struct {
	objs     map[types.NamespacedName]T
	resource schema.GroupResource
	kind     schema.GroupKind
	copy     func(T) T
	// asJob presents an object as a Job sharing its spec and status: the status
	// rules and the spec comparison are a Job's.
	asJob func(T) *batchv1.Job
	// setStatus copies st into the object's status.
	setStatus func(T, *batchv1.JobStatus)
	// event makes the watch event of a change.
	event func(watch.EventType, T) WatchEvent
}

// createLocked stores a copy of in with a name (from generateName when empty), a
// UID, resourceVersion, generation 1 and the creation time, after prepare (the API
// defaults) has changed it.
func (s *ownerStore[T]) createLocked(c *Cluster, in T, prepare func(T)) (T, error) {
	var zero T
	o := s.copy(in)
	if o.GetNamespace() == "" {
		return zero, apierrors.NewInvalid(s.kind, o.GetName(), field.ErrorList{field.Required(field.NewPath("metadata", "namespace"), "")})
	}
	if o.GetName() == "" {
		if o.GetGenerateName() == "" {
			return zero, apierrors.NewInvalid(s.kind, "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
		}
		o.SetName(uniqueName(c, o.GetGenerateName(), func(n string) bool { _, taken := s.objs[key(o.GetNamespace(), n)]; return taken }))
	} else if _, taken := s.objs[key(o.GetNamespace(), o.GetName())]; taken {
		return zero, apierrors.NewAlreadyExists(s.resource, o.GetName())
	}
	o.SetUID(c.nextUID())
	o.SetResourceVersion(c.nextRV())
	o.SetGeneration(1)
	o.SetCreationTimestamp(c.now())
	prepare(o)
	s.objs[key(o.GetNamespace(), o.GetName())] = o
	c.emitEventLocked(s.event(watch.Added, o))
	return s.copy(o), nil
}

// updateLocked applies mutate to a copy of the stored object and stores the result
// as a user's update: identity, type and status are kept, the generation grows when
// the spec changed, and a no-op writes nothing.
func (s *ownerStore[T]) updateLocked(c *Cluster, namespace, name string, mutate func(T)) (T, error) {
	var zero T
	cur, ok := s.objs[key(namespace, name)]
	if !ok {
		return zero, apierrors.NewNotFound(s.resource, name)
	}
	o := s.copy(cur)
	mutate(o)
	s.setStatus(o, &s.asJob(cur).Status)
	o.GetObjectKind().SetGroupVersionKind(cur.GetObjectKind().GroupVersionKind())
	o.SetUID(cur.GetUID())
	o.SetName(cur.GetName())
	o.SetNamespace(cur.GetNamespace())
	o.SetCreationTimestamp(cur.GetCreationTimestamp())
	if equality.Semantic.DeepEqual(o, cur) {
		return s.copy(cur), nil
	}
	if !equality.Semantic.DeepEqual(s.asJob(o).Spec, s.asJob(cur).Spec) {
		o.SetGeneration(cur.GetGeneration() + 1)
	}
	o.SetResourceVersion(c.nextRV())
	s.objs[key(namespace, name)] = o
	c.emitEventLocked(s.event(watch.Modified, o))
	return s.copy(o), nil
}

// deleteLocked removes the object at once; its pods stay.
func (s *ownerStore[T]) deleteLocked(c *Cluster, namespace, name string) error {
	cur, ok := s.objs[key(namespace, name)]
	if !ok {
		return apierrors.NewNotFound(s.resource, name)
	}
	delete(s.objs, key(namespace, name))
	final := s.copy(cur)
	final.SetResourceVersion(c.nextRV())
	c.emitEventLocked(s.event(watch.Deleted, final))
	return nil
}

// getLocked returns a copy of the stored object, or NotFound.
func (s *ownerStore[T]) getLocked(namespace, name string) (T, error) {
	o, ok := s.objs[key(namespace, name)]
	if !ok {
		var zero T
		return zero, apierrors.NewNotFound(s.resource, name)
	}
	return s.copy(o), nil
}

// listLocked returns copies of the stored objects sorted by namespace and name.
func (s *ownerStore[T]) listLocked() []T {
	out := sortedValues(s.objs)
	for i, o := range out {
		out[i] = s.copy(o)
	}
	return out
}

// updateStatusLocked is the status subresource: in's status replaces the stored
// one when in's UID and resourceVersion are current (or empty) and the API server's
// rules for a Job's status (jobstatus.ValidateUpdate) accept it. It returns the
// stored object, not a copy.
func (s *ownerStore[T]) updateStatusLocked(c *Cluster, in T) (T, error) {
	var zero T
	cur, ok := s.objs[key(in.GetNamespace(), in.GetName())]
	if !ok {
		return zero, apierrors.NewNotFound(s.resource, in.GetName())
	}
	if err := checkPreconditions(s.resource, in, cur); err != nil {
		return zero, err
	}
	o := s.copy(cur)
	s.setStatus(o, &s.asJob(in).Status)
	if errs := jobstatus.ValidateUpdate(s.asJob(cur), s.asJob(o)); len(errs) > 0 {
		return zero, apierrors.NewInvalid(s.kind, in.GetName(), errs)
	}
	if equality.Semantic.DeepEqual(s.asJob(o).Status, s.asJob(cur).Status) {
		return cur, nil
	}
	o.SetResourceVersion(c.nextRV())
	s.objs[key(o.GetNamespace(), o.GetName())] = o
	c.emitEventLocked(s.event(watch.Modified, o))
	return o, nil
}

// jobStore returns the store of a Cluster's Jobs.
func jobStore() ownerStore[*batchv1.Job] {
	return ownerStore[*batchv1.Job]{
		objs:      map[types.NamespacedName]*batchv1.Job{},
		resource:  jobsResource,
		kind:      jobKind,
		copy:      (*batchv1.Job).DeepCopy,
		asJob:     func(j *batchv1.Job) *batchv1.Job { return j },
		setStatus: func(j *batchv1.Job, st *batchv1.JobStatus) { st.DeepCopyInto(&j.Status) },
		event:     func(typ watch.EventType, j *batchv1.Job) WatchEvent { return WatchEvent{Type: typ, Job: j} },
	}
}
