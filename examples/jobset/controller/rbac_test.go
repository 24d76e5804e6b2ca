package controller_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The cluster-wide kubebuilder markers of rbac.go and the ClusterRole of
// config/rbac/role.yaml (the role the integration tests run the controller
// under) grant the same permissions.
func TestRBACMarkersMatchTheRole(t *testing.T) {
	src, err := os.ReadFile("rbac.go")
	if err != nil {
		t.Fatal(err)
	}
	var fromMarkers []string
	for line := range strings.Lines(string(src)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "// +kubebuilder:rbac:")
		if !ok {
			continue
		}
		fields := map[string]string{}
		for kv := range strings.SplitSeq(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			fields[k] = strings.Trim(v, `"`)
		}
		if fields["namespace"] != "" {
			continue // the leader election Role, the second object of role.yaml
		}
		for _, verb := range strings.Split(fields["verbs"], ";") {
			fromMarkers = append(fromMarkers, fields["groups"]+"/"+fields["resources"]+":"+verb)
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		t.Fatal(err)
	}
	var fromRole []string
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					fromRole = append(fromRole, g+"/"+res+":"+v)
				}
			}
		}
	}
	slices.Sort(fromMarkers)
	slices.Sort(fromRole)
	if len(fromMarkers) == 0 || !slices.Equal(fromMarkers, fromRole) {
		t.Errorf("rbac.go markers grant %v, role.yaml %v", fromMarkers, fromRole)
	}
}
