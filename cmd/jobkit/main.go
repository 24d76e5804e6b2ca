// Command jobkit is jobkit's command-line tool. Its one subcommand, explain, says
// what a Job controller built on jobkit would do next with a batch/v1 Job, and why:
//
//	jobkit explain -f job.yaml -f pods.yaml
//	jobkit explain NAME -n NAMESPACE [--kubeconfig FILE] [--context NAME]
//
// Run `jobkit explain -h` for every flag.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
