package securemetrics_test

import (
	"fmt"

	"github.com/jobkit/jobkit/controllerruntime/securemetrics"
)

// Metrics over HTTPS, for clients the API server authenticates and authorizes.
func ExampleOptions() {
	o := securemetrics.Options(":8443")
	fmt.Println(o.BindAddress, o.SecureServing, o.FilterProvider != nil)
	// Output:
	// :8443 true true
}
