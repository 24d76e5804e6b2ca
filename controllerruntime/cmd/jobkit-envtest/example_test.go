package main

import (
	"context"
	"fmt"
	"os"
)

// --help prints the usage and exits 0; any other argument is a usage error.
func Example_help() {
	fmt.Println(run(context.Background(), []string{"--help"}, os.Stdout, os.Stdout))
	fmt.Println(run(context.Background(), []string{"extra"}, os.Stdout, os.Stdout))
	// Output:
	// usage: jobkit-envtest (no arguments; see the package doc)
	// 0
	// usage: jobkit-envtest (no arguments; see the package doc)
	// 2
}
