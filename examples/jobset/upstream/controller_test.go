package upstream_test

import (
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/jobset/controller"
	"github.com/jobkit/jobkit/examples/jobset/upstream"
)

// Without JobSet's CRD, Setup fails at once and says what to install and how.
func TestSetupWithoutCRD(t *testing.T) {
	envtesting.RequireSetupFailsWithoutCRD(t, jobset.AddToScheme, func(mgr ctrl.Manager) error {
		_, err := upstream.Setup(mgr, controller.Options{})
		return err
	}, "jobsets.jobset.x-k8s.io", "hack/jobset-crd.sh")
}

func TestSetupNilManager(t *testing.T) {
	if _, err := upstream.Setup(nil, controller.Options{}); err == nil {
		t.Error("Setup(nil) = nil error, want one")
	}
}
