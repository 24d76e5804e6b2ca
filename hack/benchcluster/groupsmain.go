package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// groupOptions are the flags of `benchcluster groups`.
type groupOptions struct {
	kcm, jobkit, jobset, jobkitJobSet, trainingJob string
	crds                                           []string
	kubeconfig, clusterDir                         string
	cases                                          []groupCase
	sides                                          []string
	limits                                         qps
	rounds                                         int
	timeout                                        time.Duration
}

func parseGroupFlags(args []string, output io.Writer) (groupOptions, error) {
	fs := flag.NewFlagSet("benchcluster groups", flag.ContinueOnError)
	fs.SetOutput(output)
	var o groupOptions
	dir := os.Getenv("JOBKIT_CLUSTER_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "jobkit-cluster")
	}
	fs.StringVar(&o.kcm, "kcm", "", "the kube-controller-manager binary (its Job controller, and its garbage collector under every side)")
	fs.StringVar(&o.jobkit, "jobkit", "", "the jobkit-clientgo binary")
	fs.StringVar(&o.jobset, "jobset", "", "JobSet's controller (hack/cluster-bins.sh --jobset)")
	fs.StringVar(&o.jobkitJobSet, "jobkit-jobset", "", "examples/jobset/upstream's jobset-controller")
	fs.StringVar(&o.trainingJob, "trainingjob", "", "examples/trainingjob's trainingjob-controller (the one-owner side; empty: no such side)")
	crds := fs.String("crds", "", "comma-separated CRD files to apply first (JobSet's, the TrainingJob's)")
	fs.StringVar(&o.clusterDir, "cluster-dir", dir, "hack/cluster.sh's state directory (pid files, logs)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "admin kubeconfig (default: CLUSTER-DIR/kubeconfig)")
	cases := fs.String("cases", defaultGroupCases, "comma-separated group cases: leader-64, group-100x10, restart-1000, restart-4x5")
	sides := fs.String("sides", "jobset,jobkit,owner", "comma-separated sides: jobset, jobkit, owner")
	limits := fs.String("qps", "500/1000", "client limits QPS/burst of every controller")
	fs.IntVar(&o.rounds, "rounds", 1, "times each case runs under each side")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "longest wait for one step of one run")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	var err error
	if o.cases, err = parseGroupCases(*cases); err != nil {
		return o, fmt.Errorf("--cases: %w", err)
	}
	if o.limits, err = parseQPS(*limits); err != nil {
		return o, fmt.Errorf("--qps: %w", err)
	}
	for _, s := range strings.Split(*sides, ",") {
		switch s = strings.TrimSpace(s); s {
		case sideJobSet, sideJobkit, sideOwner:
			o.sides = append(o.sides, s)
		default:
			return o, fmt.Errorf("--sides: %q: want jobset, jobkit or owner", s)
		}
	}
	need := map[string]string{"--kcm": o.kcm}
	for _, s := range o.sides {
		switch s {
		case sideJobSet:
			need["--jobset"] = o.jobset
		case sideJobkit:
			need["--jobkit"], need["--jobkit-jobset"] = o.jobkit, o.jobkitJobSet
		case sideOwner:
			need["--trainingjob"] = o.trainingJob
		}
	}
	for flagName, v := range need {
		if v == "" {
			return o, fmt.Errorf("%s is required for the sides %v", flagName, o.sides)
		}
	}
	if o.rounds < 1 {
		return o, fmt.Errorf("--rounds=%d: must be at least 1", o.rounds)
	}
	if *crds != "" {
		o.crds = strings.Split(*crds, ",")
	}
	if o.kubeconfig == "" {
		o.kubeconfig = filepath.Join(o.clusterDir, "kubeconfig")
	}
	return o, nil
}

// mainGroups is `benchcluster groups`: exit status 1 when a check failed or the run
// could not finish, 2 for bad flags.
func mainGroups(args []string) {
	o, err := parseGroupFlags(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcluster groups:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := runGroups(ctx, o, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcluster groups:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// runGroups runs every case under every side, interleaved, and prints the table.
func runGroups(ctx context.Context, o groupOptions, out, log io.Writer) (bool, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return false, fmt.Errorf("load %s: %w", o.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.UserAgent = "benchcluster"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	b := &bench{cs: cs, kubeconfig: o.kubeconfig, namespace: "groups", timeout: o.timeout, log: log,
		logDir: filepath.Join(o.clusterDir, "logs", "groups-"+time.Now().UTC().Format("20060102-150405")), others: map[string]int{}}
	if err := os.MkdirAll(b.logDir, 0o755); err != nil {
		return false, err
	}
	for _, name := range []string{"kube-apiserver", "kwok", "etcd"} {
		raw, err := os.ReadFile(filepath.Join(o.clusterDir, "pids", name+".pid"))
		if err != nil {
			return false, fmt.Errorf("is the cluster up (hack/cluster.sh up)? %w", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil {
			return false, fmt.Errorf("pid file of %s: %q: %w", name, raw, err)
		}
		b.others[name] = pid
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil {
		return false, err
	}
	for _, n := range nodes.Items {
		b.nodes = append(b.nodes, n.Name)
	}
	if len(b.nodes) == 0 {
		return false, errors.New("no node labelled type=kwok: is the cluster up (hack/cluster.sh up)?")
	}
	if err := ensureNamespace(ctx, cs, b.namespace); err != nil {
		return false, err
	}
	g := &groupBench{bench: b, dyn: dyn, limits: o.limits, sides: map[string][]starter{}}
	if err := g.installCRDs(ctx, o.crds); err != nil {
		return false, err
	}
	if err := g.cleanupGroups(ctx); err != nil {
		return false, err
	}
	proc := func(p groupProc, measured bool) starter {
		return starter{Name: p.Name, Measured: measured, Start: func(ctx context.Context, run string) (*running, error) {
			return p.start(ctx, o.kubeconfig, b.logDir, run, o.limits)
		}}
	}
	jobCtrl := func(c controller) starter {
		return starter{Name: c.Name, Measured: true, Start: func(ctx context.Context, run string) (*running, error) {
			return c.start(ctx, o.kubeconfig, b.logDir, run, o.limits)
		}}
	}
	gc := proc(gcProc(o.kcm), false)
	g.sides[sideJobSet] = []starter{gc, jobCtrl(controller{Name: "kcm", Bin: o.kcm}), proc(jobsetProc(o.jobset), true)}
	g.sides[sideJobkit] = []starter{gc, jobCtrl(controller{Name: "jobkit", Bin: o.jobkit, ManagedBy: managedByJobkit}), proc(jobkitJobSetProc(o.jobkitJobSet), true)}
	g.sides[sideOwner] = []starter{gc, proc(trainingJobProc(o.trainingJob), true)}
	fmt.Fprintf(log, "logs in %s\n", b.logDir)
	var results []groupResult
	seq, ok := 0, true
	for round := range o.rounds {
		for ci, c := range o.cases {
			// Interleaved: the side that goes first turns with each case and round.
			n := len(o.sides)
			for k := range n {
				side := o.sides[(k+ci+round)%n]
				res, err := g.run(ctx, c, side, seq)
				seq++
				if err != nil {
					return false, fmt.Errorf("%s under %s: %w", c.Name, side, err)
				}
				fmt.Fprintln(log, res.line())
				for _, f := range res.Facts {
					fmt.Fprintf(log, "  %s\n", f)
				}
				for _, p := range res.Problems {
					fmt.Fprintf(log, "  CHECK FAILED: %s\n", p)
					ok = false
				}
				results = append(results, res)
			}
		}
	}
	if !writeGroupTables(out, results) {
		ok = false
	}
	return ok, nil
}
