package crd_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/jobkit/jobkit/examples/internal/crd"
)

// A controller's Setup asks the manager's RESTMapper (mgr.GetRESTMapper()); here,
// one that knows no kind, as an API server without the CRD.
func ExampleRequire() {
	err := crd.Require(meta.NewDefaultRESTMapper(nil), jobSets)
	fmt.Println(crd.IsNotInstalled(err))
	fmt.Println(err)
	// Output:
	// true
	// the API server does not serve jobset.examples.jobkit.dev/v1alpha2, kind JobSet: the CustomResourceDefinition jobsets.jobset.examples.jobkit.dev is not installed (or does not serve v1alpha2); install it with `kubectl apply -f examples/jobset/config/crd/` (from the jobkit repository) and start again
}
