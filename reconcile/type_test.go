package reconcile_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// JobType converts a Job onto the workload a sync takes and writes a status onto
// a copy; a custom owner's Type does the same for its own fields.
func ExampleJobType() {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"},
		Spec: batchv1.JobSpec{Completions: ptr.To[int32](3), ManagedBy: ptr.To("example.com/job-controller")}}
	w, _ := reconcile.JobType.Workload(job)
	fmt.Println(w.Namespace, w.Name, *w.Spec.Completions, w.HandledBy("example.com/job-controller", owner.BatchJob))
	reconcile.JobType.SetStatus(job, batchv1.JobStatus{Active: 2})
	fmt.Println(job.Status.Active, *reconcile.JobType.ManagedBy(job))
	reconcile.JobType.SetSuspend(job, true)
	w, _ = reconcile.JobType.Workload(job)
	fmt.Println(*w.Spec.Suspend)
	// Output:
	// ns j 3 true
	// 2 example.com/job-controller
	// true
}

func TestTypeShape(t *testing.T) {
	one := &plan.Workload{Name: "one"}
	group := &ownedpods.Workload{Name: "group"}
	jobs := &childjobs.Input{Name: "jobs"}
	rolesOf := func(g *ownedpods.Workload, err error) func(*batchv1.Job) (*ownedpods.Workload, error) {
		return func(*batchv1.Job) (*ownedpods.Workload, error) { return g, err }
	}
	childJobsOf := func(in *childjobs.Input, err error) func(*batchv1.Job) (*childjobs.Input, error) {
		return func(*batchv1.Job) (*childjobs.Input, error) { return in, err }
	}
	tests := []struct {
		name      string
		roles     func(*batchv1.Job) (*ownedpods.Workload, error)
		childJobs func(*batchv1.Job) (*childjobs.Input, error)
		wantOne   bool
		wantGroup bool
		wantJobs  bool
		noJobs    bool // a kind of groups only: Type.Workload not set
		wantErr   bool
	}{
		{name: "no Roles: one workload", wantOne: true},
		{name: "roles owners only: Roles answers a group", noJobs: true, roles: rolesOf(group, nil), wantGroup: true},
		{name: "roles owners only: Roles answers nil", noJobs: true, roles: rolesOf(nil, nil), wantErr: true},
		{name: "Roles answers nil: one workload", roles: rolesOf(nil, nil), wantOne: true},
		{name: "Roles answers a group", roles: rolesOf(group, nil), wantGroup: true},
		{name: "Roles refuses", roles: rolesOf(nil, errors.New("spec.roles: bad")), wantErr: true},
		{name: "child Jobs only: ChildJobs answers a group", noJobs: true, childJobs: childJobsOf(jobs, nil), wantJobs: true},
		{name: "child Jobs only: ChildJobs answers nil", noJobs: true, childJobs: childJobsOf(nil, nil), wantErr: true},
		{name: "child Jobs only: ChildJobs refuses", noJobs: true, childJobs: childJobsOf(nil, errors.New("spec.replicatedJobs: bad")), wantErr: true},
		{name: "ChildJobs is asked first", roles: rolesOf(group, nil), childJobs: childJobsOf(jobs, nil), wantJobs: true},
		{name: "ChildJobs answers nil: Roles", roles: rolesOf(group, nil), childJobs: childJobsOf(nil, nil), wantGroup: true},
		{name: "ChildJobs and Roles answer nil: one workload", roles: rolesOf(nil, nil), childJobs: childJobsOf(nil, nil), wantOne: true},
		{name: "ChildJobs refuses: not asked further", roles: rolesOf(group, nil), childJobs: childJobsOf(nil, errors.New("bad")), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ := reconcile.Type[*batchv1.Job]{Workload: func(*batchv1.Job) (*plan.Workload, error) { return one, nil }, Roles: tt.roles, ChildJobs: tt.childJobs}
			if tt.noJobs {
				typ.Workload = nil
			}
			w, g, in, err := typ.Shape(&batchv1.Job{})
			if (w == one) != tt.wantOne || (g == group) != tt.wantGroup || (in == jobs) != tt.wantJobs || (err != nil) != tt.wantErr {
				t.Errorf("Shape = %v, %v, %v, %v; want one %v, group %v, child Jobs %v, error %v", w, g, in, err, tt.wantOne, tt.wantGroup, tt.wantJobs, tt.wantErr)
			}
		})
	}
}

func TestTypeValidate(t *testing.T) {
	roles := func(*batchv1.Job) (*ownedpods.Workload, error) { return nil, nil }
	setRoles := func(*batchv1.Job, ownedpods.Status) error { return nil }
	childJobs := func(*batchv1.Job) (*childjobs.Input, error) { return nil, nil }
	setChildJobs := func(*batchv1.Job, childjobs.Status) error { return nil }
	tests := []struct {
		name    string
		mutate  func(*reconcile.Type[*batchv1.Job])
		wantErr string // "" means valid
	}{
		{name: "JobType", mutate: func(*reconcile.Type[*batchv1.Job]) {}},
		{name: "no New", mutate: func(t *reconcile.Type[*batchv1.Job]) { t.New = nil }, wantErr: "Type.New is not set"},
		{name: "no SetStatus", mutate: func(t *reconcile.Type[*batchv1.Job]) { t.SetStatus = nil }, wantErr: "Workload set true, SetStatus set false"},
		{name: "Roles without SetRolesStatus", mutate: func(t *reconcile.Type[*batchv1.Job]) { t.Roles = roles }, wantErr: "Roles set true, SetRolesStatus set false"},
		{name: "roles owners only", mutate: func(t *reconcile.Type[*batchv1.Job]) {
			t.Workload, t.SetStatus, t.Roles, t.SetRolesStatus = nil, nil, roles, setRoles
		}},
		{name: "no shape", mutate: func(t *reconcile.Type[*batchv1.Job]) { t.Workload, t.SetStatus = nil, nil }, wantErr: "none of Workload, Roles and ChildJobs"},
		{name: "ChildJobs without SetChildJobsStatus", mutate: func(t *reconcile.Type[*batchv1.Job]) { t.ChildJobs = childJobs }, wantErr: "ChildJobs set true, SetChildJobsStatus set false"},
		{name: "SetChildJobsStatus without ChildJobs", mutate: func(t *reconcile.Type[*batchv1.Job]) { t.SetChildJobsStatus = setChildJobs }, wantErr: "ChildJobs set false, SetChildJobsStatus set true"},
		{name: "ChildJobTemplates without ChildJobs", mutate: func(t *reconcile.Type[*batchv1.Job]) {
			t.ChildJobTemplates = func(*batchv1.Job) []*batchv1.JobTemplateSpec { return nil }
		}, wantErr: "Type.ChildJobTemplates is set, Type.ChildJobs is not"},
		{name: "child-Jobs groups with their templates", mutate: func(t *reconcile.Type[*batchv1.Job]) {
			t.ChildJobs, t.SetChildJobsStatus = childJobs, setChildJobs
			t.ChildJobTemplates = func(*batchv1.Job) []*batchv1.JobTemplateSpec { return nil }
		}},
		{name: "child-Jobs groups only", mutate: func(t *reconcile.Type[*batchv1.Job]) {
			t.Workload, t.SetStatus, t.ChildJobs, t.SetChildJobsStatus = nil, nil, childJobs, setChildJobs
		}},
		{name: "all three shapes", mutate: func(t *reconcile.Type[*batchv1.Job]) {
			t.Roles, t.SetRolesStatus, t.ChildJobs, t.SetChildJobsStatus = roles, setRoles, childJobs, setChildJobs
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ := reconcile.JobType
			tt.mutate(&typ)
			err := typ.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate = %v, want an error naming %q", err, tt.wantErr)
			}
		})
	}
}

// Every reader of an owner sees the same facts: a Job-shaped owner's as its
// Workload says, an owner of roles never finished whatever its conditions, an
// owner the conversions refuse unfinished and managed as its managedBy says.
func TestTypeOwnerFacts(t *testing.T) {
	kind := owner.Kind{Group: "example.com", Version: "v1", Kind: "Run", Finalizer: "example.com/tracking"}
	done := batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: "True"}}}
	finishedGroup := &ownedpods.Workload{Name: "g", UID: "u", ManagedBy: ptr.To("me"),
		Status: ownedpods.Status{TerminalState: "Completed", Conditions: []metav1.Condition{{Type: "Completed", Status: metav1.ConditionTrue}}}}
	tests := []struct {
		name          string
		typ           reconcile.Type[*batchv1.Job]
		wantManagedBy string
		wantFinished  bool
		wantHandled   bool
	}{
		{name: "a finished Job-shaped owner", typ: reconcile.Type[*batchv1.Job]{
			Workload: func(j *batchv1.Job) (*plan.Workload, error) {
				return &plan.Workload{UID: j.UID, Spec: plan.Spec{ManagedBy: ptr.To("me")}, Status: done}, nil
			}}, wantManagedBy: "me", wantFinished: true, wantHandled: true},
		{name: "a finished owner of roles: never finished", typ: reconcile.Type[*batchv1.Job]{
			Roles: func(*batchv1.Job) (*ownedpods.Workload, error) { return finishedGroup, nil }}, wantManagedBy: "me", wantHandled: true},
		{name: "refused, with ManagedBy", typ: reconcile.Type[*batchv1.Job]{
			Workload:  func(*batchv1.Job) (*plan.Workload, error) { return nil, errors.New("spec.x: bad") },
			ManagedBy: func(*batchv1.Job) *string { return ptr.To("me") }}, wantManagedBy: "me", wantHandled: true},
		{name: "refused, no ManagedBy", typ: reconcile.Type[*batchv1.Job]{
			Workload: func(*batchv1.Job) (*plan.Workload, error) { return nil, errors.New("spec.x: bad") }}},
		{name: "a finished group of child Jobs: never finished", typ: reconcile.Type[*batchv1.Job]{
			ChildJobs: func(j *batchv1.Job) (*childjobs.Input, error) {
				return &childjobs.Input{Name: j.Name, UID: j.UID, Spec: plaingroup.Spec{ManagedBy: "me"}, Status: childjobs.Status{TerminalState: "Completed",
					Conditions: []metav1.Condition{{Type: "Completed", Status: metav1.ConditionTrue}}}}, nil
			}}, wantManagedBy: "me", wantHandled: true},
		{name: "a group of child Jobs without managedBy: JobSet's", typ: reconcile.Type[*batchv1.Job]{
			ChildJobs: func(j *batchv1.Job) (*childjobs.Input, error) { return &childjobs.Input{Name: j.Name, UID: j.UID}, nil }},
			wantManagedBy: plaingroup.ControllerName},
		{name: "child Jobs only, refused, ManagedBy unset: handled by JobSet's controller only, no pod to clean", typ: reconcile.Type[*batchv1.Job]{
			ChildJobs: func(*batchv1.Job) (*childjobs.Input, error) { return nil, errors.New("spec.x: bad") },
			ManagedBy: func(*batchv1.Job) *string { return nil }}, wantManagedBy: ""},
		{name: "child Jobs only, refused, ManagedBy names it", typ: reconcile.Type[*batchv1.Job]{
			ChildJobs: func(*batchv1.Job) (*childjobs.Input, error) { return nil, errors.New("spec.x: bad") },
			ManagedBy: func(*batchv1.Job) *string { return ptr.To("me") }}, wantManagedBy: "me", wantHandled: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "g", UID: "u"}}
			f := tc.typ.OrphanOwner(obj, kind)
			if f.UID != "u" || f.ManagedBy != tc.wantManagedBy || f.Finished != tc.wantFinished {
				t.Errorf("OrphanOwner = %+v, want managedBy %q finished %v", f, tc.wantManagedBy, tc.wantFinished)
			}
			if got := tc.typ.Handles(obj, "me", kind); got != tc.wantHandled {
				t.Errorf("Handles = %v, want %v", got, tc.wantHandled)
			}
			if tc.wantManagedBy == plaingroup.ControllerName && !tc.typ.Handles(obj, plaingroup.ControllerName, kind) {
				t.Errorf("Handles(%s) = false, want true: an unset managedBy is JobSet's", plaingroup.ControllerName)
			}
		})
	}
}
