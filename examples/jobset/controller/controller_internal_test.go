package controller

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func testScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), v1alpha2.AddToScheme(s)); err != nil {
		t.Fatal(err)
	}
	return s
}

// testJobSet is a JobSet of one role of two one-pod children, with DNS
// hostnames off (no Service).
func testJobSet() *v1alpha2.JobSet {
	return &v1alpha2.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "js", UID: "js-uid", ResourceVersion: "7"},
		Spec: v1alpha2.JobSetSpec{
			ReplicatedJobs: []v1alpha2.ReplicatedJob{{Name: "w", Replicas: 2, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
			}}}},
			Network:       &v1alpha2.Network{EnableDNSHostnames: ptr.To(false)},
			FailurePolicy: &v1alpha2.FailurePolicy{MaxRestarts: 3},
		},
	}
}

// children returns the children a first sync of js creates, with UIDs.
func children(t *testing.T, js *v1alpha2.JobSet) []*batchv1.Job {
	t.Helper()
	p, err := childjobs.Compute(Input(js, nil, false, "", "", now))
	if err != nil {
		t.Fatal(err)
	}
	var out []*batchv1.Job
	for _, a := range p.Create {
		a.Job.UID = types.UID(a.Job.Name + "-uid")
		out = append(out, a.Job)
	}
	return out
}

// calls records the writes a fake API server received.
type calls struct {
	mu     sync.Mutex
	writes []string
	delete []client.DeleteOptions
}

func (c *calls) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, s)
}

// text returns the writes in order, with the writes of one kind (a run of the same
// verb), which a sync makes at once, sorted by name.
func (c *calls) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.writes)
	verb := func(w string) string { v, _, _ := strings.Cut(w, " "); return v }
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && verb(out[j]) == verb(out[i]) {
			j++
		}
		slices.Sort(out[i:j])
		i = j
	}
	return strings.Join(out, "; ")
}

// newTestController returns a Controller whose cache holds cached and whose API
// server holds stored, with funcs intercepting the writes, syncing at the time at.
func newTestController(t *testing.T, at time.Time, cached, stored []client.Object, funcs interceptor.Funcs) (*Controller, client.Client, *events.FakeRecorder) {
	t.Helper()
	return newGatedController(t, Options{}, at, cached, stored, funcs)
}

// newGatedController is newTestController under opts (its clock, events and
// logger replaced).
func newGatedController(t *testing.T, opts Options, at time.Time, cached, stored []client.Object, funcs interceptor.Funcs) (*Controller, client.Client, *events.FakeRecorder) {
	t.Helper()
	s := testScheme(t)
	cache := fake.NewClientBuilder().WithScheme(s).WithObjects(cached...).WithStatusSubresource(&v1alpha2.JobSet{}).
		WithIndex(&batchv1.Job{}, JobOwnerIndex, jkcr.OwnerUID).Build()
	writer := fake.NewClientBuilder().WithScheme(s).WithObjects(stored...).WithStatusSubresource(&v1alpha2.JobSet{}).
		WithInterceptorFuncs(funcs).Build()
	rec := events.NewFakeRecorder(100)
	ev := reconcile.EventRecorderFunc(func(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
		rec.Eventf(obj, nil, eventtype, reason, ActionSync, messageFmt, args...)
	})
	opts.Clock, opts.Events, opts.Logger = clocktesting.NewFakePassiveClock(at), ev, logr.Discard()
	c, err := jkcr.NewController(writer, cache, options(opts))
	if err != nil {
		t.Fatal(err)
	}
	return c, writer, rec
}

func drain(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// A child the cache has not shown yet but the API server has: its creation is
// answered AlreadyExists, which is no error and records no FailedCreate; the
// other child is created.
func TestCreateAlreadyExistsIsDone(t *testing.T) {
	js := testJobSet()
	kids := children(t, js)
	var got calls
	c, _, rec := newTestController(t, now, []client.Object{js}, []client.Object{js.DeepCopy(), kids[0].DeepCopy()}, interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			err := cl.Create(ctx, obj, opts...)
			got.add("create " + obj.GetName() + " " + errString(err))
			return err
		},
	})
	res, err := c.Reconcile(t.Context(), crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ml", Name: "js"}})
	if err != nil || res.RequeueAfter != 0 {
		t.Fatalf("Reconcile() = %+v, %v, want no requeue and no error", res, err)
	}
	want := "create js-w-0 AlreadyExists; create js-w-1 ok"
	if s := got.text(); s != want {
		t.Errorf("creations = %s, want %s", s, want)
	}
	for _, e := range drain(rec) {
		if strings.Contains(e, "FailedCreate") {
			t.Errorf("event %q for a child that exists", e)
		}
	}
}

// A restart deletes the children of the old attempt with foreground
// propagation and their UID as a precondition; a Conflict (the name now holds
// a newer Job) means the old one is gone, and is no error.
func TestDeleteCarriesTheUID(t *testing.T) {
	js := testJobSet()
	kids := children(t, js)
	js.Status.Restarts, js.Status.RestartsCountTowardsMax = 1, 1
	var got calls
	c, _, _ := newTestController(t, now, []client.Object{js, kids[0], kids[1]}, []client.Object{js.DeepCopy()}, interceptor.Funcs{
		Delete: func(_ context.Context, _ client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			o := client.DeleteOptions{}
			o.ApplyOptions(opts)
			got.mu.Lock()
			got.delete = append(got.delete, o)
			got.mu.Unlock()
			got.add("delete " + obj.GetName())
			return apierrors.NewConflict(batchv1.Resource("jobs"), obj.GetName(), errors.New("UID mismatch"))
		},
	})
	if _, err := c.Reconcile(t.Context(), crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ml", Name: "js"}}); err != nil {
		t.Fatalf("Reconcile() error = %v, want nil", err)
	}
	if len(got.delete) != 2 {
		t.Fatalf("deletions = %v, want the two children of attempt 0", got.writes)
	}
	// The deletions run at once: each child once, in any order.
	want := map[types.UID]bool{kids[0].UID: true, kids[1].UID: true}
	for i, o := range got.delete {
		if o.Preconditions == nil || o.Preconditions.UID == nil || !want[*o.Preconditions.UID] ||
			o.PropagationPolicy == nil || *o.PropagationPolicy != metav1.DeletePropagationForeground {
			t.Errorf("deletion %d options = %+v, want foreground with the UID of a child of attempt 0", i, o)
			continue
		}
		delete(want, *o.Preconditions.UID)
	}
}

func TestManages(t *testing.T) {
	kind := owner.Kind{Group: Kind.Group, Version: Kind.Version, Kind: Kind.Kind}
	tests := []struct {
		name       string
		controller string
		managedBy  *string
		want       bool
	}{
		{name: "unset, default controller", want: true},
		{name: "reserved name, default controller", managedBy: ptr.To(plaingroup.ControllerName), want: true},
		{name: "another controller's", managedBy: ptr.To("example.com/other")},
		{name: "unset, named controller", controller: "example.com/mine"},
		{name: "named controller's", controller: "example.com/mine", managedBy: ptr.To("example.com/mine"), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := options(Options{ManagedBy: tt.controller}).Config.Name
			js := testJobSet()
			js.Spec.ManagedBy = tt.managedBy
			if got := JobSetType.Handles(js, name, kind); got != tt.want {
				t.Errorf("Handles(managedBy %v) = %t, want %t", ptr.Deref(tt.managedBy, "<unset>"), got, tt.want)
			}
		})
	}
}

func errString(err error) string {
	switch {
	case err == nil:
		return "ok"
	case apierrors.IsAlreadyExists(err):
		return "AlreadyExists"
	}
	return err.Error()
}

// A JobSet refused as invalid is failed once; then its TTL applies: a requeue
// while time is left, a foreground deletion once it has expired.
func TestInvalidJobSetTTL(t *testing.T) {
	js := testJobSet()
	js.Spec.ReplicatedJobs[0].Name = "w"
	js.Spec.SuccessPolicy = &v1alpha2.SuccessPolicy{TargetReplicatedJobs: []string{"nope"}}
	js.Spec.TTLSecondsAfterFinished = ptr.To[int32](10)
	var got calls
	deletes := interceptor.Funcs{
		Delete: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.DeleteOption) error {
			got.add("delete " + obj.GetName())
			return nil
		},
	}
	c, writer, rec := newTestController(t, now, []client.Object{js}, []client.Object{js.DeepCopy()}, deletes)
	req := crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ml", Name: "js"}}
	if res, err := c.Reconcile(t.Context(), req); err != nil || res.RequeueAfter != 0 {
		t.Fatalf("first Reconcile() = %+v, %v, want the JobSet failed, no requeue", res, err)
	}
	if evs := drain(rec); len(evs) != 1 || !strings.Contains(evs[0], ReasonInvalid) {
		t.Errorf("events = %q, want one %s", evs, ReasonInvalid)
	}
	// The cache catches up with the failed status.
	failed := &v1alpha2.JobSet{}
	if err := writer.Get(t.Context(), req.NamespacedName, failed); err != nil {
		t.Fatal(err)
	}
	if failed.Status.TerminalState != v1alpha2.Failed {
		t.Fatalf("status = %+v, want Failed", failed.Status)
	}
	tests := []struct {
		name        string
		at          time.Time
		wantRequeue time.Duration
		wantWrites  string
	}{
		{name: "time left", at: now.Add(4 * time.Second), wantRequeue: 6 * time.Second},
		{name: "expired", at: now.Add(10 * time.Second), wantWrites: "delete js"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got.writes = nil
			c, _, _ := newTestController(t, tt.at, []client.Object{failed.DeepCopy()}, []client.Object{failed.DeepCopy()}, deletes)
			res, err := c.Reconcile(t.Context(), req)
			if err != nil || res.RequeueAfter != tt.wantRequeue || got.text() != tt.wantWrites {
				t.Errorf("Reconcile() = %+v, %v with writes %q, want a requeue after %s and writes %q", res, err, got.writes, tt.wantRequeue, tt.wantWrites)
			}
		})
	}
}

// The requeue delays after API errors: Options.APIBackoff's, or the Job
// controller's 1s doubling to 1m (controllerruntime's defaults, which its own
// tests turn into delays).
func TestAPIBackoff(t *testing.T) {
	for _, tt := range []struct {
		name string
		b    plainbackoff.Policy
	}{
		{name: "default"},
		{name: "5ms to 10ms", b: plainbackoff.Policy{Base: 5 * time.Millisecond, Max: 10 * time.Millisecond}},
	} {
		if got := options(Options{APIBackoff: tt.b}).APIBackoff; got != tt.b {
			t.Errorf("%s: controllerruntime's APIBackoff = %+v, want %+v", tt.name, got, tt.b)
		}
	}
	if jkcr.DefaultAPIBackoffBase != time.Second || jkcr.DefaultAPIBackoffMax != time.Minute {
		t.Errorf("default backoff = %v to %v, want 1s to 1m", jkcr.DefaultAPIBackoffBase, jkcr.DefaultAPIBackoffMax)
	}
}

// Options.InPlaceRestart is controllerruntime's.
func TestInPlaceRestartOption(t *testing.T) {
	for _, on := range []bool{false, true} {
		if got := options(Options{InPlaceRestart: on}).InPlaceRestart; got != on {
			t.Errorf("options(InPlaceRestart %t).InPlaceRestart = %t", on, got)
		}
	}
}

// A JobSet under restartStrategy InPlaceRestart is failed as invalid by a
// controller whose InPlaceRestart gate is off, as JobSet's webhook refuses
// it, naming the field in JobSet's words; with the gate on it runs.
func TestInPlaceRestartGate(t *testing.T) {
	js := testJobSet()
	js.Spec.FailurePolicy.RestartStrategy = v1alpha2.InPlaceRestart
	spec := &js.Spec.ReplicatedJobs[0].Template.Spec
	spec.BackoffLimit, spec.PodReplacementPolicy = ptr.To[int32](math.MaxInt32), ptr.To(batchv1.Failed)
	spec.Parallelism, spec.Completions = ptr.To[int32](2), ptr.To[int32](2)
	req := crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ml", Name: "js"}}
	for _, tt := range []struct {
		gate       bool
		wantFailed bool
	}{{gate: false, wantFailed: true}, {gate: true}} {
		t.Run(fmt.Sprintf("gate %t", tt.gate), func(t *testing.T) {
			c, writer, rec := newGatedController(t, Options{InPlaceRestart: tt.gate}, now,
				[]client.Object{js.DeepCopy()}, []client.Object{js.DeepCopy()}, interceptor.Funcs{})
			if _, err := c.Reconcile(t.Context(), req); err != nil {
				t.Fatalf("Reconcile() = %v", err)
			}
			got := &v1alpha2.JobSet{}
			if err := writer.Get(t.Context(), req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			var jobs batchv1.JobList
			if err := writer.List(t.Context(), &jobs); err != nil {
				t.Fatal(err)
			}
			c0 := meta.FindStatusCondition(got.Status.Conditions, plaingroup.ConditionFailed)
			if !tt.wantFailed {
				if got.Status.TerminalState != "" || c0 != nil || len(jobs.Items) != 2 {
					t.Fatalf("status = %+v with %d Jobs, want the JobSet running its 2 Jobs", got.Status, len(jobs.Items))
				}
				return
			}
			const want = "spec.failurePolicy.restartStrategy: Invalid value: \"InPlaceRestart\": InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled"
			if got.Status.TerminalState != v1alpha2.Failed || c0 == nil || c0.Reason != ReasonInvalid || c0.Message != want || len(jobs.Items) != 0 {
				t.Fatalf("status = %+v with %d Jobs, want Failed (%s: %s) and no Job", got.Status, len(jobs.Items), ReasonInvalid, want)
			}
			if evs := drain(rec); len(evs) != 1 || !strings.Contains(evs[0], want) {
				t.Errorf("events = %q, want one saying %q", evs, want)
			}
		})
	}
}
