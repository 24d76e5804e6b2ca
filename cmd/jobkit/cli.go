package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/cmd/jobkit/explain"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the explanation could not be made (bad input, no Job, no access)
	exitUsage = 2 // bad flags
)

const usage = `Usage:
  jobkit explain -f FILE [-f FILE]... [NAME] [flags]
  jobkit explain NAME [-n NAMESPACE] [--kubeconfig FILE] [--context NAME] [flags]

Says what a Job controller built on jobkit would do next with a batch/v1 Job, and why:
the pods by class, each decision with its reason, the status change field by field,
when it would look again, what blocks progress and what looks wrong.

Flags:
`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

type cliFlags struct {
	files                   stringList
	namespace               string
	kubeconfig, kubeContext string
	output                  string
	managedBy               string
	now                     string
	backoffBase, backoffMax time.Duration
	unsatisfied             bool
	assume                  stringList
	steps                   int
	stepDuration            time.Duration
	kubelet                 string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "explain" {
		fmt.Fprintf(stderr, "jobkit: want a subcommand: explain\n\n%s", usage)
		return exitUsage
	}
	var f cliFlags
	fs := flag.NewFlagSet("jobkit explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	fs.Var(&f.files, "f", "a file with the Job and its pods (YAML or JSON, kubectl get -o yaml, List objects, several documents); repeatable; - reads stdin")
	fs.Var(&f.files, "filename", "same as -f")
	fs.StringVar(&f.namespace, "n", "", "namespace of the Job (live: default from the kubeconfig context)")
	fs.StringVar(&f.namespace, "namespace", "", "same as -n")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, as kubectl)")
	fs.StringVar(&f.kubeContext, "context", "", "kubeconfig context")
	fs.StringVar(&f.output, "o", "text", "output: text, json or yaml")
	fs.StringVar(&f.output, "output", "text", "same as -o")
	fs.StringVar(&f.managedBy, "managed-by", "", "controller name to plan as (default: the Job's spec.managedBy, or "+batchv1.JobControllerName+")")
	fs.StringVar(&f.now, "now", "", "time of the planned sync, RFC 3339 (default: the current time)")
	fs.DurationVar(&f.backoffBase, "backoff-base", backoff.DefaultBase, "pod failure backoff after the first failure")
	fs.DurationVar(&f.backoffMax, "backoff-max", backoff.DefaultMax, "longest pod failure backoff")
	fs.BoolVar(&f.unsatisfied, "unsatisfied-expectations", false, "plan as a controller that has not yet seen some of its own creations or deletions")
	fs.Var(&f.assume, "assume", "what-if outcome applied before planning, SELECTOR:OUTCOME[:KEY=VALUE]... (index=3:fail:exit=42, oldest=2:succeed, pod=NAME:delete, all:ready); repeatable")
	fs.IntVar(&f.steps, "steps", 0, "what-if: run N syncs on an in-memory cluster (reconcile/reconciletest) from this state and print each step")
	fs.DurationVar(&f.stepDuration, "step-duration", 10*time.Second, "with --steps: how far the clock moves after each sync")
	fs.StringVar(&f.kubelet, "kubelet", explain.KubeletSucceed, "with --steps: what the simulated kubelet does with the pods: succeed (start, then succeed), fail=CODE (start, then fail with CODE) or idle")

	// Flags and the Job name may come in any order, as with kubectl.
	var positional []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(positional) > 1 {
		fmt.Fprintf(stderr, "jobkit explain: want at most one Job name, got %q\n", positional)
		return exitUsage
	}
	name := ""
	if len(positional) == 1 {
		name = positional[0]
	}
	opts, err := f.options()
	if err != nil {
		fmt.Fprintf(stderr, "jobkit explain: %v\n", err)
		return exitUsage
	}
	if f.output != "text" && f.output != "json" && f.output != "yaml" {
		fmt.Fprintf(stderr, "jobkit explain: -o: unknown output %q (want text, json or yaml)\n", f.output)
		return exitUsage
	}
	if f.steps < 0 {
		fmt.Fprintf(stderr, "jobkit explain: --steps: must not be negative, got %d\n", f.steps)
		return exitUsage
	}

	job, pods, err := f.load(ctx, name)
	if err != nil {
		fmt.Fprintf(stderr, "jobkit explain: %v\n", err)
		return exitError
	}
	report, err := explain.Explain(job, pods, opts)
	if err != nil {
		fmt.Fprintf(stderr, "jobkit explain: %v\n", err)
		return exitError
	}
	if f.steps > 0 {
		so, err := f.stepOptions()
		if err != nil {
			fmt.Fprintf(stderr, "jobkit explain: %v\n", err)
			return exitUsage
		}
		report.Steps, err = explain.Steps(ctx, job, pods, opts, so)
		if err != nil {
			fmt.Fprintf(stderr, "jobkit explain: --steps: %v\n", err)
			return exitError
		}
	}
	if err := write(stdout, f.output, report); err != nil {
		fmt.Fprintf(stderr, "jobkit explain: %v\n", err)
		return exitError
	}
	return exitOK
}

func (f *cliFlags) options() (explain.Options, error) {
	opts := explain.Options{
		Controller:              f.managedBy,
		Now:                     time.Now(),
		Backoff:                 backoff.Policy{Base: f.backoffBase, Max: f.backoffMax},
		ExpectationsUnsatisfied: f.unsatisfied,
	}
	if f.backoffBase <= 0 || f.backoffMax <= 0 {
		return opts, fmt.Errorf("--backoff-base and --backoff-max must be positive, got %s and %s", f.backoffBase, f.backoffMax)
	}
	if f.now != "" {
		t, err := time.Parse(time.RFC3339, f.now)
		if err != nil {
			return opts, fmt.Errorf("--now: %q is not an RFC 3339 time (2026-01-02T15:04:05Z): %w", f.now, err)
		}
		opts.Now = t
	}
	for _, s := range f.assume {
		a, err := explain.ParseAssumption(s)
		if err != nil {
			return opts, err
		}
		opts.Assume = append(opts.Assume, a)
	}
	return opts, nil
}

func (f *cliFlags) stepOptions() (explain.StepOptions, error) {
	so := explain.StepOptions{Steps: f.steps, StepDuration: f.stepDuration, Kubelet: f.kubelet}
	if f.stepDuration <= 0 {
		return so, fmt.Errorf("--step-duration: must be positive, got %s", f.stepDuration)
	}
	if code, ok := strings.CutPrefix(f.kubelet, explain.KubeletFail+"="); ok {
		n, err := strconv.ParseInt(code, 10, 32)
		if err != nil || n == 0 {
			return so, fmt.Errorf("--kubelet: fail=CODE needs a non-zero exit code, got %q", code)
		}
		so.Kubelet, so.ExitCode = explain.KubeletFail, int32(n)
	}
	return so, nil
}

// load reads the Job and its pods from the files, or from the cluster when there
// are none.
func (f *cliFlags) load(ctx context.Context, name string) (*batchv1.Job, []*corev1.Pod, error) {
	if len(f.files) == 0 {
		if name == "" {
			return nil, nil, errors.New("want a Job: a NAME (read from the cluster) or -f FILE")
		}
		return loadLive(ctx, f.kubeconfig, f.kubeContext, f.namespace, name)
	}
	var objs explain.Objects
	for _, path := range f.files {
		if err := readFile(path, &objs); err != nil {
			return nil, nil, err
		}
	}
	job, err := objs.Pick(f.namespace, name)
	if err != nil {
		return nil, nil, err
	}
	return job, objs.Pods, nil
}

func readFile(path string, objs *explain.Objects) error {
	if path == "-" {
		return explain.ReadObjects("stdin", os.Stdin, objs)
	}
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	return explain.ReadObjects(path, fh, objs)
}

func write(w io.Writer, format string, r *explain.Report) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	default:
		return r.Text(w)
	}
}
