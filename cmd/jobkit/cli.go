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

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
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

Another kind of owner (a custom resource whose controller is built on jobkit) is
explained with --owner-kind GROUP/VERSION/KIND and --owner-finalizer NAME. Its object
is read by the field names of a batch/v1 Job (spec.completions, parallelism,
completionMode, backoffLimit, backoffLimitPerIndex, maxFailedIndexes,
podFailurePolicy, successPolicy, podReplacementPolicy, suspend,
activeDeadlineSeconds, selector, template, managedBy; status) unless a field
mapping says where it keeps them: --map spec.completions=spec.workers,
--map spec.completionMode==Indexed (a literal), or --mapping FILE (YAML: ownerKind,
ownerFinalizer and fields: {JOBFIELD: FIELD}). Live, the object is found by
discovery and read with the dynamic client, and the pods of its namespace are kept
by controller reference. --steps runs it on the in-memory cluster as an object of
its kind, with its pods' controller references and finalizer.

Installed as kubectl-jobkit on the PATH (a copy or a symlink of jobkit), it runs as
the kubectl plugin: kubectl jobkit explain ...

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
	ownerKind               string
	ownerFinalizer          string
	maps                    stringList
	mappingFile             string
	// set are the flags given on the command line, by name.
	set map[string]bool
	// mapping is the field mapping of --map and --mapping.
	mapping explain.Mapping
}

// run is the command run as jobkit.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runAs(ctx, "jobkit", args, stdout, stderr)
}

// commandName is how the command names itself in its messages: "kubectl jobkit"
// when run as the kubectl plugin kubectl-jobkit (`kubectl jobkit explain ...`
// runs it with the same arguments), else "jobkit".
func commandName(program string) string {
	// Either separator: the name may come from a Windows path.
	base := program[strings.LastIndexAny(program, `/\`)+1:]
	base = strings.TrimSuffix(base, ".exe")
	if plugin, ok := strings.CutPrefix(base, "kubectl-"); ok && plugin != "" {
		return "kubectl " + plugin
	}
	return "jobkit"
}

// runAs runs the command invoked as program (its os.Args[0]): under any name it
// behaves the same, and only its messages name it as commandName says.
func runAs(ctx context.Context, program string, args []string, stdout, stderr io.Writer) int {
	self := commandName(program)
	usage := strings.ReplaceAll(usage, "  jobkit explain", "  "+self+" explain")
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		// Asked for: the usage, and success, as explain -h answers.
		fmt.Fprint(stderr, usage)
		return exitOK
	}
	if len(args) == 0 || args[0] != "explain" {
		fmt.Fprintf(stderr, "%s: want a subcommand: explain\n\n%s", self, usage)
		return exitUsage
	}
	var f cliFlags
	fs := flag.NewFlagSet(self+" explain", flag.ContinueOnError)
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
	fs.DurationVar(&f.backoffBase, "backoff-base", plainbackoff.DefaultBase, "pod failure backoff after the first failure")
	fs.DurationVar(&f.backoffMax, "backoff-max", plainbackoff.DefaultMax, "longest pod failure backoff")
	fs.BoolVar(&f.unsatisfied, "unsatisfied-expectations", false, "plan as a controller that has not yet seen some of its own creations or deletions")
	fs.Var(&f.assume, "assume", "what-if outcome applied before planning, SELECTOR:OUTCOME[:KEY=VALUE]... (index=3:fail:exit=42, oldest=2:succeed, pod=NAME:delete, all:ready); repeatable")
	fs.IntVar(&f.steps, "steps", 0, "what-if: run N syncs on an in-memory cluster (reconcile/reconciletest) from this state and print each step")
	fs.DurationVar(&f.stepDuration, "step-duration", 10*time.Second, "with --steps: how far the clock moves after each sync")
	fs.StringVar(&f.ownerKind, "owner-kind", "batch/v1/Job", "kind of the owner to explain, GROUP/VERSION/KIND (ml.examples.jobkit.dev/v1alpha1/TrainingJob), VERSION/KIND for the core group; its object is read by a batch/v1 Job's field names unless --map or --mapping says otherwise")
	fs.StringVar(&f.ownerFinalizer, "owner-finalizer", "", "with a --owner-kind other than batch/v1/Job (required there): the tracking finalizer its controller puts on its pods")
	fs.Var(&f.maps, "map", "with --owner-kind: where the owner keeps a batch/v1 Job field, JOBFIELD=FIELD (spec.completions=spec.workers), JOBFIELD==LITERAL (spec.completionMode==Indexed) or JOBFIELD= (not there); repeatable, over --mapping")
	fs.StringVar(&f.mappingFile, "mapping", "", "a field mapping file (YAML: ownerKind, ownerFinalizer, fields: {JOBFIELD: FIELD or =LITERAL}); its kind and finalizer apply unless --owner-kind and --owner-finalizer are given")
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
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if len(positional) > 1 {
		fmt.Fprintf(stderr, "%s explain: want at most one Job name, got %q\n", self, positional)
		return exitUsage
	}
	name := ""
	if len(positional) == 1 {
		name = positional[0]
	}
	opts, err := f.options()
	if err != nil {
		fmt.Fprintf(stderr, "%s explain: %v\n", self, err)
		return exitUsage
	}
	if f.output != "text" && f.output != "json" && f.output != "yaml" {
		fmt.Fprintf(stderr, "%s explain: -o: unknown output %q (want text, json or yaml)\n", self, f.output)
		return exitUsage
	}
	if f.steps < 0 {
		fmt.Fprintf(stderr, "%s explain: --steps: must not be negative, got %d\n", self, f.steps)
		return exitUsage
	}

	in, err := f.load(ctx, name, opts.Owner)
	if err != nil {
		fmt.Fprintf(stderr, "%s explain: %v\n", self, err)
		return exitError
	}
	report, err := explain.Explain(in.owner, in.pods, opts)
	if err != nil {
		fmt.Fprintf(stderr, "%s explain: %v\n", self, err)
		return exitError
	}
	if f.steps > 0 {
		so, err := f.stepOptions()
		if err != nil {
			fmt.Fprintf(stderr, "%s explain: %v\n", self, err)
			return exitUsage
		}
		report.Steps, err = explain.Steps(ctx, in.owner, in.pods, opts, so)
		if err != nil {
			fmt.Fprintf(stderr, "%s explain: --steps: %v\n", self, err)
			return exitError
		}
	}
	if err := write(stdout, f.output, report); err != nil {
		fmt.Fprintf(stderr, "%s explain: %v\n", self, err)
		return exitError
	}
	if in.ignored != "" {
		fmt.Fprintf(stderr, "%s explain: note: the input %s\n", self, in.ignored)
	}
	return exitOK
}

func (f *cliFlags) options() (explain.Options, error) {
	opts := explain.Options{
		Controller:              f.managedBy,
		Now:                     time.Now(),
		Backoff:                 plainbackoff.Policy{Base: f.backoffBase, Max: f.backoffMax},
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
	kind, err := f.owner()
	if err != nil {
		return opts, err
	}
	opts.Owner = kind
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

// input is what load read: a batch/v1 Job, or the workload of an owner of
// another kind, and the pods.
type input struct {
	// owner is the owner to explain: plan.JobWorkload of a batch/v1 Job.
	owner *plan.Workload
	pods  []*corev1.Pod
	// ignored says which kinds of the files were read and ignored (Objects.IgnoredHint).
	ignored string
}

// load reads the owner and its pods from the files, or from the cluster when there
// are none. kind is the zero owner.Kind for a batch/v1 Job.
func (f *cliFlags) load(ctx context.Context, name string, kind owner.Kind) (input, error) {
	if len(f.files) == 0 {
		if name == "" {
			noun := "Job"
			if kind != (owner.Kind{}) {
				noun = kind.Kind
			}
			return input{}, fmt.Errorf("want a %s: a NAME (read from the cluster) or -f FILE", noun)
		}
		if kind != (owner.Kind{}) {
			w, pods, err := loadLiveOwner(ctx, f.kubeconfig, f.kubeContext, f.namespace, name, kind, f.mapping)
			return input{owner: &w, pods: pods}, err
		}
		job, pods, err := loadLive(ctx, f.kubeconfig, f.kubeContext, f.namespace, name)
		if err != nil {
			return input{}, err
		}
		return input{owner: plan.JobWorkload(job), pods: pods}, nil
	}
	objs := explain.Objects{Owner: kind}
	for _, path := range f.files {
		if err := readFile(path, &objs); err != nil {
			return input{}, err
		}
	}
	if kind != (owner.Kind{}) {
		obj, err := objs.PickOwner(f.namespace, name)
		if err != nil {
			return input{}, err
		}
		w, err := explain.WorkloadOf(obj, f.mapping)
		return input{owner: &w, pods: objs.Pods, ignored: objs.IgnoredHint()}, err
	}
	job, err := objs.Pick(f.namespace, name)
	if err != nil {
		return input{}, err
	}
	return input{owner: plan.JobWorkload(job), pods: objs.Pods, ignored: objs.IgnoredHint()}, nil
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
