package controller_test

import (
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	jkcr "github.com/jobkit/jobkit/controllerruntime"

	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
)

// On an API server without the CRD, Setup fails at once and says what to install
// and how (the manager would otherwise wait for its caches and time out).
func TestSetupWithoutTheCRD(t *testing.T) {
	t.Parallel()
	envtesting.RequireSetupFailsWithoutCRD(t, v1alpha1.AddToScheme, func(mgr ctrl.Manager) error {
		_, err := controller.Setup(mgr, jkcr.Options[*v1alpha1.TrainingJob]{SkipNameValidation: true})
		return err
	},
		"trainingjob: Setup: the API server does not serve ml.examples.jobkit.dev/v1alpha1, kind TrainingJob",
		"the CustomResourceDefinition trainingjobs.ml.examples.jobkit.dev is not installed",
		"kubectl apply -f examples/trainingjob/config/crd/",
	)
}
