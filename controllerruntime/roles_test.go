package controllerruntime

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// The roles owners of these tests are batch/v1 Job objects of kind customKind
// annotated rolesAnnotation: one role "main" of one pod, their ownedpods.Status kept
// as JSON in the message of a condition of type rolesCondition (a test double; a
// real owner has fields of its own).
const (
	rolesAnnotation = "test.jobkit.dev/roles"
	rolesCondition  = "test.jobkit.dev/RolesStatus"
)

func rolesOf(job *batchv1.Job) (*ownedpods.Workload, error) {
	if job.Annotations[rolesAnnotation] == "" {
		return nil, nil
	}
	g := &ownedpods.Workload{
		Namespace: job.Namespace, Name: job.Name, UID: job.UID, Deleting: job.DeletionTimestamp != nil,
		Generation: job.Generation, ResourceVersion: job.ResourceVersion, Object: job, ManagedBy: job.Spec.ManagedBy,
		Roles: []ownedpods.Role{{Name: "main", Spec: plan.Spec{
			Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), CompletionMode: ptr.To(batchv1.IndexedCompletion),
			BackoffLimit: ptr.To[int32](0),
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
		}}},
	}
	for _, c := range job.Status.Conditions {
		if c.Type == rolesCondition {
			if err := json.Unmarshal([]byte(c.Message), &g.Status); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

func setRolesStatus(job *batchv1.Job, s ownedpods.Status) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	job.Status = batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: rolesCondition, Status: corev1.ConditionTrue, Message: string(data)}}}
	return nil
}

// rolesJob returns a roles owner of this controller.
func rolesJob() *batchv1.Job {
	job := testJob("u1")
	job.Annotations = map[string]string{rolesAnnotation: "yes"}
	return job
}

// newRolesOwner returns the owner part of a controller of customKind over a fake
// client holding objs, with the roles conversions.
func newRolesOwner(t *testing.T, objs ...client.Object) (*ownerOf[*batchv1.Job], client.Client) {
	t.Helper()
	o, cl := newOwner(t, nil, objs...)
	useConfig(t, o, cl, reconcile.Config{Name: name, Owner: customKind, Events: &recorder{}})
	o.client = cl
	o.typ.Roles, o.typ.SetRolesStatus = rolesOf, setRolesStatus
	o.typ.ManagedBy = func(j *batchv1.Job) *string { return j.Spec.ManagedBy }
	return o, cl
}

// A roles owner is synced by SyncRoles: its role's pod is created with the role
// and attempt labels, and its status written through SetRolesStatus.
func TestReconcileRoles(t *testing.T) {
	o, cl := newRolesOwner(t, rolesJob())
	if _, err := o.reconcileKey(t.Context(), crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "j"}}); err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	if err := cl.List(t.Context(), &pods); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Labels[plaingroup.LabelRoleName] != "main" || pods.Items[0].Labels[plaingroup.LabelRestartAttempt] != "0" {
		t.Fatalf("pods after the sync: %+v, want one of role main, attempt 0", pods.Items)
	}
	stored := &batchv1.Job{}
	if err := cl.Get(t.Context(), types.NamespacedName{Namespace: "ns", Name: "j"}, stored); err != nil {
		t.Fatal(err)
	}
	g, err := rolesOf(stored)
	if err != nil || len(g.Status.Roles) != 1 || g.Status.Roles[0].Name != "main" {
		t.Errorf("stored roles status %+v (%v), want an entry of role main", g, err)
	}
}

// The orphan cleanup and the pod events never see a roles owner as finished, even
// once its group condition Completed or Failed is True: its own sync stops and
// counts its pods; a pod event of it queues that sync.
func TestRolesFacts(t *testing.T) {
	for _, cond := range []string{plaingroup.ConditionCompleted, plaingroup.ConditionFailed, plaingroup.ConditionRestarting} {
		t.Run(cond, func(t *testing.T) {
			job := rolesJob()
			if err := setRolesStatus(job, ownedpods.Status{Conditions: []metav1.Condition{{Type: cond, Status: metav1.ConditionTrue}}}); err != nil {
				t.Fatal(err)
			}
			o, _ := newRolesOwner(t, job)
			if got := o.facts(job); got.Finished || got.UID != "u1" || got.ManagedBy != name {
				t.Errorf("facts = %+v, want unfinished, UID u1, managedBy %s", got, name)
			}
			pod := testPod("p", job, customKind.Finalizer)
			pod.OwnerReferences[0].APIVersion, pod.OwnerReferences[0].Kind = customKind.Group+"/"+customKind.Version, customKind.Kind
			pod.Status.Phase = corev1.PodRunning
			q := &recQueue{}
			o.handlePod(t.Context(), reconcile.PodEvent{Type: reconcile.PodUpdated, Old: pod, New: pod}, q)
			if len(q.added) != 1 {
				t.Errorf("a pod event of the roles owner queued %v, want its sync", q.added)
			}
		})
	}
}

func TestRolesStatusWriter(t *testing.T) {
	_, cl := newRolesOwner(t, rolesJob())
	stored := &batchv1.Job{}
	if err := cl.Get(t.Context(), types.NamespacedName{Namespace: "ns", Name: "j"}, stored); err != nil {
		t.Fatal(err)
	}
	sw := rolesStatusWriter[*batchv1.Job]{c: cl, typ: reconcile.Type[*batchv1.Job]{New: reconcile.JobType.New, Roles: rolesOf, SetRolesStatus: setRolesStatus}}
	g, err := rolesOf(stored)
	if err != nil {
		t.Fatal(err)
	}
	before := stored.DeepCopy()
	got, err := sw.WriteStatus(t.Context(), g, ownedpods.Status{Restarts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Restarts != 2 || got.ResourceVersion == g.ResourceVersion {
		t.Errorf("WriteStatus returned restarts %d at resourceVersion %s, want 2 at a new one (was %s)", got.Status.Restarts, got.ResourceVersion, g.ResourceVersion)
	}
	if diff := cmp.Diff(before, stored); diff != "" {
		t.Errorf("WriteStatus modified its input (-before +after):\n%s", diff)
	}
	if _, err := sw.WriteStatus(t.Context(), g, ownedpods.Status{Restarts: 3}); !apierrors.IsConflict(err) {
		t.Errorf("WriteStatus at a stale resourceVersion = %v, want a Conflict", err)
	}
	refuse := sw
	refuse.typ.SetRolesStatus = func(*batchv1.Job, ownedpods.Status) error { return errors.New("roles[0].name: \"x\": unknown") }
	if _, err := refuse.WriteStatus(t.Context(), got, ownedpods.Status{}); !errors.Is(err, reconcile.ErrInvalidArgument) {
		t.Errorf("WriteStatus of a status SetRolesStatus refuses = %v, want ErrInvalidArgument", err)
	}
	got.Object = &corev1.Pod{}
	if _, err := sw.WriteStatus(t.Context(), got, ownedpods.Status{}); !errors.Is(err, reconcile.ErrInvalidArgument) {
		t.Errorf("WriteStatus of a pod = %v, want ErrInvalidArgument", err)
	}
}
