package controller_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
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
	bare := envtesting.StartT(t, envtesting.Options{AddToScheme: v1alpha1.AddToScheme})
	mgr, err := ctrl.NewManager(bare.Config, ctrl.Options{Scheme: bare.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	_, err = controller.Setup(mgr, jkcr.Options[*v1alpha1.TrainingJob]{SkipNameValidation: true})
	if err == nil {
		t.Fatal("Setup() = nil without the CRD, want an error")
	}
	for _, want := range []string{
		"trainingjob: Setup: the API server does not serve ml.examples.jobkit.dev/v1alpha1, kind TrainingJob",
		"the CustomResourceDefinition trainingjobs.ml.examples.jobkit.dev is not installed",
		"kubectl apply -f examples/trainingjob/config/crd/",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Setup() = %v, want it to contain %q", err, want)
		}
	}
	if !meta.IsNoMatchError(err) {
		t.Errorf("Setup() = %v: meta.IsNoMatchError is false, want true", err)
	}
}
