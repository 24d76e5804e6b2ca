package controller_test

import (
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/jobset/controller"
)

// On an API server without the CRD, Setup fails at once and says what to install
// and how (the manager would otherwise wait for its caches and time out).
func TestSetupWithoutTheCRD(t *testing.T) {
	t.Parallel()
	envtesting.RequireSetupFailsWithoutCRD(t, v1alpha2.AddToScheme, func(mgr ctrl.Manager) error {
		_, err := controller.Setup(mgr, controller.Options{SkipNameValidation: true})
		return err
	},
		"jobset: Setup: the API server does not serve jobset.examples.jobkit.dev/v1alpha2, kind JobSet",
		"the CustomResourceDefinition jobsets.jobset.examples.jobkit.dev is not installed",
		"kubectl apply -f examples/jobset/config/crd/",
	)
}
