package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// childManagedBy is the spec.managedBy of the children, set by the caller of
// each sync (the status writer's answer does not carry it).
const childManagedBy = "example.com/job-controller"

var childGroupKind = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Group"}

// groupAPI is an in-memory API server of one group, its child Jobs and its
// Service: a reconcile.ChildJobClient and a childjobs.StatusWriter that keep the
// API server's preconditions (the status's resourceVersion, the children's
// UIDs) and record every call. fail injects an error into the call of that name
// ("status", "delete g-w-0", "create g-w-1", "suspend g-w-0", "service",
// "delete group").
type groupAPI struct {
	mu      sync.Mutex
	group   childjobs.Input // the stored group: its status and resourceVersion
	rv      int
	jobs    map[string]*batchv1.Job
	service bool
	claims  map[string]bool
	budget  bool
	uids    int
	calls   []string
	fail    map[string]error
}

var (
	_ reconcile.ChildJobClient = (*groupAPI)(nil)
	_ childjobs.StatusWriter   = (*groupAPI)(nil)
)

// newGroupAPI stores a group of one role "w" of two one-pod children, with
// DNS hostnames off (no Service) and at most three restarts.
func newGroupAPI() *groupAPI { return newGroupAPIOf(2) }

// newGroupAPIOf is newGroupAPI with n children.
func newGroupAPIOf(n int32) *groupAPI {
	a := &groupAPI{rv: 7, jobs: map[string]*batchv1.Job{}, fail: map[string]error{}}
	a.group = childjobs.Input{
		Name: "g", Namespace: "ns", UID: "g-uid", ResourceVersion: "7", Owner: childGroupKind,
		Spec: plaingroup.Spec{
			Roles:         []plaingroup.Role{{Name: "w", Replicas: n}},
			FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: 3},
		},
		Templates: []batchv1.JobTemplateSpec{{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		}}}},
		EnableDNSHostnames: ptr.To(false),
	}
	a.group.Object = a.object()
	return a
}

func (a *groupAPI) object() runtime.Object {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g", UID: "g-uid", ResourceVersion: a.group.ResourceVersion}}
}

func (a *groupAPI) call(name string) error {
	a.calls = append(a.calls, name)
	return a.fail[name]
}

// cache returns what an informer cache that has caught up shows: the group and
// its children, copied.
func (a *groupAPI) cache() *childjobs.Input {
	a.mu.Lock()
	defer a.mu.Unlock()
	in := a.group
	in.Children = nil
	for _, name := range slices.Sorted(mapKeys(a.jobs)) {
		in.Children = append(in.Children, a.jobs[name].DeepCopy())
	}
	in.ServiceExists = a.service
	in.ChildManagedBy = childManagedBy
	return &in
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// takeCalls returns the calls so far, joined, and forgets them.
// takeCalls returns the calls made since the last take, in order, with the
// calls of one kind (a run of the same verb), which SyncChildJobs makes at once,
// sorted by name.
func (a *groupAPI) takeCalls() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	verb := func(c string) string { v, _, _ := strings.Cut(c, " "); return v }
	for i := 0; i < len(a.calls); {
		j := i + 1
		for j < len(a.calls) && verb(a.calls[j]) == verb(a.calls[i]) {
			j++
		}
		slices.Sort(a.calls[i:j])
		i = j
	}
	s := strings.Join(a.calls, "; ")
	a.calls = nil
	return s
}

func (a *groupAPI) WriteStatus(_ context.Context, in *childjobs.Input, st childjobs.Status) (*childjobs.Input, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.call("status"); err != nil {
		return nil, err
	}
	if in.ResourceVersion != a.group.ResourceVersion {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: "example.com", Resource: "groups"}, "g", errors.New("the object has been modified"))
	}
	a.rv++
	a.group.Status, a.group.ResourceVersion = st, strconv.Itoa(a.rv)
	a.group.Object = a.object()
	out := a.group
	return &out, nil
}

func (a *groupAPI) CreateJob(_ context.Context, job *batchv1.Job) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.call("create " + job.Name); err != nil {
		return err
	}
	if a.jobs[job.Name] != nil {
		return apierrors.NewAlreadyExists(batchv1.Resource("jobs"), job.Name)
	}
	a.uids++
	j := job.DeepCopy()
	j.UID = types.UID(fmt.Sprintf("uid-%d", a.uids))
	a.jobs[job.Name] = j
	return nil
}

func (a *groupAPI) DeleteJob(_ context.Context, job *batchv1.Job, propagation metav1.DeletionPropagation) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.call("delete " + job.Name); err != nil {
		return err
	}
	if propagation != metav1.DeletePropagationForeground {
		return fmt.Errorf("delete %s: propagation %q, want Foreground", job.Name, propagation)
	}
	switch stored := a.jobs[job.Name]; {
	case stored == nil:
		return apierrors.NewNotFound(batchv1.Resource("jobs"), job.Name)
	case stored.UID != job.UID:
		return apierrors.NewConflict(batchv1.Resource("jobs"), job.Name, errors.New("UID precondition"))
	}
	delete(a.jobs, job.Name) // its pods are gone at once
	return nil
}

func (a *groupAPI) CreateClaim(_ context.Context, pvc *corev1.PersistentVolumeClaim) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.call("claim " + pvc.Name); err != nil {
		return err
	}
	if a.claims[pvc.Name] {
		return apierrors.NewAlreadyExists(corev1.Resource("persistentvolumeclaims"), pvc.Name)
	}
	if a.claims == nil {
		a.claims = map[string]bool{}
	}
	a.claims[pvc.Name] = true
	return nil
}

func (a *groupAPI) CreateDisruptionBudget(_ context.Context, pdb *policyv1.PodDisruptionBudget) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.call("pdb " + pdb.Name); err != nil {
		return err
	}
	if a.budget {
		return apierrors.NewAlreadyExists(policyv1.Resource("poddisruptionbudgets"), pdb.Name)
	}
	a.budget = true
	return nil
}

func (a *groupAPI) ScaleJob(_ context.Context, job *batchv1.Job) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.call(fmt.Sprintf("scale=%d %s", ptr.Deref(job.Spec.Parallelism, 1), job.Name)); err != nil {
		return err
	}
	stored := a.jobs[job.Name]
	switch {
	case stored == nil:
		return apierrors.NewNotFound(batchv1.Resource("jobs"), job.Name)
	case stored.UID != job.UID:
		return apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, job.Name,
			field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), job.UID, "field is immutable")})
	}
	stored.Spec.Parallelism, stored.Spec.Completions = job.Spec.Parallelism, job.Spec.Completions
	return nil
}

func (a *groupAPI) SuspendJob(_ context.Context, job *batchv1.Job, suspend bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.call(fmt.Sprintf("suspend=%t %s", suspend, job.Name)); err != nil {
		return err
	}
	stored := a.jobs[job.Name]
	switch {
	case stored == nil:
		return apierrors.NewNotFound(batchv1.Resource("jobs"), job.Name)
	case stored.UID != job.UID:
		return apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, job.Name,
			field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), job.UID, "field is immutable")})
	}
	stored.Spec.Suspend = ptr.To(suspend)
	if !suspend {
		resumeTemplate(&stored.Spec.Template, &job.Spec.Template)
	}
	return nil
}

// resumeTemplate writes the pod template fields of a resume, as
// reconcile.ChildJobClient.SuspendJob's contract says: labels, annotations,
// nodeSelector, tolerations and schedulingGates.
func resumeTemplate(dst, src *corev1.PodTemplateSpec) {
	dst.Labels, dst.Annotations = maps.Clone(src.Labels), maps.Clone(src.Annotations)
	dst.Spec.NodeSelector = maps.Clone(src.Spec.NodeSelector)
	dst.Spec.Tolerations, dst.Spec.SchedulingGates = slices.Clone(src.Spec.Tolerations), slices.Clone(src.Spec.SchedulingGates)
}

func (a *groupAPI) CreateService(_ context.Context, svc *corev1.Service) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.call("service"); err != nil {
		return err
	}
	if a.service {
		return apierrors.NewAlreadyExists(corev1.Resource("services"), svc.Name)
	}
	a.service = true
	return nil
}

func (a *groupAPI) DeleteGroup(_ context.Context, in *childjobs.Input) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.call("delete group")
}

// failChild marks the stored child name Failed.
func (a *groupAPI) failChild(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.jobs[name].Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded}}
}

// groupEnv is a Reconciler on a fake clock, its events and metrics recorded.
type groupEnv struct {
	api    *groupAPI
	r      *reconcile.Reconciler
	clock  *clocktesting.FakeClock
	events *eventLog
	cfg    reconcile.Config
}

type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) Eventf(_ runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, eventtype+" "+reason)
}

func (l *eventLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

func newGroupEnv(t *testing.T) *groupEnv { return newGroupEnvOf(t, 2) }

// newGroupEnvOf is newGroupEnv with n children.
func newGroupEnvOf(t *testing.T, n int32) *groupEnv {
	t.Helper()
	e := &groupEnv{api: newGroupAPIOf(n), clock: clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), events: &eventLog{}}
	e.cfg = reconcile.Config{Name: plaingroup.ControllerName, Clock: e.clock, Events: e.events}
	r, err := reconcile.New(e.cfg, nil, nil)
	require.NoError(t, err)
	e.r = r
	return e
}

// sync syncs the group as in shows it.
func (e *groupEnv) sync(t *testing.T, in *childjobs.Input) reconcile.Result {
	t.Helper()
	res, err := e.r.SyncChildJobs(t.Context(), in, e.api, e.api)
	require.NoError(t, err)
	return res
}

// settle syncs from a cache that has caught up until a sync makes no call.
func (e *groupEnv) settle(t *testing.T) {
	t.Helper()
	for range 5 {
		e.sync(t, e.api.cache())
		if e.api.takeCalls() == "" {
			return
		}
	}
	t.Fatal("the group did not settle in 5 syncs")
}

func TestSyncChildJobs(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "example.com", Resource: "groups"}, "g", errors.New("modified"))
	tests := []struct {
		name        string
		setup       func(e *groupEnv) // before the sync, from a cache that has caught up
		fail        map[string]error
		wantCalls   string
		wantEvents  []string
		wantErr     string
		wantRetry   bool
		wantCreated int
		wantDeleted int
	}{
		{
			name:        "first sync: the status, then the children",
			wantCalls:   "status; create g-w-0; create g-w-1",
			wantCreated: 2,
		},
		{
			name:      "steady: no call",
			setup:     func(*groupEnv) {},
			wantCalls: "",
		},
		{
			name:        "a failed child restarts the group: the status before the deletions",
			setup:       func(e *groupEnv) { e.api.failChild("g-w-1") },
			wantCalls:   "status; delete g-w-0; delete g-w-1",
			wantEvents:  []string{"Warning RestartJobSetFailurePolicyAction"},
			wantDeleted: 2,
		},
		{
			name:      "a conflict on the status ends the sync",
			setup:     func(e *groupEnv) { e.api.failChild("g-w-1") },
			fail:      map[string]error{"status": conflict},
			wantCalls: "status",
			wantRetry: true,
		},
		{
			name:    "another status error is returned, with no other call",
			setup:   func(e *groupEnv) { e.api.failChild("g-w-1") },
			fail:    map[string]error{"status": apierrors.NewInternalError(errors.New("etcd"))},
			wantErr: "write status of ns/g", wantCalls: "status",
		},
		{
			name:        "a deletion answered NotFound or Conflict is done",
			setup:       func(e *groupEnv) { e.api.failChild("g-w-1") },
			fail:        map[string]error{"delete g-w-0": apierrors.NewNotFound(batchv1.Resource("jobs"), "g-w-0"), "delete g-w-1": conflict},
			wantCalls:   "status; delete g-w-0; delete g-w-1",
			wantEvents:  []string{"Warning RestartJobSetFailurePolicyAction"},
			wantDeleted: 0,
		},
		{
			name:        "a failed deletion does not stop the others",
			setup:       func(e *groupEnv) { e.api.failChild("g-w-1") },
			fail:        map[string]error{"delete g-w-0": apierrors.NewInternalError(errors.New("etcd"))},
			wantCalls:   "status; delete g-w-0; delete g-w-1",
			wantEvents:  []string{"Warning FailedDelete", "Warning RestartJobSetFailurePolicyAction"},
			wantErr:     "delete Job g-w-0",
			wantDeleted: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newGroupEnv(t)
			if tc.setup != nil {
				e.settle(t)
				e.events.take()
				tc.setup(e)
			}
			e.api.fail = tc.fail
			res, err := e.r.SyncChildJobs(t.Context(), e.api.cache(), e.api, e.api)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantCalls, e.api.takeCalls(), "calls")
			assert.Equal(t, tc.wantEvents, e.events.take(), "events")
			assert.Equal(t, tc.wantRetry, res.Retry != "", "Report.Retry %q", res.Retry)
			if tc.wantRetry {
				assert.Positive(t, res.RequeueAfter)
				assert.LessOrEqual(t, res.RequeueAfter, reconcile.DefaultConflictRequeue)
			}
			assert.Equal(t, tc.wantCreated, res.Created, "Report.Created")
			assert.Equal(t, tc.wantDeleted, res.Deleted, "Report.Deleted")
		})
	}
}

// A cache that does not show the children a sync created, or still shows those
// it deleted, is not acted on until it does, or until UncertainCreationTimeout
// has passed (a lost event does not hold the group).
func TestSyncChildJobsWaitsForTheCache(t *testing.T) {
	tests := []struct {
		name      string
		prepare   func(t *testing.T, e *groupEnv) *childjobs.Input // the stale cache
		advance   time.Duration
		wantCalls string
		wantSkip  bool
	}{
		{
			name: "created children not listed yet",
			prepare: func(t *testing.T, e *groupEnv) *childjobs.Input {
				e.sync(t, e.api.cache())
				in := e.api.cache()
				in.Children = nil
				return in
			},
			wantSkip: true,
		},
		{
			name: "created children listed",
			prepare: func(t *testing.T, e *groupEnv) *childjobs.Input {
				e.sync(t, e.api.cache())
				return e.api.cache()
			},
		},
		{
			name: "created children not listed after the timeout: acted on again",
			prepare: func(t *testing.T, e *groupEnv) *childjobs.Input {
				e.sync(t, e.api.cache())
				in := e.api.cache()
				in.Children = nil
				return in
			},
			advance:   reconcile.DefaultUncertainCreationTimeout,
			wantCalls: "create g-w-0; create g-w-1",
		},
		{
			name: "deleted children still listed without deletionTimestamp",
			prepare: func(t *testing.T, e *groupEnv) *childjobs.Input {
				e.settle(t)
				e.api.failChild("g-w-1")
				stale := e.api.cache()
				e.sync(t, stale)
				in := e.api.cache()
				in.Children = stale.Children
				return in
			},
			wantSkip: true,
		},
		{
			name: "deleted children listed with deletionTimestamp",
			prepare: func(t *testing.T, e *groupEnv) *childjobs.Input {
				e.settle(t)
				e.api.failChild("g-w-1")
				stale := e.api.cache()
				e.sync(t, stale)
				in := e.api.cache()
				in.Children = stale.Children
				for _, j := range in.Children {
					j.DeletionTimestamp = ptr.To(metav1.NewTime(e.clock.Now()))
				}
				return in
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newGroupEnv(t)
			in := tc.prepare(t, e)
			e.api.takeCalls()
			e.clock.Step(tc.advance)
			res := e.sync(t, in)
			assert.Equal(t, tc.wantCalls, e.api.takeCalls(), "calls")
			if tc.wantSkip {
				assert.Contains(t, res.Skipped, "waiting for the cache")
				assert.Positive(t, res.RequeueAfter)
				assert.LessOrEqual(t, res.RequeueAfter, reconcile.DefaultUncertainCreationTimeout)
			} else {
				assert.Empty(t, res.Skipped)
			}
		})
	}
}

// Read-your-writes: a sync from a cached group older than the last status write
// plans from the group as written, and counts no restart twice.
func TestSyncChildJobsStaleGroup(t *testing.T) {
	e := newGroupEnv(t)
	e.settle(t)
	e.api.failChild("g-w-1")
	stale := e.api.cache()
	e.sync(t, stale)
	require.Equal(t, "status; delete g-w-0; delete g-w-1", e.api.takeCalls())
	// The cache shows neither the status write nor the deletions (foreground:
	// listed with a deletionTimestamp).
	for _, j := range stale.Children {
		j.DeletionTimestamp = ptr.To(metav1.NewTime(e.clock.Now()))
	}
	res := e.sync(t, stale)
	assert.Empty(t, res.Skipped)
	assert.Empty(t, e.api.takeCalls(), "no second status write, no creation over the names still held")
	assert.Equal(t, int32(1), e.api.cache().Status.Restarts)

	// Without the write remembered (a restarted controller), the status write's
	// resourceVersion precondition refuses the stale plan, and nothing else is done.
	e.r.Forget(reconcile.Key("ns", "g"))
	res = e.sync(t, stale)
	assert.NotEmpty(t, res.Retry)
	assert.Equal(t, "status", e.api.takeCalls())
	assert.Equal(t, int32(1), e.api.cache().Status.Restarts)
}

// A controller that stops between the status write and the deletions of a
// restart loses no restart and counts none twice: the next one (a new
// Reconciler) finds the children of the old attempt obsolete and deletes them.
func TestSyncChildJobsCrashBetweenStatusAndDeletions(t *testing.T) {
	e := newGroupEnv(t)
	e.settle(t)
	e.api.failChild("g-w-1")
	down := apierrors.NewServiceUnavailable("the controller stopped")
	e.api.fail = map[string]error{"delete g-w-0": down, "delete g-w-1": down}
	_, err := e.r.SyncChildJobs(t.Context(), e.api.cache(), e.api, e.api)
	require.Error(t, err)
	assert.Equal(t, int32(1), e.api.cache().Status.Restarts)
	e.api.fail = nil
	e.api.takeCalls()

	restarted, err := reconcile.New(e.cfg, nil, nil)
	require.NoError(t, err)
	e.r = restarted
	e.sync(t, e.api.cache())
	assert.Equal(t, "delete g-w-0; delete g-w-1", e.api.takeCalls(), "the old attempt's children, with no status write")
	e.settle(t)
	in := e.api.cache()
	assert.Equal(t, int32(1), in.Status.Restarts)
	assert.Len(t, in.Children, 2)
}

// The events of a decision are recorded once: not by a sync whose status write
// failed, once by the one that wrote it, never by the next.
func TestSyncChildJobsEventsOnce(t *testing.T) {
	e := newGroupEnv(t)
	e.settle(t)
	e.events.take()
	e.api.failChild("g-w-1")
	e.api.fail = map[string]error{"status": apierrors.NewConflict(schema.GroupResource{Resource: "groups"}, "g", errors.New("modified"))}
	res := e.sync(t, e.api.cache())
	assert.NotEmpty(t, res.Retry)
	assert.Empty(t, e.events.take(), "events of a sync whose status failed")
	e.api.fail = nil
	e.sync(t, e.api.cache())
	assert.Equal(t, []string{"Warning RestartJobSetFailurePolicyAction"}, e.events.take())
	e.settle(t)
	assert.Empty(t, e.events.take(), "events after the status was in")
}

// Suspending the group suspends its children, with their UIDs: a child
// replaced under its name is gone, and no error.
func TestSyncChildJobsSuspend(t *testing.T) {
	e := newGroupEnv(t)
	e.settle(t)
	e.api.group.Suspend = true
	in := e.api.cache()
	in.Children[1].UID = "an-older-job"
	res, err := e.r.SyncChildJobs(t.Context(), in, e.api, e.api)
	require.NoError(t, err)
	assert.Equal(t, "status; suspend=true g-w-0; suspend=true g-w-1", e.api.takeCalls())
	assert.Equal(t, 1, res.StatusWrites)
}

// Resizing an Indexed role resizes its children in place, with their UIDs;
// scaling it down deletes its children from the top; neither is an error
// when the child was replaced under its name.
func TestSyncChildJobsElastic(t *testing.T) {
	e := newGroupEnvOf(t, 3)
	e.settle(t)
	e.api.group.Templates[0].Spec.Parallelism, e.api.group.Templates[0].Spec.Completions = ptr.To[int32](4), ptr.To[int32](4)
	in := e.api.cache()
	in.Children[2].UID = "an-older-job"
	e.sync(t, in)
	assert.Equal(t, "scale=4 g-w-0; scale=4 g-w-1; scale=4 g-w-2", e.api.takeCalls())
	assert.Equal(t, ptr.To[int32](4), e.api.jobs["g-w-0"].Spec.Completions)
	assert.Nil(t, e.api.jobs["g-w-2"].Spec.Completions, "the replaced child is left alone")

	e.api.group.Spec.Roles[0].Replicas = 1
	e.sync(t, e.api.cache())
	assert.Equal(t, "delete g-w-1; delete g-w-2", e.api.takeCalls(), "the surplus children (Spec.Surplus orders them, highest index first)")
}

// The group's volume claims are created before its children; a claim
// already there (AlreadyExists: the cache shows no claims here) is done.
func TestSyncChildJobsClaims(t *testing.T) {
	e := newGroupEnv(t)
	e.api.group.Spec.VolumeClaims = []plaingroup.VolumeClaim{{}}
	e.api.group.ClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	e.api.group.Templates[0].Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	e.sync(t, e.api.cache())
	assert.Equal(t, "status; claim data-g; create g-w-0; create g-w-1", e.api.takeCalls())
	e.sync(t, e.api.cache())
	assert.Equal(t, "claim data-g", e.api.takeCalls())
	assert.Empty(t, e.events.take())
}

// The group's disruption budget is created before its children; one already
// there is done.
func TestSyncChildJobsDisruptionBudget(t *testing.T) {
	e := newGroupEnv(t)
	e.api.group.DisruptionBudget = ptr.To(intstr.FromInt32(1))
	e.sync(t, e.api.cache())
	assert.Equal(t, "status; pdb g; create g-w-0; create g-w-1", e.api.takeCalls())
	e.sync(t, e.api.cache())
	assert.Equal(t, "pdb g", e.api.takeCalls())
	assert.Empty(t, e.events.take())
}

// The group is deleted once its TTL after finishing has expired; NotFound is done.
func TestSyncChildJobsTTL(t *testing.T) {
	e := newGroupEnv(t)
	e.api.group.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	e.settle(t)
	e.api.failChild("g-w-0")
	e.api.group.Spec.FailurePolicy.MaxRestarts = 0
	e.sync(t, e.api.cache())
	assert.Equal(t, "status; delete g-w-1", e.api.takeCalls(), "the group failed: the rest stopped")
	e.api.fail = map[string]error{"delete group": apierrors.NewNotFound(schema.GroupResource{Resource: "groups"}, "g")}
	_, err := e.r.SyncChildJobs(t.Context(), e.api.cache(), e.api, e.api)
	require.NoError(t, err)
	assert.Equal(t, "delete group", e.api.takeCalls())
}

func TestSyncChildJobsInvalidArguments(t *testing.T) {
	e := newGroupEnv(t)
	noObject := e.api.cache()
	noObject.Object = nil
	tests := []struct {
		name   string
		in     *childjobs.Input
		jobs   reconcile.ChildJobClient
		status childjobs.StatusWriter
		want   string
	}{
		{name: "nil input", jobs: e.api, status: e.api, want: "input is nil"},
		{name: "nil object", in: noObject, jobs: e.api, status: e.api, want: "Input.Object is nil"},
		{name: "nil job client", in: e.api.cache(), status: e.api, want: "job client is nil"},
		{name: "nil status writer", in: e.api.cache(), jobs: e.api, want: "status writer is nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.r.SyncChildJobs(t.Context(), tc.in, tc.jobs, tc.status)
			require.ErrorIs(t, err, reconcile.ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A sync from a cached group older than the last status write, whose cache no
// longer lists the children it deleted, creates the new attempt's children
// with the caller's settings (spec.managedBy), not those of the group as written.
func TestSyncChildJobsStaleGroupCreates(t *testing.T) {
	e := newGroupEnv(t)
	e.settle(t)
	e.api.failChild("g-w-1")
	stale := e.api.cache()
	e.sync(t, stale)
	require.Equal(t, "status; delete g-w-0; delete g-w-1", e.api.takeCalls())
	stale.Children = nil
	e.sync(t, stale)
	assert.Equal(t, "create g-w-0; create g-w-1", e.api.takeCalls())
	for _, j := range e.api.cache().Children {
		assert.Equal(t, childManagedBy, ptr.Deref(j.Spec.ManagedBy, ""), "spec.managedBy of %s", j.Name)
	}
	assert.Equal(t, int32(1), e.api.cache().Status.Restarts)
}
