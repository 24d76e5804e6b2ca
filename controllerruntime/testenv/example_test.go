package testenv_test

import (
	"fmt"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
)

// An API server for a test, with the CRDs of a directory installed. Starting one
// takes seconds (and, the first time without binaries, a build of about 12
// minutes), so this example only compiles.
func ExampleStart() {
	if testenv.StartTimeout == 0 { // never: keeps the example from running
		env, cfg, err := testenv.Start("testdata/crds")
		if err != nil {
			panic(err)
		}
		defer func() { _ = env.Stop() }()
		fmt.Println(cfg.Host)
	}
	fmt.Println(testenv.StartTimeout)
	// Output:
	// 3m0s
}
