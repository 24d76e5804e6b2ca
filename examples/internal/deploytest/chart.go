package deploytest

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Installer is dist/NAME/install.yaml, the install manifest hack/deploy renders
// from the controller's config/default, decoded.
func Installer(name string) ([]*unstructured.Unstructured, error) {
	return InstallerFile(name, "install.yaml")
}

// InstallerFile is the install manifest dist/NAME/FILE, decoded:
// install-VARIANT.yaml is the one hack/deploy renders from an overlay of the
// controller's config/default.
func InstallerFile(name, file string) ([]*unstructured.Unstructured, error) {
	path := filepath.Join(RepoRoot(), "dist", name, file)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decode(bytes.NewReader(data), path)
}

// RenderChart renders the Helm chart dist/NAME/chart, as `helm template -n
// namespace` would, with the values of its values.yaml and set (each top-level
// key of set merged into the value of the same key, one level deep:
// {"prometheus": {"enable": true}}). The charts hack/deploy writes use no
// function of Helm's, only .Values, .Release.Namespace and .Release.Service, so
// text/template renders them as Helm does; a missing value is an error.
func RenderChart(name, namespace string, set map[string]map[string]any) ([]*unstructured.Unstructured, error) {
	dir := filepath.Join(RepoRoot(), "dist", name, "chart")
	raw, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		return nil, err
	}
	values := map[string]any{}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		return nil, fmt.Errorf("%s/values.yaml: %w", dir, err)
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		v, ok := values[k].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s/values.yaml: no map %q to set %v in", dir, k, set[k])
		}
		maps.Copy(v, set[k])
	}
	data := map[string]any{
		"Values":  values,
		"Release": map[string]any{"Namespace": namespace, "Service": "Helm"},
	}
	files, err := filepath.Glob(filepath.Join(dir, "templates", "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no templates (%v)", dir, err)
	}
	var out bytes.Buffer
	for _, f := range files {
		tmpl, err := template.New(filepath.Base(f)).Option("missingkey=error").ParseFiles(f)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		if err := tmpl.Execute(&out, data); err != nil {
			return nil, err
		}
		out.WriteString("\n")
	}
	return decode(&out, "the templates of "+dir)
}
