package config_test

// These tests install the JobSet CRD on a real kube-apiserver (envtest) and check
// what the API server itself accepts, defaults and refuses: the sample, specs that
// break the schema, spec updates of immutable fields, and status writes that break
// the status rules; and that controller.Default, Validate and ValidateUpdate (what
// a webhook would call) agree with it. No controller runs.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/jobset/controller"
)

var (
	k8s       client.Client
	namespace string
)

func TestMain(m *testing.M) {
	opts := envtesting.Options{CRDs: []string{"crd"}, AddToScheme: v1alpha2.AddToScheme}
	os.Exit(envtesting.Main(m, opts, func(e *envtesting.Env) (err error) {
		k8s = e.Client
		namespace, err = envtesting.CreateNamespace(context.Background(), k8s, "jobset-")
		return err
	}))
}

// template is a small child Job template.
func template() batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "registry.example/x:1"}},
		}},
	}}
}

// valid returns a leader and two workers.
func valid(name string) *v1alpha2.JobSet {
	return &v1alpha2.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1alpha2.JobSetSpec{ReplicatedJobs: []v1alpha2.ReplicatedJob{
			{Name: "leader", Replicas: 1, Template: template()},
			{Name: "workers", Replicas: 2, Template: template()},
		}},
	}
}

func testName(t *testing.T) string { return envtesting.ObjectName(t.Name(), 40) }

func TestSampleAndDefaults(t *testing.T) {
	var js v1alpha2.JobSet
	if err := envtesting.ReadYAML(filepath.Join("samples", "jobset.yaml"), &js); err != nil {
		t.Fatal(err)
	}
	js.Namespace = namespace
	if err := k8s.Create(context.Background(), &js); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	// The CRD schema's defaults, as JobSet's.
	if got := js.Spec.ReplicatedJobs[0].GroupName; got != "default" {
		t.Errorf("groupName = %q, want the default %q", got, "default")
	}
	if got := js.Spec.FailurePolicy.RestartStrategy; got != v1alpha2.Recreate {
		t.Errorf("restartStrategy = %q, want %q", got, v1alpha2.Recreate)
	}

	bare := valid("bare")
	bare.Spec.ReplicatedJobs[0].Replicas = 0 // omitted from the JSON: defaulted to 1
	bare.Spec.SuccessPolicy = &v1alpha2.SuccessPolicy{}
	bare.Spec.StartupPolicy = &v1alpha2.StartupPolicy{}
	if err := k8s.Create(context.Background(), bare); err != nil {
		t.Fatal(err)
	}
	if r := bare.Spec.ReplicatedJobs[0].Replicas; r != 1 {
		t.Errorf("replicas = %d, want the default 1", r)
	}
	if op := bare.Spec.SuccessPolicy.Operator; op != v1alpha2.OperatorAll {
		t.Errorf("successPolicy.operator = %q, want %q", op, v1alpha2.OperatorAll)
	}
	if o := bare.Spec.StartupPolicy.StartupPolicyOrder; o != v1alpha2.AnyOrder {
		t.Errorf("startupPolicyOrder = %q, want %q", o, v1alpha2.AnyOrder)
	}
}

func TestSpecRefused(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*v1alpha2.JobSet)
		field  string
		msg    string
	}{
		{"no roles", func(js *v1alpha2.JobSet) { js.Spec.ReplicatedJobs = nil }, "spec.replicatedJobs", "Required"},
		{"bad role name", func(js *v1alpha2.JobSet) { js.Spec.ReplicatedJobs[0].Name = "Leader" }, "spec.replicatedJobs[0].name", "should match"},
		{"duplicate role", func(js *v1alpha2.JobSet) { js.Spec.ReplicatedJobs[1].Name = "leader" }, "spec.replicatedJobs[1]", "Duplicate value"},
		{"negative replicas", func(js *v1alpha2.JobSet) { js.Spec.ReplicatedJobs[1].Replicas = -1 }, "spec.replicatedJobs[1].replicas", "greater than or equal to 0"},
		{"dependsOn on the first role", func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs[0].DependsOn = []v1alpha2.DependsOn{{Name: "workers", Status: v1alpha2.DependsOnReady}}
		}, "spec.replicatedJobs", "the first replicatedJob cannot have dependsOn"},
		{"bad dependsOn status", func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs[1].DependsOn = []v1alpha2.DependsOn{{Name: "leader", Status: "Started"}}
		}, "spec.replicatedJobs[1].dependsOn[0].status", "Unsupported value"},
		{"InOrder with dependsOn", func(js *v1alpha2.JobSet) {
			js.Spec.StartupPolicy = &v1alpha2.StartupPolicy{StartupPolicyOrder: v1alpha2.InOrder}
			js.Spec.ReplicatedJobs[1].DependsOn = []v1alpha2.DependsOn{{Name: "leader", Status: v1alpha2.DependsOnReady}}
		}, "spec", "startupPolicy InOrder and dependsOn cannot be combined"},
		{"bad operator", func(js *v1alpha2.JobSet) { js.Spec.SuccessPolicy = &v1alpha2.SuccessPolicy{Operator: "Most"} }, "spec.successPolicy.operator", "Unsupported value"},
		{"bad action", func(js *v1alpha2.JobSet) {
			js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{Rules: []v1alpha2.FailurePolicyRule{{Action: "Retry"}}}
		}, "spec.failurePolicy.rules[0].action", "Unsupported value"},
		{"bad failure reason", func(js *v1alpha2.JobSet) {
			js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{Rules: []v1alpha2.FailurePolicyRule{{Action: v1alpha2.FailJobSet, OnJobFailureReasons: []string{"OOMKilled"}}}}
		}, "spec.failurePolicy.rules[0].onJobFailureReasons[0]", "Unsupported value"},
		{"bad rule name", func(js *v1alpha2.JobSet) {
			js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{Rules: []v1alpha2.FailurePolicyRule{{Name: "1st", Action: v1alpha2.FailJobSet}}}
		}, "spec.failurePolicy.rules[0].name", "should match"},
		{"negative maxRestarts", func(js *v1alpha2.JobSet) { js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{MaxRestarts: -1} }, "spec.failurePolicy.maxRestarts", "greater than or equal to 0"},
		{"bad restart strategy", func(js *v1alpha2.JobSet) { js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{RestartStrategy: "Rolling"} }, "spec.failurePolicy.restartStrategy", "Unsupported value"},
		{"negative TTL", func(js *v1alpha2.JobSet) { js.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1) }, "spec.ttlSecondsAfterFinished", "greater than or equal to 0"},
		{"bad managedBy", func(js *v1alpha2.JobSet) { js.Spec.ManagedBy = ptr.To("no-slash") }, "spec.managedBy", "should match"},
		{"bad subdomain", func(js *v1alpha2.JobSet) { js.Spec.Network = &v1alpha2.Network{Subdomain: "Not_A_Label"} }, "spec.network.subdomain", "should match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := valid(testName(t))
			tt.modify(js)
			// The functions a webhook would call refuse it too, at the same field.
			if errs := controller.Validate(js); !refusedAt(errs, tt.field) {
				t.Errorf("controller.Validate() = %v, want an error at %s", errs, tt.field)
			}
			envtesting.RequireInvalidWithin(t, k8s.Create(context.Background(), js), tt.field, tt.msg)
		})
	}
}

func TestImmutable(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*v1alpha2.JobSet)
		field  string
		msg    string
	}{
		{"replicas", func(js *v1alpha2.JobSet) { js.Spec.ReplicatedJobs[1].Replicas = 3 }, "spec.replicatedJobs[1]", "field is immutable: replicas"},
		{"template", func(js *v1alpha2.JobSet) { js.Spec.ReplicatedJobs[1].Template.Spec.BackoffLimit = ptr.To[int32](3) },
			"spec.replicatedJobs[1].template.spec", "field is immutable: only parallelism and completions may change"},
		{"a role added", func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, v1alpha2.ReplicatedJob{Name: "more", Replicas: 1, Template: template()})
		}, "spec.replicatedJobs", "field is immutable: the replicatedJobs"},
		{"failure policy added", func(js *v1alpha2.JobSet) { js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{MaxRestarts: 3} }, "spec.failurePolicy", "failurePolicy is immutable"},
		{"managedBy added", func(js *v1alpha2.JobSet) { js.Spec.ManagedBy = ptr.To("example.com/x") }, "spec.managedBy", "managedBy is immutable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			js := valid(testName(t))
			if err := k8s.Create(ctx, js); err != nil {
				t.Fatal(err)
			}
			old := js.DeepCopy()
			tt.modify(js)
			if errs := controller.ValidateUpdate(old, js); !refusedAt(errs, tt.field) {
				t.Errorf("controller.ValidateUpdate() = %v, want an error at %s", errs, tt.field)
			}
			envtesting.RequireInvalidWithin(t, k8s.Update(ctx, js), tt.field, tt.msg)
		})
	}
	// Suspend and the TTL may change.
	ctx := context.Background()
	js := valid("mutable")
	if err := k8s.Create(ctx, js); err != nil {
		t.Fatal(err)
	}
	old := js.DeepCopy()
	js.Spec.Suspend, js.Spec.TTLSecondsAfterFinished = ptr.To(true), ptr.To[int32](60)
	if errs := controller.ValidateUpdate(old, js); len(errs) > 0 {
		t.Errorf("controller.ValidateUpdate(suspend, ttl) = %v", errs)
	}
	if err := k8s.Update(ctx, js); err != nil {
		t.Errorf("updating suspend and ttlSecondsAfterFinished: %v", err)
	}
	// While suspended, a queue (Kueue) places the pods: the templates' scheduling
	// fields may change, in the same update as the resume too; the roles'
	// replicas may not.
	tmpl := &js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec
	tmpl.NodeSelector = map[string]string{"pool": "a"}
	js.Spec.Suspend = ptr.To(false)
	if err := k8s.Update(ctx, js); err != nil {
		t.Errorf("updating a suspended JobSet's template with its resume: %v", err)
	}
	js.Spec.Suspend = ptr.To(true)
	if err := k8s.Update(ctx, js); err != nil {
		t.Fatalf("suspending: %v", err)
	}
	js.Spec.ReplicatedJobs[1].Replicas++
	envtesting.RequireInvalidWithin(t, k8s.Update(ctx, js), "spec.replicatedJobs[1]", "field is immutable: replicas")
}

// refusedAt reports whether errs has an error at field or under it.
func refusedAt(errs field.ErrorList, path string) bool {
	for _, e := range errs {
		if strings.HasPrefix(e.Field, path) {
			return true
		}
	}
	return false
}

// The defaults of the CRD schema are controller.Default's: on what the API
// server returns, Default changes none of the fields the schema defaults,
// and it fills what only JobSet's webhook defaults.
func TestSchemaDefaultsAreDefaults(t *testing.T) {
	js := valid("defaults")
	js.Spec.SuccessPolicy = &v1alpha2.SuccessPolicy{}
	js.Spec.StartupPolicy = &v1alpha2.StartupPolicy{}
	js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{Rules: []v1alpha2.FailurePolicyRule{{Name: "r", Action: v1alpha2.FailJobSet}}}
	if err := k8s.Create(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	got := js.DeepCopy()
	controller.Default(got)
	for i := range js.Spec.ReplicatedJobs {
		if a, b := js.Spec.ReplicatedJobs[i].GroupName, got.Spec.ReplicatedJobs[i].GroupName; a != b {
			t.Errorf("groupName: schema %q, Default %q", a, b)
		}
		if m := got.Spec.ReplicatedJobs[i].Template.Spec.CompletionMode; m == nil || *m != batchv1.IndexedCompletion {
			t.Errorf("Default: completionMode = %v, want Indexed", m)
		}
	}
	if a, b := js.Spec.SuccessPolicy.Operator, got.Spec.SuccessPolicy.Operator; a != b {
		t.Errorf("successPolicy.operator: schema %q, Default %q", a, b)
	}
	if a, b := js.Spec.StartupPolicy.StartupPolicyOrder, got.Spec.StartupPolicy.StartupPolicyOrder; a != b {
		t.Errorf("startupPolicyOrder: schema %q, Default %q", a, b)
	}
	if a, b := js.Spec.FailurePolicy.RestartStrategy, got.Spec.FailurePolicy.RestartStrategy; a != b {
		t.Errorf("restartStrategy: schema %q, Default %q", a, b)
	}
	if errs := controller.Validate(got); len(errs) > 0 {
		t.Errorf("controller.Validate(defaulted) = %v", errs)
	}
	// Defaulted before creation, as a mutating webhook would, it is accepted.
	fresh := valid("defaulted")
	controller.Default(fresh)
	if err := k8s.Create(context.Background(), fresh); err != nil {
		t.Errorf("the API server refuses the defaulted JobSet: %v", err)
	}
}

func TestStatusRules(t *testing.T) {
	ctx := context.Background()
	js := valid("status")
	if err := k8s.Create(ctx, js); err != nil {
		t.Fatal(err)
	}
	js.Status = v1alpha2.JobSetStatus{Restarts: 2, RestartsCountTowardsMax: 1, PreviousInPlaceRestartAttempt: ptr.To[int32](2),
		ReplicatedJobsStatus: []v1alpha2.ReplicatedJobStatus{{Name: "leader", Active: 1}, {Name: "workers", Active: 2}}}
	if err := k8s.Status().Update(ctx, js); err != nil {
		t.Fatalf("a valid status: %v", err)
	}
	tests := []struct {
		name   string
		modify func(*v1alpha2.JobSetStatus)
		field  string
		msg    string
	}{
		{"restarts go back", func(s *v1alpha2.JobSetStatus) { s.Restarts, s.RestartsCountTowardsMax = 1, 1 }, "status.restarts", "restarts may not decrease"},
		{"counted restarts go back", func(s *v1alpha2.JobSetStatus) { s.RestartsCountTowardsMax = 0 }, "status.restartsCountTowardsMax", "restartsCountTowardsMax may not decrease"},
		{"more counted than restarts", func(s *v1alpha2.JobSetStatus) { s.RestartsCountTowardsMax = 3 }, "status.restartsCountTowardsMax", "may not exceed restarts"},
		{"negative count", func(s *v1alpha2.JobSetStatus) { s.ReplicatedJobsStatus[0].Failed = -1 }, "status.replicatedJobsStatus[0].failed", "greater than or equal to 0"},
		{"bad terminal state", func(s *v1alpha2.JobSetStatus) { s.TerminalState = "Done" }, "status.terminalState", "Unsupported value"},
		{"previous in-place attempt goes back", func(s *v1alpha2.JobSetStatus) { s.PreviousInPlaceRestartAttempt = ptr.To[int32](1) },
			"status.previousInPlaceRestartAttempt", "may not decrease"},
		{"negative current in-place attempt", func(s *v1alpha2.JobSetStatus) { s.CurrentInPlaceRestartAttempt = ptr.To[int32](-1) },
			"status.currentInPlaceRestartAttempt", "greater than or equal to 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := js.DeepCopy()
			tt.modify(&bad.Status)
			envtesting.RequireInvalidWithin(t, k8s.Status().Update(ctx, bad), tt.field, tt.msg)
		})
	}
	// A terminal state, once written, stays.
	js.Status.TerminalState = v1alpha2.Failed
	if err := k8s.Status().Update(ctx, js); err != nil {
		t.Fatalf("setting terminalState: %v", err)
	}
	js.Status.TerminalState = v1alpha2.Completed
	envtesting.RequireInvalidWithin(t, k8s.Status().Update(ctx, js), "status.terminalState", "terminalState may not change once set")
}

// withClaim gives js a policy of one claim template named data, which every
// role's container mounts, with an empty retention policy.
func withClaim(js *v1alpha2.JobSet) {
	js.Spec.VolumeClaimPolicies = []v1alpha2.VolumeClaimPolicy{{RetentionPolicy: &v1alpha2.VolumeRetentionPolicy{}, Templates: []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"tier": "fast"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}}}}
	for i := range js.Spec.ReplicatedJobs {
		c := &js.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec.Containers[0]
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	}
}

// Volume claim policies: the templates' metadata survives the API server (the
// schema spells it out, so nothing is pruned), whenDeleted defaults to
// Delete in a retention policy, a template with a namespace is refused, and the policies are
// immutable, by the schema and by controller.ValidateUpdate alike.
func TestVolumeClaimPolicies(t *testing.T) {
	ctx := context.Background()
	js := valid(testName(t))
	withClaim(js)
	if errs := controller.Validate(js); len(errs) > 0 {
		t.Fatalf("controller.Validate() = %v", errs)
	}
	if err := k8s.Create(ctx, js); err != nil {
		t.Fatal(err)
	}
	p := js.Spec.VolumeClaimPolicies[0]
	if tm := p.Templates[0]; tm.Name != "data" || tm.Labels["tier"] != "fast" || tm.Spec.Resources.Requests.Storage().String() != "1Gi" {
		t.Errorf("the stored template = %+v, want its name, labels and spec kept", tm)
	}
	if p.RetentionPolicy == nil || ptr.Deref(p.RetentionPolicy.WhenDeleted, "") != v1alpha2.RetentionPolicyDelete {
		t.Errorf("retentionPolicy = %+v, want whenDeleted defaulted to Delete", p.RetentionPolicy)
	}

	old := js.DeepCopy()
	js.Spec.VolumeClaimPolicies[0].Templates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	if errs := controller.ValidateUpdate(old, js); !refusedAt(errs, "spec.volumeClaimPolicies") {
		t.Errorf("controller.ValidateUpdate(a larger claim) = %v, want an error at spec.volumeClaimPolicies", errs)
	}
	envtesting.RequireInvalidWithin(t, k8s.Update(ctx, js), "spec.volumeClaimPolicies", "Value is immutable")

	bad := valid(testName(t) + "-ns")
	withClaim(bad)
	bad.Spec.VolumeClaimPolicies[0].Templates[0].Namespace = "elsewhere"
	if errs := controller.Validate(bad); !refusedAt(errs, "spec.volumeClaimPolicies[0]") {
		t.Errorf("controller.Validate(a namespaced template) = %v, want an error at spec.volumeClaimPolicies[0]", errs)
	}
	envtesting.RequireInvalidWithin(t, k8s.Create(ctx, bad), "spec.volumeClaimPolicies[0]", "namespace cannot be set for VolumeClaimPolicies templates")
}
