package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	nsDoc = `apiVersion: v1
kind: Namespace
metadata:
  labels:
    app.kubernetes.io/managed-by: kustomize
  name: x-system
`
	deployDoc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: x-controller-manager
  namespace: x-system
spec:
  replicas: 1
  template:
    spec:
      containers:
      - image: jobkit/x:latest
        imagePullPolicy: IfNotPresent
        name: manager
`
	policyDoc = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: x-allow-metrics-traffic
  namespace: x-system
`
)

func TestDocuments(t *testing.T) {
	got := documents([]byte(nsDoc + "---\n" + deployDoc))
	want := []string{"Namespace/x-system", "Deployment/x-controller-manager"}
	if len(got) != len(want) {
		t.Fatalf("documents() = %d objects, want %d", len(got), len(want))
	}
	for i, d := range got {
		if d.key() != want[i] {
			t.Errorf("documents()[%d] = %s, want %s", i, d.key(), want[i])
		}
	}
}

func TestChartFiles(t *testing.T) {
	c := controller{name: "x", config: "examples/x/config", what: "X"}
	base := documents([]byte(nsDoc + "---\n" + deployDoc))
	tests := []struct {
		name      string
		full      []doc
		wantFiles map[string][]string // file -> substrings it must hold
		wantErr   string
	}{
		{
			name: "base and a NetworkPolicy",
			full: documents([]byte(nsDoc + "---\n" + deployDoc + "---\n" + policyDoc)),
			wantFiles: map[string][]string{
				"templates/deployment-controller-manager.yaml": {
					"namespace: {{ .Release.Namespace }}", `image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"`,
					"imagePullPolicy: {{ .Values.image.pullPolicy }}", "replicas: {{ .Values.replicas }}"},
				"templates/networkpolicy-allow-metrics-traffic.yaml": {"{{- if .Values.networkPolicy.enable }}\n", "{{- end }}\n"},
				"values.yaml": {"repository: jobkit/x\n", "tag: latest\n", "pullPolicy: IfNotPresent\n", "replicas: 1\n", "networkPolicy:\n  enable: false"},
				"Chart.yaml":  {"name: x\n", `appVersion: "latest"`},
			},
		},
		{
			name:    "an optional object of an unknown kind",
			full:    documents([]byte(nsDoc + "---\n" + deployDoc + "---\nkind: Secret\nmetadata:\n  name: s\n")),
			wantErr: "Secret/s comes from an optional base",
		},
		{
			name:    "a template action in a manifest",
			full:    documents([]byte(nsDoc + "---\n" + strings.Replace(deployDoc, "name: manager", "name: '{{x}}'", 1))),
			wantErr: "holds {{",
		},
		{
			name:    "an optional base that changes the Deployment",
			full:    documents([]byte(nsDoc + "---\n" + strings.Replace(deployDoc, "x-controller-manager", "x-other", 1))),
			wantErr: "comes from an optional base",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := chartFiles(c, base, tt.full)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("chartFiles() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := files["templates/namespace-system.yaml"]; ok {
				t.Error("the Namespace has a template; the release's namespace is used")
			}
			for f, subs := range tt.wantFiles {
				for _, s := range subs {
					if !strings.Contains(string(files[f]), s) {
						t.Errorf("%s = %q, want it to contain %q", f, files[f], s)
					}
				}
			}
		})
	}
}

// Every controller with variants is a controller of the list, and each variant
// has a directory of its own (not default, whose file is install.yaml); a
// variant outside the controller's config names a kustomization.
func TestVariantsNameControllers(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "examples")); err != nil {
		// hack/compat.sh tests a copy of the core without examples/; the main run
		// checks the variants' paths.
		t.Skip("the checkout has no examples/ (a copy of the core alone)")
	}
	names := map[string]bool{}
	for _, c := range controllers {
		names[c.name] = true
	}
	for name, vs := range variants {
		if !names[name] {
			t.Errorf("variants of %q: no such controller", name)
		}
		for _, v := range vs {
			if v.dir == "" || v.dir == "default" || strings.Contains(v.dir, "/") || v.what == "" {
				t.Errorf("%s: variant %+v: want a directory of config/ other than default, and what it changes", name, v)
			}
			if v.path != "" {
				if _, err := os.Stat(filepath.Join(root, v.path, "kustomization.yaml")); err != nil {
					t.Errorf("%s: variant %+v: its path holds no kustomization: %v", name, v, err)
				}
			}
		}
	}
}
