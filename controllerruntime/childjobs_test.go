package controllerruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// testGroup is the custom resource of testdata/groups.yaml: a group whose roles
// run as child Jobs, the smallest a user would write (a test double; JobSet's
// API is examples/jobset's).
type testGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              testGroupSpec    `json:"spec"`
	Status            childjobs.Status `json:"status"`
}

type testGroupSpec struct {
	ManagedBy               *string         `json:"managedBy,omitempty"`
	TTLSecondsAfterFinished *int32          `json:"ttlSecondsAfterFinished,omitempty"`
	Roles                   []testGroupRole `json:"roles"`
}

type testGroupRole struct {
	Name     string                  `json:"name"`
	Replicas int32                   `json:"replicas"`
	Template batchv1.JobTemplateSpec `json:"template"`
}

// DeepCopyObject copies through JSON: a test double's shortcut.
func (g *testGroup) DeepCopyObject() runtime.Object {
	out := &testGroup{}
	data, err := json.Marshal(g)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		panic(err)
	}
	return out
}

type testGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []testGroup `json:"items"`
}

func (l *testGroupList) DeepCopyObject() runtime.Object {
	out := &testGroupList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*testGroup))
	}
	return out
}

var groupGVK = customKind.GroupVersionKind().GroupVersion().WithKind("Group")

// groupType is the Type of testGroup: the conversion a user writes.
var groupType = reconcile.Type[*testGroup]{
	New: func() *testGroup { return &testGroup{} },
	ChildJobs: func(g *testGroup) (*childjobs.Input, error) {
		in := &childjobs.Input{
			Name: g.Name, Namespace: g.Namespace, UID: g.UID, Generation: g.Generation, ResourceVersion: g.ResourceVersion,
			Object: g, Owner: groupGVK, Deleting: g.DeletionTimestamp != nil, Status: g.Status,
			Spec: plaingroup.Spec{Name: g.Name, ManagedBy: ptr.Deref(g.Spec.ManagedBy, ""), TTLSecondsAfterFinished: g.Spec.TTLSecondsAfterFinished},
		}
		for _, r := range g.Spec.Roles {
			if r.Replicas < 0 {
				return nil, errors.New("spec.roles.replicas: must not be negative")
			}
			in.Spec.Roles = append(in.Spec.Roles, plaingroup.Role{Name: r.Name, Replicas: r.Replicas})
			in.Templates = append(in.Templates, r.Template)
		}
		return in, nil
	},
	SetChildJobsStatus: func(g *testGroup, s childjobs.Status) error { g.Status = s; return nil },
	ManagedBy:          func(g *testGroup) *string { return g.Spec.ManagedBy },
}

func groupScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	gv := groupGVK.GroupVersion()
	s.AddKnownTypeWithName(groupGVK, &testGroup{})
	s.AddKnownTypeWithName(gv.WithKind("GroupList"), &testGroupList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}

// newGroup is a group of two roles, a leader and two workers, each child Job
// of one pod; DNS hostnames are on, so it has a headless Service.
func newGroup(namespace, name, managedBy string) *testGroup {
	tmpl := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}}
	return &testGroup{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: testGroupSpec{ManagedBy: ptr.To(managedBy), Roles: []testGroupRole{
			{Name: "leader", Replicas: 1, Template: tmpl}, {Name: "workers", Replicas: 2, Template: tmpl}}}}
}

const groupController = "test.jobkit.dev/group-controller"

// events records the events of a controller as "type reason: message".
type eventLog struct {
	mu  sync.Mutex
	all []string
}

func (e *eventLog) Eventf(_ runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, eventtype+" "+reason)
}

func (e *eventLog) reasons() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.all)
}

// newGroupController is a Controller of groupType over a fake API server
// holding objs, whose writes funcs intercepts; the cache is the same fake.
func newGroupController(t *testing.T, now time.Time, funcs interceptor.Funcs, objs ...client.Object) (*Controller[*testGroup], client.Client, *eventLog) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(groupScheme(t)).WithObjects(objs...).WithStatusSubresource(&testGroup{}).
		WithIndex(&batchv1.Job{}, OwnerUIDIndex, OwnerUID).WithInterceptorFuncs(funcs).Build()
	ev := &eventLog{}
	ctl, err := NewController(c, c, Options[*testGroup]{Type: groupType, ChildManagedBy: "test.jobkit.dev/job-controller",
		Config: reconcile.Config{Name: groupController, Clock: clocktesting.NewFakePassiveClock(now), Events: ev, Logger: logr.Discard()}})
	if err != nil {
		t.Fatal(err)
	}
	return ctl, c, ev
}

// One Reconcile of a new group creates its children (named, controlled by the
// group, managed by Options.ChildManagedBy), its Service, and writes its
// status through the status subresource; the cache then shows them, and the
// next Reconcile creates nothing more.
func TestReconcileChildJobs(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	g := newGroup("ns", "g", groupController)
	g.UID = "g-uid"
	ctl, c, _ := newGroupController(t, now, interceptor.Funcs{}, g)
	req := crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "g"}}
	if _, err := ctl.Reconcile(t.Context(), req); err != nil {
		t.Fatalf("Reconcile() error = %v", err)
	}
	var jobs batchv1.JobList
	if err := c.List(t.Context(), &jobs, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs.Items {
		names = append(names, j.Name)
		if ref := metav1.GetControllerOf(&j); ref == nil || ref.UID != "g-uid" || ref.Kind != "Group" {
			t.Errorf("Job %s controller = %+v, want the group", j.Name, ref)
		}
		if got := ptr.Deref(j.Spec.ManagedBy, ""); got != "test.jobkit.dev/job-controller" {
			t.Errorf("Job %s managedBy = %q, want Options.ChildManagedBy", j.Name, got)
		}
	}
	if want := []string{"g-leader-0", "g-workers-0", "g-workers-1"}; !slices.Equal(names, want) {
		t.Errorf("Jobs = %v, want %v", names, want)
	}
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: "ns", Name: "g"}, &corev1.Service{}); err != nil {
		t.Errorf("the headless Service: %v", err)
	}
	got := &testGroup{}
	if err := c.Get(t.Context(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.ReplicatedJobs) != 2 {
		t.Errorf("status = %+v, want the two roles' statuses", got.Status)
	}
	res, err := ctl.Reconcile(t.Context(), req)
	if err != nil || res.RequeueAfter != 0 {
		t.Errorf("second Reconcile() = %+v, %v, want nothing to do", res, err)
	}
	if err := c.List(t.Context(), &jobs, client.InNamespace("ns")); err != nil || len(jobs.Items) != 3 {
		t.Errorf("Jobs after the second Reconcile = %d, %v, want 3", len(jobs.Items), err)
	}
}

// The adapter's calls carry the guards SyncChildJobs relies on: deletions a
// UID precondition and foreground propagation, a Conflict meaning gone; the
// status write the resourceVersion read (a stale one is a Conflict, retried).
func TestChildJobsAPIGuards(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	g := newGroup("ns", "g", groupController)
	g.UID = "g-uid"
	// A restart recorded: the children of attempt 0 are obsolete.
	g.Status.Restarts, g.Status.RestartsCountTowardsMax = 1, 1
	first := *g
	first.Status = childjobs.Status{}
	in0, err := groupType.ChildJobs(&first)
	if err != nil {
		t.Fatal(err)
	}
	in0.Now = now
	p, err := childjobs.Compute(in0)
	if err != nil || len(p.Create) == 0 {
		t.Fatalf("Compute(first sync) = %v, %v", p.Create, err)
	}
	old := p.Create[0].Job
	old.UID = "old-uid"
	var mu sync.Mutex
	var deletes []client.DeleteOptions
	ctl, _, _ := newGroupController(t, now, interceptor.Funcs{
		Delete: func(_ context.Context, _ client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			o := client.DeleteOptions{}
			o.ApplyOptions(opts)
			mu.Lock()
			deletes = append(deletes, o)
			mu.Unlock()
			return apierrors.NewConflict(batchv1.Resource("jobs"), obj.GetName(), errors.New("UID mismatch"))
		},
	}, g, old)
	in, err := groupType.ChildJobs(g)
	if err != nil {
		t.Fatal(err)
	}
	in.Children = []*batchv1.Job{old}
	res, err := ctl.o.syncChildJobs(t.Context(), in)
	if err != nil {
		t.Fatalf("sync = %+v, %v, want no error (a Conflict on a deletion means gone)", res, err)
	}
	if len(deletes) != 1 {
		t.Fatalf("deletions = %d, want the one child of attempt 0", len(deletes))
	}
	for _, o := range deletes {
		if o.Preconditions == nil || ptr.Deref(o.Preconditions.UID, "") != "old-uid" ||
			ptr.Deref(o.PropagationPolicy, "") != metav1.DeletePropagationForeground {
			t.Errorf("deletion options = %+v, want foreground with UID old-uid", o)
		}
	}
	a := childJobsAPI[*testGroup]{c: ctl.o.client, typ: groupType}
	stale := *in
	stale.ResourceVersion = "1"
	if _, err := a.WriteStatus(t.Context(), &stale, childjobs.Status{Restarts: 9}); !apierrors.IsConflict(err) {
		t.Errorf("WriteStatus with a stale resourceVersion = %v, want a Conflict", err)
	}
}

// A group whose spec plaingroup.Validate refuses is failed once (Failed,
// reason InvalidGroup, terminal state Failed, a Warning event) with no child;
// then its TTL applies: a requeue while time is left, a foreground deletion
// once it has expired. One the conversion refuses gets a Warning event only.
func TestInvalidGroup(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	req := crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "g"}}
	bad := newGroup("ns", "g", groupController)
	bad.Spec.Roles[1].Name = "leader" // a duplicate role name
	bad.Spec.TTLSecondsAfterFinished = ptr.To[int32](10)
	ctl, c, ev := newGroupController(t, now, interceptor.Funcs{}, bad)
	if res, err := ctl.Reconcile(t.Context(), req); err != nil || res.RequeueAfter != 0 {
		t.Fatalf("Reconcile() = %+v, %v, want the group failed, no requeue", res, err)
	}
	failed := &testGroup{}
	if err := c.Get(t.Context(), req.NamespacedName, failed); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(failed.Status.Conditions, "Failed")
	if failed.Status.TerminalState != "Failed" || cond == nil || cond.Reason != "InvalidGroup" || !strings.Contains(cond.Message, "leader") {
		t.Errorf("status = %+v, want Failed (InvalidGroup) naming the duplicate", failed.Status)
	}
	if got := ev.reasons(); !slices.Equal(got, []string{"Warning InvalidGroup"}) {
		t.Errorf("events = %v, want one Warning InvalidGroup", got)
	}
	var jobs batchv1.JobList
	if err := c.List(t.Context(), &jobs); err != nil || len(jobs.Items) != 0 {
		t.Errorf("Jobs = %d, %v, want none", len(jobs.Items), err)
	}
	for _, tt := range []struct {
		name        string
		at          time.Time
		wantRequeue time.Duration
		wantGone    bool
	}{
		{name: "time left", at: now.Add(4 * time.Second), wantRequeue: 6 * time.Second},
		{name: "expired", at: now.Add(10 * time.Second), wantGone: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctl.o.cfg.Clock = clocktesting.NewFakePassiveClock(tt.at)
			res, err := ctl.Reconcile(t.Context(), req)
			gone := apierrors.IsNotFound(c.Get(t.Context(), req.NamespacedName, &testGroup{}))
			if err != nil || res.RequeueAfter != tt.wantRequeue || gone != tt.wantGone {
				t.Errorf("Reconcile() = %+v, %v, gone %v; want a requeue after %v, gone %v", res, err, gone, tt.wantRequeue, tt.wantGone)
			}
		})
	}

	refused := newGroup("ns", "r", groupController)
	refused.Spec.Roles[0].Replicas = -1
	ctl, _, ev = newGroupController(t, now, interceptor.Funcs{}, refused)
	if res, err := ctl.Reconcile(t.Context(), crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "r"}}); err != nil || res.RequeueAfter != 0 {
		t.Errorf("Reconcile(refused) = %+v, %v, want no retry", res, err)
	}
	if got := ev.reasons(); !slices.Equal(got, []string{"Warning InvalidGroup"}) {
		t.Errorf("events = %v, want one Warning InvalidGroup", got)
	}
}

func TestOptionsOfChildJobs(t *testing.T) {
	s := groupScheme(t)
	tests := []struct {
		name      string
		opts      Options[*testGroup]
		wantOwner string // kind and finalizer
		wantOwns  []string
		wantErr   string
	}{
		{name: "defaults from the scheme", opts: Options[*testGroup]{Type: groupType},
			wantOwner: "Group jobkit.dev/owns-no-pods", wantOwns: []string{"*v1.Job", "*v1.Service"}},
		{name: "a kind named, no finalizer", opts: Options[*testGroup]{Type: groupType, Config: reconcile.Config{Owner: customKind}},
			wantOwner: "Task test.jobkit.dev/tracking", wantOwns: []string{"*v1.Job", "*v1.Service"}},
		{name: "Service listed again, a ConfigMap", opts: Options[*testGroup]{Type: groupType, Owns: []client.Object{&corev1.Service{}, &corev1.ConfigMap{}}},
			wantOwner: "Group jobkit.dev/owns-no-pods", wantOwns: []string{"*v1.Job", "*v1.Service", "*v1.ConfigMap"}},
		{name: "claims and budgets", opts: Options[*testGroup]{Type: groupType, ClaimsAndBudgets: true},
			wantOwner: "Group jobkit.dev/owns-no-pods", wantOwns: []string{"*v1.Job", "*v1.Service", "*v1.PersistentVolumeClaim", "*v1.PodDisruptionBudget"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := tt.opts.owner(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := k.Kind + " " + k.Finalizer; got != tt.wantOwner {
				t.Errorf("owner = %q, want %q", got, tt.wantOwner)
			}
			var owns []string
			for _, o := range tt.opts.owns() {
				owns = append(owns, fmt.Sprintf("%T", o))
			}
			if !slices.Equal(owns, tt.wantOwns) {
				t.Errorf("owns = %v, want %v", owns, tt.wantOwns)
			}
		})
	}
	bad := Options[*testGroup]{Type: groupType, Config: reconcile.Config{Name: groupController}, ChildManagedBy: "x"}
	bad.Type.ChildJobs = nil
	bad.Type.SetChildJobsStatus = nil
	if err := bad.validateFields(); err == nil || !strings.Contains(err.Error(), "Options.ChildManagedBy") {
		t.Errorf("validate(ChildManagedBy without ChildJobs) = %v, want an error naming Options.ChildManagedBy", err)
	}
	bad.ChildManagedBy, bad.InPlaceRestart = "", true
	if err := bad.validateFields(); err == nil || !strings.Contains(err.Error(), "Options.InPlaceRestart") {
		t.Errorf("validate(InPlaceRestart without ChildJobs) = %v, want an error naming Options.InPlaceRestart", err)
	}
	bad.InPlaceRestart, bad.ClaimsAndBudgets = false, true
	if err := bad.validateFields(); err == nil || !strings.Contains(err.Error(), "Options.ClaimsAndBudgets") {
		t.Errorf("validate(ClaimsAndBudgets without ChildJobs) = %v, want an error naming Options.ClaimsAndBudgets", err)
	}
}

// A group of two roles runs to completion on an API server: Setup of its Type
// creates the child Jobs (managed by jobkit's Job controller, Setup of
// reconcile.JobType in the same manager), that controller runs their pods (the
// test plays the kubelet), and the group is Completed.
func TestSetupRunsChildJobsGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := groupScheme(t)
	c := directClient(t, s)
	ns := namespace(t, c, "group")
	const jobController = "test.jobkit.dev/job-controller"
	mgr, err := manager.New(restConfig, manager.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		Logger: logr.FromSlogHandler(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Setup(mgr, Options[*testGroup]{Type: groupType, ChildManagedBy: jobController,
		Config: reconcile.Config{Name: groupController}, SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := Setup(mgr, Options[*batchv1.Job]{Type: reconcile.JobType,
		Config: reconcile.Config{Name: jobController, PodEventBatchPeriod: 20 * time.Millisecond}, SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	kubelet(ctx, c, ns, 0)

	if err := c.Create(ctx, newGroup(ns, "g", groupController)); err != nil {
		t.Fatal(err)
	}
	got := &testGroup{}
	waitFor(t, "the group to complete", 60*time.Second, func() bool {
		return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "g"}, got) == nil && got.Status.TerminalState == "Completed"
	})
	if c := meta.FindStatusCondition(got.Status.Conditions, "Completed"); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("conditions = %+v, want Completed", got.Status.Conditions)
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 3 {
		t.Errorf("Jobs = %d, want 3 (a leader, two workers)", len(jobs.Items))
	}
	for _, j := range jobs.Items {
		if ptr.Deref(j.Spec.ManagedBy, "") != jobController || !slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
			return c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue
		}) {
			t.Errorf("Job %s: managedBy %v, conditions %+v; want the jobkit Job controller's, Complete", j.Name, j.Spec.ManagedBy, j.Status.Conditions)
		}
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "g"}, &corev1.Service{}); err != nil {
		t.Errorf("the headless Service: %v", err)
	}
	series := gatherNames(t)
	for _, want := range []string{
		"group_controller_job_syncs_total{action=jobs_created,completion_mode=ChildJobs,result=success}",
		"group_controller_jobs_finished_total{completion_mode=ChildJobs,reason=AllJobsCompleted,result=succeeded}",
	} {
		if !slices.Contains(series, want) {
			t.Errorf("no series %s; group_controller series: %v", want, filter(series, "group_controller_"))
		}
	}
}
