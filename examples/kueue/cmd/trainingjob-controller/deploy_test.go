package main

import (
	"path/filepath"
	"testing"

	"github.com/jobkit/jobkit/examples/kueue/internal/kueuetest"
)

// TestDeployOverlay renders config/trainingjob (examples/trainingjob's base with
// the component config/kueue) and checks it runs this command: the image
// examples/Dockerfile builds from it, args that this command's flags accept
// with --kueue on, and the mounted Kueue Configuration being
// config/kueue/kueue-config.yaml (kueuetest.LoadOverlay checks the mount and
// the binding of the reconciler's RBAC).
func TestDeployOverlay(t *testing.T) {
	o, err := kueuetest.LoadOverlay(filepath.Join("..", "..", "config", "trainingjob"), filepath.Join("..", "..", "config", "kueue", "kueue-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "jobkit/kueue-trainingjob-controller:latest"; o.Image != want {
		t.Errorf("image %q, want %q", o.Image, want)
	}
	if o.Namespace != "trainingjob-system" || o.ServiceAccount != "trainingjob-controller-manager" {
		t.Errorf("Deployment in %s as %s, want trainingjob-system as trainingjob-controller-manager", o.Namespace, o.ServiceAccount)
	}
	_, kf, err := parse(o.Args)
	if err != nil {
		t.Fatalf("the Deployment's args %q: %v", o.Args, err)
	}
	if !kf.Enabled {
		t.Errorf("the Deployment's args %q do not turn --kueue on", o.Args)
	}
}
