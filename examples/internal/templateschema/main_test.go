package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"sigs.k8s.io/yaml"
)

const crdFile = "../../jobset/config/crd/jobset.examples.jobkit.dev_jobsets.yaml"

// The committed CRD is what patch makes of it (patch is idempotent), and the
// API server's own CRD validation accepts it: every rule compiles and the
// cost it estimates for them is within its budget (the bounds on the
// declared strings and lists are what keep it there).
func TestCRDAsTheAPIServerValidatesIt(t *testing.T) {
	want, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(tmp, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := patch(tmp); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(tmp); !bytes.Equal(got, want) {
		t.Errorf("patch(%s) changed it: run hack/generate.sh", crdFile)
	}
	var v1 apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(want, &v1); err != nil {
		t.Fatal(err)
	}
	v1.Status.StoredVersions = []string{"v1alpha2"}
	var in apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1, &in, nil); err != nil {
		t.Fatal(err)
	}
	for _, e := range validation.ValidateCustomResourceDefinition(context.Background(), &in) {
		t.Errorf("the API server refuses the CRD: %v", e)
	}
}

// The rules compare every field of the template but the mutable ones, each
// level by its k8s.io/api type; CEL's reserved words are escaped.
func TestTemplateSchemaRules(t *testing.T) {
	s := templateSchema("d")
	rulesAt := func(keys ...string) string {
		var b strings.Builder
		for _, r := range dig(s, keys...).([]any) {
			b.WriteString(r.(object)["rule"].(string) + "\n")
		}
		return b.String()
	}
	job := rulesAt("properties", "spec", "x-kubernetes-validations")
	pod := rulesAt("properties", "spec", "properties", "template", "properties", "spec", "x-kubernetes-validations")
	meta := rulesAt("properties", "spec", "properties", "template", "properties", "metadata", "x-kubernetes-validations")
	for _, c := range []struct {
		rules, field string
		compared     bool
	}{
		{job, "backoffLimit", true}, {job, "podFailurePolicy", true}, {job, "managedBy", true},
		{job, "self.parallelism == oldSelf.parallelism", true}, // in the elastic rules only
		{pod, "containers", true}, {pod, "affinity", true}, {pod, "restartPolicy", true},
		{pod, "nodeSelector", false}, {pod, "tolerations", false}, {pod, "schedulingGates", false},
		{meta, "__namespace__", true}, {meta, "name", true}, {meta, "labels", false}, {meta, "annotations", false},
	} {
		if got := strings.Contains(c.rules, c.field); got != c.compared {
			t.Errorf("rules mention %s: %t, want %t", c.field, got, c.compared)
		}
	}
	if !strings.Contains(job, "has(self.backoffLimit) == has(oldSelf.backoffLimit)") {
		t.Errorf("the JobSpec rules do not compare backoffLimit:\n%s", job)
	}
}
