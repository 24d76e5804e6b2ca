package envtesting

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
)

// RequireSetupFailsWithoutCRD starts an API server of its own with no
// CustomResourceDefinition, builds a manager whose scheme holds client-go's types
// and addToScheme's, and calls setup with it: setup must fail at once with an error
// that meta.IsNoMatchError recognizes and that contains each of want (what to
// install, and how). A controller's Setup that waited for its caches instead would
// hold the test until its timeout.
func RequireSetupFailsWithoutCRD(t *testing.T, addToScheme func(*runtime.Scheme) error, setup func(ctrl.Manager) error, want ...string) {
	t.Helper()
	bare := StartT(t, Options{AddToScheme: addToScheme})
	mgr, err := ctrl.NewManager(bare.Config, ctrl.Options{Scheme: bare.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	err = setup(mgr)
	if err == nil {
		t.Fatal("Setup() = nil without the CRD, want an error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Setup() = %v, want it to contain %q", err, w)
		}
	}
	if !meta.IsNoMatchError(err) {
		t.Errorf("Setup() = %v: meta.IsNoMatchError is false, want true", err)
	}
}
