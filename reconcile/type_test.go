package reconcile_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
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
	// Output:
	// ns j 3 true
	// 2 example.com/job-controller
}

func TestTypeShape(t *testing.T) {
	one := &plan.Workload{Name: "one"}
	group := &ownedpods.Workload{Name: "group"}
	tests := []struct {
		name      string
		roles     func(*batchv1.Job) (*ownedpods.Workload, error)
		wantOne   bool
		wantGroup bool
		noJobs    bool // a kind of roles owners only: Type.Workload not set
		wantErr   bool
	}{
		{name: "no Roles: one workload", wantOne: true},
		{name: "roles owners only: Roles answers a group", noJobs: true, roles: func(*batchv1.Job) (*ownedpods.Workload, error) { return group, nil }, wantGroup: true},
		{name: "roles owners only: Roles answers nil", noJobs: true, roles: func(*batchv1.Job) (*ownedpods.Workload, error) { return nil, nil }, wantErr: true},
		{name: "Roles answers nil: one workload", roles: func(*batchv1.Job) (*ownedpods.Workload, error) { return nil, nil }, wantOne: true},
		{name: "Roles answers a group", roles: func(*batchv1.Job) (*ownedpods.Workload, error) { return group, nil }, wantGroup: true},
		{name: "Roles refuses", roles: func(*batchv1.Job) (*ownedpods.Workload, error) { return nil, errors.New("spec.roles: bad") }, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ := reconcile.Type[*batchv1.Job]{Workload: func(*batchv1.Job) (*plan.Workload, error) { return one, nil }, Roles: tt.roles}
			if tt.noJobs {
				typ.Workload = nil
			}
			w, g, err := typ.Shape(&batchv1.Job{})
			if (w == one) != tt.wantOne || (g == group) != tt.wantGroup || (err != nil) != tt.wantErr {
				t.Errorf("Shape = %v, %v, %v; want one %v, group %v, error %v", w, g, err, tt.wantOne, tt.wantGroup, tt.wantErr)
			}
		})
	}
}

func TestTypeValidate(t *testing.T) {
	roles := func(*batchv1.Job) (*ownedpods.Workload, error) { return nil, nil }
	setRoles := func(*batchv1.Job, ownedpods.Status) error { return nil }
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
		{name: "no shape", mutate: func(t *reconcile.Type[*batchv1.Job]) { t.Workload, t.SetStatus = nil, nil }, wantErr: "neither Workload nor Roles"},
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
		})
	}
}
