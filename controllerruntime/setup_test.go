package controllerruntime

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// customKind is an owner kind other than batch/v1 Job, over batch/v1 Job objects
// (the conversions do not care which Go type carries the fields).
var customKind = owner.Kind{Group: "test.jobkit.dev", Version: "v1", Kind: "Task", Finalizer: "test.jobkit.dev/tracking"}

func TestFacts(t *testing.T) {
	finished := batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}
	refuse := func(*batchv1.Job) (*plan.Workload, error) { return nil, errors.New("refused") }
	tests := []struct {
		name      string
		kind      owner.Kind
		managedBy *string
		status    batchv1.JobStatus
		workload  func(*batchv1.Job) (*plan.Workload, error)
		want      finalizers.OrphanOwner
	}{
		{name: "Job without managedBy: the built-in controller's", kind: owner.BatchJob,
			want: finalizers.OrphanOwner{UID: "u", ManagedBy: batchv1.JobControllerName}},
		{name: "Job of ours, finished", kind: owner.BatchJob, managedBy: ptr.To(name), status: finished,
			want: finalizers.OrphanOwner{UID: "u", ManagedBy: name, Finished: true}},
		{name: "custom kind without managedBy: any controller of the kind's", kind: customKind,
			want: finalizers.OrphanOwner{UID: "u"}},
		{name: "refused by Workload: managedBy from Type.ManagedBy, unfinished", kind: customKind, managedBy: ptr.To("x"), status: finished, workload: refuse,
			want: finalizers.OrphanOwner{UID: "u", ManagedBy: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, cl := newOwner(t, nil)
			useConfig(t, o, cl, reconcile.Config{Name: name, Owner: tt.kind})
			if tt.workload != nil {
				o.typ.Workload = tt.workload
			}
			job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: "u"}, Spec: batchv1.JobSpec{ManagedBy: tt.managedBy}, Status: tt.status}
			if diff := cmp.Diff(&tt.want, o.facts(job)); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManages(t *testing.T) {
	tests := []struct {
		name         string
		kind         owner.Kind
		managedBy    *string
		noAccessor   bool
		refused      bool
		wantManaged  bool
		wantExternal bool
	}{
		{name: "Job of ours", kind: owner.BatchJob, managedBy: ptr.To(name), wantManaged: true},
		{name: "Job without managedBy", kind: owner.BatchJob},
		{name: "custom owner without managedBy", kind: customKind, wantManaged: true},
		{name: "custom owner of another controller", kind: customKind, managedBy: ptr.To("other")},
		{name: "refused, with the accessor: managed (Reconcile records why)", kind: customKind, refused: true, wantManaged: true},
		{name: "refused, no accessor: left alone", kind: customKind, refused: true, noAccessor: true},
		{name: "no accessor: read through Workload", kind: customKind, noAccessor: true, managedBy: ptr.To(name), wantManaged: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, cl := newOwner(t, nil)
			useConfig(t, o, cl, reconcile.Config{Name: name, Owner: tt.kind})
			if tt.noAccessor {
				o.typ.ManagedBy = nil
			}
			if tt.refused {
				o.typ.Workload = func(*batchv1.Job) (*plan.Workload, error) { return nil, errors.New("refused") }
			}
			job := &batchv1.Job{Spec: batchv1.JobSpec{ManagedBy: tt.managedBy}}
			if got := o.manages(job); got != tt.wantManaged {
				t.Errorf("manages(managedBy %v) = %v, want %v", ptr.Deref(tt.managedBy, "<nil>"), got, tt.wantManaged)
			}
		})
	}
}

// recorder records what the Reconciler's recorder is given.
type recorder struct{ got []string }

func (e *recorder) Eventf(_ runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	e.got = append(e.got, eventtype+" "+reason)
}

// An owner that Workload refuses gets a Warning event named after its kind, no
// pod and no retry.
func TestReconcileRefused(t *testing.T) {
	job := testJob("u1")
	o, cl := newOwner(t, nil, job)
	ev := &recorder{}
	useConfig(t, o, cl, reconcile.Config{Name: name, Owner: customKind, Events: ev})
	o.typ.Workload = func(*batchv1.Job) (*plan.Workload, error) {
		return nil, errors.New("spec.workers: 0: must be at least 1")
	}
	o.invalid = "InvalidTask"
	res, err := o.reconcileKey(t.Context(), crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "j"}})
	if err != nil || res != (crreconcile.Result{}) {
		t.Errorf("Reconcile = %+v, %v, want no requeue and no error", res, err)
	}
	if diff := cmp.Diff([]string{"Warning InvalidTask"}, ev.got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestAdopters(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}
	mk := func(n, managedBy string, s *metav1.LabelSelector, deleting bool) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n, UID: types.UID(n)}, Spec: batchv1.JobSpec{ManagedBy: ptr.To(managedBy), Selector: s}}
		if deleting {
			j.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			j.Finalizers = []string{"keep"}
		}
		return j
	}
	o, _ := newOwner(t, nil,
		mk("match", name, sel, false),
		mk("other-controller", "other", sel, false),
		mk("no-selector", name, nil, false),
		mk("other-labels", name, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "b"}}, false),
		mk("deleting", name, sel, true),
	)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"app": "a"}}}
	want := []types.NamespacedName{{Namespace: "ns", Name: "match"}}
	if diff := cmp.Diff(want, o.adopters(t.Context(), pod)); diff != "" {
		t.Errorf("adopters (-want +got):\n%s", diff)
	}
}

// The status writer writes a copy with the Workload's resourceVersion through the
// status subresource and converts what was stored.
func TestStatusWriter(t *testing.T) {
	job := testJob("u1")
	_, cl := newOwner(t, nil, job)
	stored := &batchv1.Job{}
	if err := cl.Get(t.Context(), client.ObjectKeyFromObject(job), stored); err != nil {
		t.Fatal(err)
	}
	sw := statusWriter[*batchv1.Job]{c: cl, typ: reconcile.JobType}
	w := plan.JobWorkload(stored)
	before := stored.DeepCopy()
	got, err := sw.WriteStatus(t.Context(), w, batchv1.JobStatus{Active: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Active != 2 || got.ResourceVersion == w.ResourceVersion {
		t.Errorf("WriteStatus returned active %d at resourceVersion %s, want 2 at a new one (was %s)", got.Status.Active, got.ResourceVersion, w.ResourceVersion)
	}
	if diff := cmp.Diff(before, stored); diff != "" {
		t.Errorf("WriteStatus modified its input (-before +after):\n%s", diff)
	}
	if _, err := sw.WriteStatus(t.Context(), w, batchv1.JobStatus{Active: 3}); err == nil {
		t.Error("WriteStatus at a stale resourceVersion succeeded, want a Conflict")
	}
	w.Object = &corev1.Pod{}
	if _, err := sw.WriteStatus(t.Context(), w, batchv1.JobStatus{}); !errors.Is(err, reconcile.ErrInvalidArgument) {
		t.Errorf("WriteStatus of a pod = %v, want ErrInvalidArgument", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	valid := Options[*batchv1.Job]{Type: reconcile.JobType, Config: reconcile.Config{Name: name}}
	tests := []struct {
		name    string
		mutate  func(*Options[*batchv1.Job])
		wantErr string // "" means valid
	}{
		{name: "valid", mutate: func(*Options[*batchv1.Job]) {}},
		{name: "no Type", mutate: func(o *Options[*batchv1.Job]) { o.Type = reconcile.Type[*batchv1.Job]{} }, wantErr: "Options.Type"},
		{name: "no SetStatus", mutate: func(o *Options[*batchv1.Job]) { o.Type.SetStatus = nil }, wantErr: "SetStatus set false"},
		{name: "Roles without SetRolesStatus", mutate: func(o *Options[*batchv1.Job]) { o.Type.Roles = rolesOf }, wantErr: "Roles set true, SetRolesStatus set false"},
		{name: "roles conversions", mutate: func(o *Options[*batchv1.Job]) { o.Type.Roles, o.Type.SetRolesStatus = rolesOf, setRolesStatus }},
		{name: "a kind of roles owners only: no Workload, no SetStatus", mutate: func(o *Options[*batchv1.Job]) {
			o.Type.Workload, o.Type.SetStatus = nil, nil
			o.Type.Roles, o.Type.SetRolesStatus = rolesOf, setRolesStatus
		}},
		{name: "no shape at all", mutate: func(o *Options[*batchv1.Job]) { o.Type.Workload, o.Type.SetStatus = nil, nil }, wantErr: "none of Workload, Roles and ChildJobs"},
		{name: "no New", mutate: func(o *Options[*batchv1.Job]) { o.Type.New = nil }, wantErr: "Options.Type.New is not set"},
		{name: "an owned Service", mutate: func(o *Options[*batchv1.Job]) { o.Owns = []client.Object{&corev1.Service{}} }},
		{name: "a nil owned type", mutate: func(o *Options[*batchv1.Job]) { o.Owns = []client.Object{nil} }, wantErr: "Options.Owns[0] is nil"},
		{name: "no name", mutate: func(o *Options[*batchv1.Job]) { o.Config.Name = "" }, wantErr: "Options.Config.Name"},
		{name: "negative workers", mutate: func(o *Options[*batchv1.Job]) { o.Workers = -1 }, wantErr: "Options.Workers -1"},
		{name: "negative backoff", mutate: func(o *Options[*batchv1.Job]) { o.APIBackoff.Max = -time.Second }, wantErr: "Options.APIBackoff {Base 0s, Max -1s}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid
			tt.mutate(&o)
			err := o.validate(nil)
			// A nil manager is always an error; look for the field's.
			if tt.wantErr == "" {
				if err == nil || strings.Count(err.Error(), "\n") != 0 {
					t.Errorf("validate = %v, want only the nil manager", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("validate = %v, want an error naming %q", err, tt.wantErr)
			}
		})
	}
}

func TestAPIBackoffDefaults(t *testing.T) {
	tests := []struct {
		in, want plainbackoff.Policy
	}{
		{in: plainbackoff.Policy{}, want: plainbackoff.Policy{Base: time.Second, Max: time.Minute}},
		{in: plainbackoff.Policy{Base: 5 * time.Millisecond}, want: plainbackoff.Policy{Base: 5 * time.Millisecond, Max: time.Minute}},
		{in: plainbackoff.Policy{Base: time.Millisecond, Max: time.Second}, want: plainbackoff.Policy{Base: time.Millisecond, Max: time.Second}},
	}
	for _, tt := range tests {
		o := Options[*batchv1.Job]{APIBackoff: tt.in}
		if got := o.apiBackoff(); got != tt.want {
			t.Errorf("apiBackoff(%+v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestEventAction(t *testing.T) {
	tests := []struct{ reason, want string }{
		{reconcile.ReasonSuccessfulCreate, "CreatePod"},
		{reconcile.ReasonFailedCreate, "CreatePod"},
		{reconcile.ReasonSuccessfulDelete, "DeletePod"},
		{reconcile.ReasonFailedDelete, "DeletePod"},
		{"Completed", "SyncTask"},
	}
	for _, tt := range tests {
		if got := eventAction(tt.reason, "SyncTask", "Pod"); got != tt.want {
			t.Errorf("eventAction(%q) = %q, want %q", tt.reason, got, tt.want)
		}
	}
}

func TestOwnerUID(t *testing.T) {
	ctrl := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "job-uid", Controller: ptr.To(true)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "c", UID: "cm-uid"}
	tests := []struct {
		name string
		refs []metav1.OwnerReference
		want []string
	}{
		{name: "no owner", want: []string{noController}},
		{name: "owner that is not a controller", refs: []metav1.OwnerReference{other}, want: []string{noController}},
		{name: "controller among owners", refs: []metav1.OwnerReference{other, ctrl}, want: []string{"job-uid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: tt.refs}}
			if diff := cmp.Diff(tt.want, OwnerUID(pod)); diff != "" {
				t.Errorf("OwnerUID (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetupRefusesBadOptions(t *testing.T) {
	_, err := Setup[*batchv1.Job](nil, Options[*batchv1.Job]{Config: reconcile.Config{Name: name}})
	if err == nil || !strings.Contains(err.Error(), "manager is nil") || !strings.Contains(err.Error(), "Options.Type") {
		t.Errorf("Setup(nil manager, no Type) = %v, want an error naming the manager and Options.Type", err)
	}
}
