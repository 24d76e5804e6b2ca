// Command demo runs a batch/v1 Job to completion with jobkit's Reconciler and
// prints its progress: pods created, running, succeeded and failed, pods counted
// (tracking finalizer removed), backoff waits, the Job's counters and its final
// conditions.
//
// By default it runs on reconciletest's in-memory cluster with a simulated kubelet
// and clock: the run takes well under a second and prints the same lines every
// time. With --kubeconfig it runs on that cluster: it starts the controller-runtime
// controller in-process for --managed-by, creates the Job in --namespace with that
// managedBy, follows it until it has finished, and deletes it (unless --keep). The
// pods then run on the cluster's nodes.
//
//	make demo                                   # in-memory
//	go run ./demo --kubeconfig ~/.kube/config   # a real cluster (from examples/)
//
// The Job is Indexed: 4 completions, 2 pods at a time, backoffLimitPerIndex 2; the
// container of index 1 fails on its first two attempts, to show the backoff.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/jobkit/jobkit/examples/controllerruntime"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "run on the cluster of this kubeconfig instead of the in-memory cluster")
	managedBy := fs.String("managed-by", controllerruntime.DefaultManagedBy, "the spec.managedBy name of the in-process controller and the demo Job")
	namespace := fs.String("namespace", "default", "namespace of the demo Job (real cluster)")
	image := fs.String("image", "busybox:1.36", "container image with a POSIX sh (real cluster)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long (real cluster)")
	keep := fs.Bool("keep", false, "keep the Job and its pods at the end (real cluster)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // asked for the usage, which Parse printed
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var err error
	if *kubeconfig == "" {
		fmt.Fprintln(stdout, "jobkit demo on the in-memory cluster (simulated kubelet and clock)")
		err = runMemory(ctx, stdout, *managedBy)
	} else {
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		err = runCluster(ctx, stdout, clusterOptions{
			kubeconfig: *kubeconfig, managedBy: *managedBy, namespace: *namespace, image: *image, keep: *keep,
		})
	}
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	return 0
}
