package main

import (
	"context"
	"fmt"
	"os"
)

// Explaining a finished Job from a file, as `jobkit explain -f` does: the pods by
// class, what the next sync would do, and what looks wrong.
func Example_explainFile() {
	code := run(context.Background(), []string{"explain", "-f", "testdata/finished.yaml", "--now=2026-03-01T10:05:00Z"}, os.Stdout, os.Stdout)
	fmt.Println("exit code", code)
	// Output:
	// Job default/report (NonIndexed, completions 2, parallelism 2, finished: Complete)
	// planned as controller "kubernetes.io/job-controller" (spec.managedBy unset) at 2026-03-01T10:05:00Z
	//
	// Pods (3):
	//   succeeded (2):
	//     report-p1
	//     report-p2
	//   finalizer-left (1):
	//     report-p2 (the Job has finished: not counted again, only its finalizer is removed)
	//   ignored (1):
	//     report-old (Failed, finalizer, controlled by an earlier Job report (uid cccccccc-0000-0000-0000-000000000001))
	//
	// Decisions (in execution order):
	//   remove-finalizer report-p2: job finished
	//
	// Status: unchanged
	//
	// Next sync: on the next change of the Job or its pods
	//
	// Blocked:
	//   - the Job has finished (Complete); only the tracking finalizers of its pods are left to remove
	//
	// Diagnostics:
	//   - [finalizer-after-finish] pod report-p2 keeps the tracking finalizer after the Job finished (Complete); this sync removes it
	//   - [finalizer-job-deleted] pod report-old keeps the tracking finalizer of a deleted Job report (uid cccccccc-0000-0000-0000-000000000001): controlling Job no longer exists; the orphan cleanup of the Job controller removes it
	// exit code 0
}

// Bad input is an error on stderr and exit code 1.
func Example_badInput() {
	code := run(context.Background(), []string{"explain", "-f", "testdata/no-such-file.yaml"}, os.Stdout, os.Stdout)
	fmt.Println("exit code", code)
	// Output:
	// jobkit explain: open testdata/no-such-file.yaml: no such file or directory
	// exit code 1
}
