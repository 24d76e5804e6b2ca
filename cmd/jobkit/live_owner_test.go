package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	"github.com/jobkit/jobkit/owner"
)

// testLiveOwner explains a custom resource read from a real API server (a CRD
// whose spec uses a Job's field names) with --owner-kind: the object through
// discovery and the dynamic client, its pods by controller reference. admin and
// nobody are kubeconfig files of a user with every right and of one with none.
func testLiveOwner(t *testing.T, cfg *rest.Config, admin, nobody string) {
	ctx := context.Background()
	kind := owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "trainingjobs.ml.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: kind.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "trainingjobs", Singular: "trainingjob", Kind: kind.Kind, ListKind: kind.Kind + "List"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: kind.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	clusterCRD := crd.DeepCopy()
	clusterCRD.Name = "clustertrainingjobs.ml.example.com"
	clusterCRD.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "clustertrainingjobs", Singular: "clustertrainingjob", Kind: "ClusterTrainingJob", ListKind: "ClusterTrainingJobList"}
	clusterCRD.Spec.Scope = apiextensionsv1.ClusterScoped
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd, clusterCRD}}); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	const ns = "explain-owner"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"ml.example.com/run": "resnet"}
	podSpec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "worker", Image: "trainer"}}}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ml.example.com/v1alpha1", "kind": "TrainingJob",
		"metadata": map[string]any{"name": "resnet", "namespace": ns},
		"spec": map[string]any{
			"framework": "pytorch", "completionMode": "Indexed", "completions": int64(2), "parallelism": int64(2),
			"managedBy": "ml.example.com/trainer",
			"selector":  map[string]any{"matchLabels": map[string]any{"ml.example.com/run": "resnet"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"ml.example.com/run": "resnet"}},
				"spec":     map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "worker", "image": "trainer"}}},
			},
		},
		"status": map[string]any{"active": int64(1), "ready": int64(1), "terminating": int64(0), "startTime": "2026-03-01T10:00:00Z"},
	}}
	gvr := schema.GroupVersionResource{Group: kind.Group, Version: kind.Version, Resource: "trainingjobs"}
	created, err := dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	makePod := func(name, index string, refs []metav1.OwnerReference, podLabels map[string]string, status corev1.PodStatus) {
		t.Helper()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: podLabels, OwnerReferences: refs,
			Annotations: map[string]string{"batch.kubernetes.io/job-completion-index": index}}, Spec: podSpec}
		if len(refs) > 0 {
			pod.Finalizers = []string{kind.Finalizer}
		}
		createPod(t, cs, ns, pod, status)
	}
	ours := []metav1.OwnerReference{kind.NewControllerRef(created)}
	earlier := []metav1.OwnerReference{{APIVersion: "ml.example.com/v1alpha1", Kind: kind.Kind, Name: "resnet", UID: "0e0e0e0e-0000-0000-0000-000000000001", Controller: ptr.To(true)}}
	aJob := []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "resnet", UID: "0e0e0e0e-0000-0000-0000-000000000002", Controller: ptr.To(true)}}
	makePod("resnet-0", "0", ours, labels, corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}})
	makePod("resnet-orphan", "1", nil, labels, corev1.PodStatus{Phase: corev1.PodRunning})
	makePod("resnet-earlier", "1", earlier, labels, corev1.PodStatus{Phase: corev1.PodRunning})
	// Pods the explanation does not read: a batch/v1 Job's of the same name, and
	// one with neither owner nor matching labels.
	makePod("job-pod", "1", aJob, labels, corev1.PodStatus{Phase: corev1.PodRunning})
	makePod("unrelated", "0", nil, nil, corev1.PodStatus{Phase: corev1.PodRunning})

	flags := []string{"--owner-kind", "ml.example.com/v1alpha1/TrainingJob", "--owner-finalizer", kind.Finalizer, "--now=2026-03-01T10:05:00Z"}
	t.Run("explanation", func(t *testing.T) {
		r := explainJSON(t, append([]string{"resnet", "-n", ns, "--kubeconfig", admin}, flags...)...)
		if r.Job.Kind != kind.Kind || r.Job.APIVersion != "ml.example.com/v1alpha1" || r.Job.Finalizer != kind.Finalizer || r.Controller != "ml.example.com/trainer" {
			t.Errorf("report names kind %s %s, finalizer %s, controller %s; want the TrainingJob's", r.Job.APIVersion, r.Job.Kind, r.Job.Finalizer, r.Controller)
		}
		wantClasses := map[string][]explain.Class{
			"resnet-0":       {explain.ClassActive, explain.ClassReady},
			"resnet-orphan":  {explain.ClassOrphan, explain.ClassActive},
			"resnet-earlier": {explain.ClassIgnored},
		}
		if diff := cmp.Diff(wantClasses, podClasses(r)); diff != "" {
			t.Errorf("classes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"adopt resnet-orphan"}, decisionList(r)); diff != "" {
			t.Errorf("decisions (-want +got):\n%s", diff)
		}
		var diags []string
		for _, d := range r.Diagnostics {
			diags = append(diags, d.Kind)
		}
		if diff := cmp.Diff([]string{explain.DiagFinalizerJobDeleted}, diags); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})
	// The what-if run of the object read live: the orphan adopted, both indexes
	// done, the status writes naming the kind.
	t.Run("steps", func(t *testing.T) {
		r := explainJSON(t, append([]string{"resnet", "-n", ns, "--kubeconfig", admin, "--steps", "10"}, flags...)...)
		if len(r.Steps) == 0 {
			t.Fatal("no step")
		}
		if got := r.Steps[0].Calls; len(got) == 0 || got[0] != "PatchPod resnet-orphan: owner reference (adopt or release)" {
			t.Errorf("first step's calls = %q, want the orphan's adoption first", got)
		}
		var status int
		for _, s := range r.Steps {
			for _, c := range s.Calls {
				if strings.HasPrefix(c, "UpdateStatus TrainingJob resnet: ") {
					status++
				}
				if strings.HasPrefix(c, "UpdateJobStatus") || strings.HasPrefix(c, "CreatePod") {
					t.Errorf("step %d: call %q (a status write of a Job, or a pod created for indexes that have one)", s.Step, c)
				}
			}
		}
		if status == 0 {
			t.Error("no status write of the TrainingJob")
		}
		last := r.Steps[len(r.Steps)-1]
		if last.Finished != "Complete (CompletionsReached)" || last.Pods != "Succeeded=2" {
			t.Errorf("last step: finished %q, pods %q; want Complete (CompletionsReached), Succeeded=2", last.Finished, last.Pods)
		}
	})
	errorCases := []struct {
		name, kubeconfig, object, kind, wantStderr string
	}{
		{name: "missing object", kubeconfig: admin, object: "nothere", kind: "ml.example.com/v1alpha1/TrainingJob",
			wantStderr: "jobkit explain: TrainingJob.ml.example.com explain-owner/nothere: not found\n"},
		{name: "kind not served", kubeconfig: admin, object: "resnet", kind: "ml.example.com/v1alpha1/InferenceJob",
			wantStderr: "jobkit explain: --owner-kind: the cluster serves no kind InferenceJob in ml.example.com/v1alpha1\n"},
		{name: "cluster-scoped kind", kubeconfig: admin, object: "resnet", kind: "ml.example.com/v1alpha1/ClusterTrainingJob",
			wantStderr: "jobkit explain: --owner-kind: ClusterTrainingJob.ml.example.com is cluster-scoped: an owner of pods is namespaced, as its pods\n"},
		{name: "version not served", kubeconfig: admin, object: "resnet", kind: "ml.example.com/v9/TrainingJob",
			wantStderr: "jobkit explain: --owner-kind: the resources of ml.example.com/v9: not found\n"},
		{name: "no access", kubeconfig: nobody, object: "resnet", kind: "ml.example.com/v1alpha1/TrainingJob",
			wantStderr: "jobkit explain: TrainingJob.ml.example.com explain-owner/resnet: no access (forbidden): "},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(ctx, []string{"explain", tt.object, "-n", ns, "--kubeconfig", tt.kubeconfig, "--owner-kind", tt.kind, "--owner-finalizer", kind.Finalizer}, &stdout, &stderr)
			if code != exitError {
				t.Errorf("exit code %d, want %d", code, exitError)
			}
			if !strings.HasPrefix(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr = %q, want it to start with %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}
