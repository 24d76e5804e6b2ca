package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/jobkit/jobkit/examples/internal/deploytest"
	"github.com/jobkit/jobkit/examples/jobset/upstream"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// sideBySide is the spec.managedBy the side-by-side overlay gives the command.
const sideBySide = "jobkit.dev/jobset-controller"

// TestDeployments renders the two ways of deploying the command on JobSet's
// own API (config/default, in place of JobSet's controller; config/side-by-side,
// beside it) and parses the Deployment's args with the command's own flags: both
// serve jobset.x-k8s.io, with no CRD of their own (JobSet's release installs
// it); the swap takes the JobSets without spec.managedBy and those naming
// JobSet's controller, the side-by-side one only those naming it, and each
// leaves the other's. Both run under the role rbac.go generates: exactly the
// calls of the controller on JobSet's API, nothing of the example's own group.
func TestDeployments(t *testing.T) {
	for _, tc := range []struct {
		variant   string
		managedBy string
		// handles maps a JobSet's spec.managedBy to whether this deployment
		// syncs it.
		handles map[string]bool
	}{
		{variant: "default", managedBy: plaingroup.ControllerName,
			handles: map[string]bool{"": true, plaingroup.ControllerName: true, sideBySide: false, "example.com/other": false}},
		{variant: "side-by-side", managedBy: sideBySide,
			handles: map[string]bool{"": false, plaingroup.ControllerName: false, sideBySide: true, "example.com/other": false}},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			b, err := deploytest.Load(filepath.Join("..", "..", "config", tc.variant))
			if err != nil {
				t.Fatal(err)
			}
			if len(b.CRDs) != 0 {
				t.Errorf("%d CRDs rendered, want none: JobSet's CRD comes from JobSet's release", len(b.CRDs))
			}
			m := b.Container("manager")
			if m == nil {
				t.Fatal("no container manager")
			}
			args := deploytest.Args(m, b.Namespace.Name)
			c, err := parse(args)
			if err != nil {
				t.Fatalf("parse(%q): %v", args, err)
			}
			if c.apiName != upstream.API {
				t.Errorf("--api = %q, want %q", c.apiName, upstream.API)
			}
			if c.flags.ManagedBy != tc.managedBy {
				t.Errorf("--managed-by = %q, want %q", c.flags.ManagedBy, tc.managedBy)
			}
			if c.childManagedBy != "" {
				t.Errorf("--child-managed-by = %q, want none (the kube-controller-manager runs the children)", c.childManagedBy)
			}
			for managedBy, want := range tc.handles {
				s := plaingroup.Spec{ManagedBy: managedBy}
				if got := s.HandledBy(c.flags.ManagedBy); got != want {
					t.Errorf("a JobSet of spec.managedBy %q: synced = %t, want %t", managedBy, got, want)
				}
			}
			want := []string{
				"/persistentvolumeclaims:create",
				"/pods:get", "/pods:list", "/pods:watch",
				"/services:create", "/services:get", "/services:list", "/services:watch",
				"batch/jobs:create", "batch/jobs:delete", "batch/jobs:get", "batch/jobs:list", "batch/jobs:patch", "batch/jobs:watch",
				"events.k8s.io/events:create", "events.k8s.io/events:patch",
				"jobset.x-k8s.io/jobsets/finalizers:update",
				"jobset.x-k8s.io/jobsets/status:update",
				"jobset.x-k8s.io/jobsets:delete", "jobset.x-k8s.io/jobsets:get", "jobset.x-k8s.io/jobsets:list", "jobset.x-k8s.io/jobsets:watch",
			}
			if diff := cmp.Diff(want, granted(b.ClusterRole.Rules)); diff != "" {
				t.Errorf("the ClusterRole %s (-want +got):\n%s", b.ClusterRole.Name, diff)
			}
			lease := []string{"/events:create", "/events:patch", "coordination.k8s.io/leases:create", "coordination.k8s.io/leases:get", "coordination.k8s.io/leases:update"}
			if diff := cmp.Diff(lease, granted(b.Role.Rules)); diff != "" {
				t.Errorf("the leader election Role (-want +got):\n%s", diff)
			}
		})
	}
}

// granted lists the group/resource:verb triples of rules, sorted.
func granted(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, g+"/"+res+":"+v)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
