package reconcile_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// task is a custom resource of the tests: workers indexed 0..Workers-1, its status
// a batchv1.JobStatus. It is not a Job and never presented as one.
type task struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Workers int32
	Status  batchv1.JobStatus
}

func (t *task) DeepCopyObject() runtime.Object {
	out := *t
	t.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	t.Status.DeepCopyInto(&out.Status)
	return &out
}

var taskKind = owner.Kind{Group: "tasks.example.com", Version: "v1", Kind: "Task", Finalizer: "tasks.example.com/tracking"}

// workload is what a Task's controller gives the Reconciler.
func (t *task) workload() *plan.Workload {
	return &plan.Workload{
		Namespace: t.Namespace, Name: t.Name, UID: t.UID, Deleting: t.DeletionTimestamp != nil,
		Spec: plan.Spec{
			Completions:    ptr.To(t.Workers),
			Parallelism:    ptr.To(t.Workers),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "work", Image: "worker"}},
			}},
			ManagedBy: ptr.To(testName),
		},
		Status:          t.Status,
		ResourceVersion: t.ResourceVersion,
		Object:          t,
	}
}

// taskStore holds one Task and writes its status with the resourceVersion
// precondition and the API server's status rules.
type taskStore struct {
	mu     sync.Mutex
	stored *task
	writes int
}

func (s *taskStore) get() *task {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored.DeepCopyObject().(*task)
}

func (s *taskStore) WriteStatus(_ context.Context, w *plan.Workload, st batchv1.JobStatus) (*plan.Workload, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gr := schema.GroupResource{Group: taskKind.Group, Resource: "tasks"}
	if w.ResourceVersion != s.stored.ResourceVersion {
		return nil, apierrors.NewConflict(gr, w.Name, nil)
	}
	// The status rules of the Job API (a CRD would state them as CEL rules).
	next := s.stored.DeepCopyObject().(*task)
	next.Status = *st.DeepCopy()
	asJob := func(t *task) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: t.ObjectMeta, Spec: batchv1.JobSpec{Completions: ptr.To(t.Workers), Parallelism: ptr.To(t.Workers), CompletionMode: ptr.To(batchv1.IndexedCompletion)}, Status: t.Status}
	}
	if errs := jobstatus.ValidateUpdate(asJob(s.stored), asJob(next)); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: taskKind.Group, Kind: taskKind.Kind}, w.Name, errs)
	}
	rv, _ := strconv.Atoi(next.ResourceVersion)
	next.ResourceVersion = strconv.Itoa(rv + 1)
	s.stored = next
	s.writes++
	return next.DeepCopyObject().(*task).workload(), nil
}

// objectEvents records the type of the object each event is recorded on.
type objectEvents struct {
	mu      sync.Mutex
	objects []string
}

func (o *objectEvents) Eventf(obj runtime.Object, _, reason, _ string, _ ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	name := "<nil>"
	if m, ok := obj.(metav1.Object); ok {
		name = m.GetName()
	}
	o.objects = append(o.objects, reason+" on "+typeName(obj)+" "+name)
}

func typeName(obj runtime.Object) string {
	switch obj.(type) {
	case *task:
		return "task"
	case *batchv1.Job:
		return "job"
	}
	return "other"
}

// A custom resource runs to completion through New and Sync: its pods
// carry its controller reference and finalizer, its status is written through its
// StatusWriter, events are recorded on it, and the counts are exact.
func TestSyncWorkloadCustomResource(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{Seed: 3})
	store := &taskStore{stored: &task{
		TypeMeta:   metav1.TypeMeta{APIVersion: "tasks.example.com/v1", Kind: "Task"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "render", UID: "task-1", ResourceVersion: "1"},
		Workers:    3,
	}}
	events := &objectEvents{}
	var logMu sync.Mutex
	var logs []string
	logger := funcr.New(func(prefix, args string) {
		logMu.Lock()
		defer logMu.Unlock()
		logs = append(logs, args)
	}, funcr.Options{Verbosity: 4})
	r, err := reconcile.New(reconcile.Config{
		Name: testName, Owner: taskKind, Clock: c.Clock(), Events: events, FinalizerRemovalParallelism: 1, Logger: logger,
	}, c, store)
	require.NoError(t, err)
	list := func(w *plan.Workload) ([]*corev1.Pod, error) {
		var out []*corev1.Pod
		for _, p := range c.Cache().Pods(w.Namespace) {
			if taskKind.IsControlledBy(p, string(w.UID)) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	c.Cache().OnPodEvent(func(ev reconcile.PodEvent) {
		r.ObservePodEvent(ev, nil)
	})

	failedOnce := false
	for step := 0; step < 30; step++ {
		tk := store.get()
		if jobstatus.IsConditionTrue(tk.Status.Conditions, batchv1.JobComplete) {
			break
		}
		_, err := r.Sync(t.Context(), tk.workload(), list)
		require.NoError(t, err, "step %d", step)
		c.Cache().DeliverAll()
		for _, p := range c.ListPods(ns) {
			if p.Status.Phase != corev1.PodPending || p.DeletionTimestamp != nil {
				continue
			}
			require.NoError(t, c.Kubelet().Run(ns, p.Name))
			if !failedOnce && p.Annotations[batchv1.JobCompletionIndexAnnotation] == "1" {
				failedOnce = true
				require.NoError(t, c.Kubelet().Fail(ns, p.Name, 1))
			} else {
				require.NoError(t, c.Kubelet().Succeed(ns, p.Name))
			}
		}
		c.Cache().DeliverAll()
		c.Clock().Step(11 * 1e9) // past the pod failure backoff
	}

	final := store.get()
	assert.True(t, jobstatus.IsConditionTrue(final.Status.Conditions, batchv1.JobComplete), "Complete: %+v", final.Status.Conditions)
	assert.Equal(t, int32(3), final.Status.Succeeded, "status.succeeded")
	assert.Equal(t, int32(1), final.Status.Failed, "status.failed")
	assert.Equal(t, "0-2", final.Status.CompletedIndexes)
	pods := c.ListPods(ns)
	require.Len(t, pods, 4, "three workers and one retry, none twice")
	for _, p := range pods {
		ref := taskKind.ControllerOf(p)
		require.NotNil(t, ref, "pod %s: controller reference %v", p.Name, p.OwnerReferences)
		assert.Equal(t, "Task", ref.Kind)
		assert.Equal(t, final.UID, ref.UID)
		assert.Empty(t, p.Finalizers, "pod %s keeps a finalizer after completion", p.Name)
	}
	assert.Positive(t, store.writes)
	// The logs name the owner by its kind: the key "task", never a Job.
	logMu.Lock()
	require.NotEmpty(t, logs)
	finished := false
	for _, l := range logs {
		assert.Contains(t, l, `"task"="ns/render"`, "log line %s", l)
		assert.NotContains(t, l, "Job", "log line %s", l)
		finished = finished || strings.Contains(l, `"msg"="Owner finished"`)
	}
	logMu.Unlock()
	assert.True(t, finished, "the finish is logged: %q", logs)
	require.NotEmpty(t, events.objects)
	for _, e := range events.objects {
		assert.Contains(t, e, "on task render", "every event is recorded on the Task")
	}
}

func TestSyncWorkloadBadInput(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	store := &taskStore{stored: &task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t", UID: "u", ResourceVersion: "1"}, Workers: 1}}
	cfg := reconcile.Config{Name: testName, Owner: taskKind}
	list := func(*plan.Workload) ([]*corev1.Pod, error) { return nil, nil }
	r, err := reconcile.New(cfg, c, store)
	require.NoError(t, err)
	noObject := store.get().workload()
	noObject.Object = nil

	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"Sync without pods", func() error {
			r, err := reconcile.New(cfg, nil, store)
			require.NoError(t, err, "New without pods, for SyncChildJobs")
			_, err = r.Sync(t.Context(), store.get().workload(), list)
			return err
		}, "no pod client or status writer"},
		{"Sync without status writer", func() error {
			r, err := reconcile.New(cfg, c, nil)
			require.NoError(t, err, "New without status writer, for SyncChildJobs")
			_, err = r.Sync(t.Context(), store.get().workload(), list)
			return err
		}, "no pod client or status writer"},
		{"nil workload", func() error { _, err := r.Sync(t.Context(), nil, list); return err }, "workload is nil"},
		{"nil object", func() error { _, err := r.Sync(t.Context(), noObject, list); return err }, "Workload.Object is nil"},
		{"negative backoff", func() error {
			w := store.get().workload()
			w.Backoff.Base = -time.Second
			_, err := r.Sync(t.Context(), w, list)
			return err
		}, "Workload.Backoff"},
		{"nil list", func() error { _, err := r.Sync(t.Context(), store.get().workload(), nil); return err }, "list is nil"},
		{"JobStatusWriter given a Task", func() error {
			_, err := reconcile.JobStatusWriter(c).WriteStatus(t.Context(), store.get().workload(), batchv1.JobStatus{})
			return err
		}, "Workload.Object is a *reconcile_test.task, not a *batchv1.Job"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, reconcile.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	t.Run("a status writer that returns nothing fails the sync", func(t *testing.T) {
		nothing := reconcile.StatusWriterFunc(func(context.Context, *plan.Workload, batchv1.JobStatus) (*plan.Workload, error) {
			return nil, nil
		})
		r, err := reconcile.New(cfg, c, nothing)
		require.NoError(t, err)
		_, err = r.Sync(t.Context(), store.get().workload(), list)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "returned no owner object")
	})
}

// Workload.Backoff replaces Config.Backoff for its owner: the replacement of a failed
// worker waits the owner's delay.
func TestSyncWorkloadOwnBackoff(t *testing.T) {
	tests := []struct {
		name string
		own  plainbackoff.Policy
		want time.Duration
	}{
		{name: "the Reconciler's", want: 2 * time.Second},
		{name: "the owner's", own: plainbackoff.Policy{Base: time.Minute, Max: time.Hour}, want: time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := reconciletest.NewCluster(reconciletest.Options{Seed: 5})
			store := &taskStore{stored: &task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t", UID: "u", ResourceVersion: "1"}, Workers: 1}}
			r, err := reconcile.New(reconcile.Config{Name: testName, Owner: taskKind, Clock: c.Clock(),
				Backoff: plainbackoff.Policy{Base: 2 * time.Second, Max: time.Minute}}, c, store)
			require.NoError(t, err)
			c.Cache().OnPodEvent(func(ev reconcile.PodEvent) { r.ObservePodEvent(ev, nil) })
			list := func(w *plan.Workload) ([]*corev1.Pod, error) { return c.Cache().Pods(w.Namespace), nil }
			sync := func() reconcile.Result {
				w := store.get().workload()
				w.Backoff = tc.own
				res, err := r.Sync(t.Context(), w, list)
				require.NoError(t, err)
				c.Cache().DeliverAll()
				return res
			}
			sync() // creates the worker
			pods := c.ListPods(ns)
			require.Len(t, pods, 1)
			require.NoError(t, c.Kubelet().Run(ns, pods[0].Name))
			require.NoError(t, c.Kubelet().Fail(ns, pods[0].Name, 1))
			c.Cache().DeliverAll()
			var res reconcile.Result
			for i := 0; i < 3 && res.RequeueAfter == 0; i++ { // record, count, then wait
				res = sync()
			}
			assert.Equal(t, tc.want, res.RequeueAfter, "the replacement waits")
			assert.Len(t, c.ListPods(ns), 1, "no replacement yet")
		})
	}
}

func TestObjectOwnerReader(t *testing.T) {
	gone := apierrors.NewNotFound(schema.GroupResource{Group: "tasks.example.com", Resource: "tasks"}, "t")
	broken := errors.New("connection refused")
	deleting := metav1.Now()
	tests := []struct {
		name    string
		got     *task
		err     error
		convErr error
		want    *plan.Workload
		wantErr error
	}{
		{name: "live", got: &task{ObjectMeta: metav1.ObjectMeta{UID: "u"}}, want: &plan.Workload{UID: "u"}},
		{name: "being deleted", got: &task{ObjectMeta: metav1.ObjectMeta{UID: "u", DeletionTimestamp: &deleting}}, want: &plan.Workload{UID: "u", Deleting: true}},
		{name: "not found", err: gone},
		{name: "read fails", err: broken, wantErr: broken},
		{name: "conversion fails", got: &task{ObjectMeta: metav1.ObjectMeta{UID: "u"}}, convErr: broken, wantErr: broken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			convert := func(o *task) (*plan.Workload, error) {
				if tc.convErr != nil {
					return nil, tc.convErr
				}
				return &plan.Workload{UID: o.UID, Deleting: o.DeletionTimestamp != nil}, nil
			}
			read := reconcile.ObjectOwnerReader(func(context.Context, string, string) (*task, error) { return tc.got, tc.err }, convert)
			got, err := read(t.Context(), ns, "t")
			require.ErrorIs(t, err, tc.wantErr)
			assert.Equal(t, tc.want, got)
		})
	}
}
