package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/jobkit/jobkit/controllerruntime/testenv/assets"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command with args (without the program name): the binaries'
// directory on stdout and exit status 0, or the usage (0 for --help, 2 for any
// other argument) or an error (1) on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: jobkit-envtest (no arguments; see the package doc)")
		if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
			return 0
		}
		return 2
	}
	dir, err := assets.Dir(ctx, assets.EnvVersions())
	if err != nil {
		fmt.Fprintln(stderr, "jobkit-envtest:", err)
		return 1
	}
	fmt.Fprintln(stdout, dir)
	return 0
}
