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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// options are the command's flags.
type options struct {
	kcm, jobkit string
	kubeconfig  string
	clusterDir  string
	cases       []jobCase
	limits      []qps
	rounds      int
	timeout     time.Duration
	smoke       bool
	contentType string
	// jobkitContentType is jobkit-clientgo's --kube-api-content-type; empty: its
	// default.
	jobkitContentType string
	// profileDir: --profile.
	profileDir string
	// jobkitArgs are more flags for jobkit-clientgo (--jobkit-args).
	jobkitArgs []string
	// only, when set (--controllers), is the one controller to run ("kcm" or
	// "jobkit"); empty: both, interleaved.
	only string
}

const (
	defaultCases = "nonindexed-100,indexed-100,failures-100,small-50x10,nonindexed-1000,indexed-1000,failures-1000"
	defaultQPS   = "20/30,500/1000"
)

func parseFlags(args []string, output io.Writer) (options, error) {
	fs := flag.NewFlagSet("benchcluster", flag.ContinueOnError)
	fs.SetOutput(output)
	var o options
	dir := os.Getenv("JOBKIT_CLUSTER_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "jobkit-cluster")
	}
	fs.StringVar(&o.kcm, "kcm", "", "the kube-controller-manager binary")
	fs.StringVar(&o.jobkit, "jobkit", "", "the jobkit-clientgo binary")
	fs.StringVar(&o.clusterDir, "cluster-dir", dir, "hack/cluster.sh's state directory (pid files, logs)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "admin kubeconfig (default: CLUSTER-DIR/kubeconfig)")
	cases := fs.String("cases", defaultCases, "comma-separated cases: nonindexed-N, indexed-N, failures-N, small-JxN")
	limits := fs.String("qps", defaultQPS, "comma-separated client limits QPS/burst, the same for both controllers")
	fs.IntVar(&o.rounds, "rounds", 1, "times each case runs under each controller")
	fs.DurationVar(&o.timeout, "timeout", 20*time.Minute, "longest wait for one run's Jobs to finish")
	fs.StringVar(&o.contentType, "kcm-content-type", "", "kube-controller-manager's --kube-api-content-type (default its own, protobuf)")
	fs.StringVar(&o.jobkitContentType, "jobkit-content-type", "", "jobkit-clientgo's --kube-api-content-type (default its own, protobuf)")
	fs.Func("jobkit-args", "more flags for jobkit-clientgo, separated by spaces (e.g. \"--kube-api-max-in-flight=200\")", func(v string) error {
		o.jobkitArgs = append(o.jobkitArgs, strings.Fields(v)...)
		return nil
	})
	fs.StringVar(&o.profileDir, "profile", "", "directory for each run's Go CPU profiles (chunks of 5 s, merged by `go tool pprof` when given them all) and heap profile, of both controllers and of kube-apiserver (RUN-CONTROLLER-apiserver-*)")
	ctrls := fs.String("controllers", "kcm,jobkit", "the controllers to run: kcm,jobkit (both, interleaved), kcm or jobkit (one alone, e.g. to finish a pair whose other half ran before)")
	fs.BoolVar(&o.smoke, "smoke", false, "one Job of 20 pods under each controller at 20/30 (overrides --cases and --qps)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	only, err := pairFlags(*ctrls, o.kcm, o.jobkit, o.rounds)
	if err != nil {
		return o, err
	}
	o.only = only
	if o.kubeconfig == "" {
		o.kubeconfig = filepath.Join(o.clusterDir, "kubeconfig")
	}
	if o.smoke {
		*cases, *limits = "indexed-20", "20/30"
	}
	for _, name := range strings.Split(*cases, ",") {
		c, err := parseCase(strings.TrimSpace(name))
		if err != nil {
			return o, fmt.Errorf("--cases: %w", err)
		}
		o.cases = append(o.cases, c)
	}
	for _, s := range strings.Split(*limits, ",") {
		q, err := parseQPS(strings.TrimSpace(s))
		if err != nil {
			return o, fmt.Errorf("--qps: %w", err)
		}
		o.limits = append(o.limits, q)
	}
	return o, nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "chaos" {
		mainChaos(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "queued" {
		mainQueued(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "groups" {
		mainGroups(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "families" {
		mainFamilies(os.Args[2:])
		return
	}
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcluster:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, o, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcluster:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// mainChaos is `benchcluster chaos`: exit status 1 when a check failed or the run
// could not finish, 2 for bad flags.
func mainChaos(args []string) {
	o, err := parseChaosFlags(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcluster chaos:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := true, error(nil)
	if o.jobs > 0 {
		ok, err = runChaos(ctx, o, os.Stdout)
	}
	if err == nil && o.groups > 0 {
		// The groups run after the Jobs, with controllers of their own.
		var groupsOK bool
		groupsOK, err = runGroupChaos(ctx, o, os.Stdout)
		ok = ok && groupsOK
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchcluster chaos: FAIL: %v (seed %d)\n", err, o.seed)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// newBench connects to the control plane of clusterDir through kubeconfig, finds its
// processes (pid files) and kwok's nodes, and makes the benchmark's namespace, empty;
// the per-run logs go to a directory of CLUSTER-DIR/logs named after prefix and now.
func newBench(ctx context.Context, kubeconfig, clusterDir, prefix string, timeout time.Duration, log io.Writer) (*bench, *rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000 // the benchmark's own calls must not wait
	cfg.UserAgent = "benchcluster"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	b := &bench{cs: cs, kubeconfig: kubeconfig, namespace: "bench", timeout: timeout, log: log,
		logDir: filepath.Join(clusterDir, "logs", prefix+"-"+time.Now().UTC().Format("20060102-150405")), others: map[string]int{}}
	if err := os.MkdirAll(b.logDir, 0o755); err != nil {
		return nil, nil, err
	}
	for _, name := range []string{"kube-apiserver", "kwok", "etcd"} {
		raw, err := os.ReadFile(filepath.Join(clusterDir, "pids", name+".pid"))
		if err != nil {
			return nil, nil, fmt.Errorf("is the cluster up (hack/cluster.sh up)? %w", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil {
			return nil, nil, fmt.Errorf("pid file of %s: %q: %w", name, raw, err)
		}
		b.others[name] = pid
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil {
		return nil, nil, err
	}
	for _, n := range nodes.Items {
		b.nodes = append(b.nodes, n.Name)
	}
	if len(b.nodes) == 0 {
		return nil, nil, errors.New("no node labelled type=kwok: is the cluster up (hack/cluster.sh up)?")
	}
	if err := ensureNamespace(ctx, cs, b.namespace); err != nil {
		return nil, nil, err
	}
	if err := b.cleanup(ctx); err != nil {
		return nil, nil, err
	}
	return b, cfg, nil
}

// run runs every case under both controllers and prints the tables; ok is false when
// a check failed.
func run(ctx context.Context, o options, out, log io.Writer) (ok bool, err error) {
	b, cfg, err := newBench(ctx, o.kubeconfig, o.clusterDir, "bench", o.timeout, log)
	if err != nil {
		return false, err
	}
	if o.profileDir != "" {
		if b.profileDir, err = filepath.Abs(o.profileDir); err != nil {
			return false, err
		}
		if err := os.MkdirAll(b.profileDir, 0o755); err != nil {
			return false, err
		}
		// kube-apiserver profiles itself (--profiling is on by default) for the admin.
		if b.apiserverClient, err = rest.HTTPClientFor(cfg); err != nil {
			return false, err
		}
		b.apiserver = strings.TrimSuffix(cfg.Host, "/")
	}
	profile := o.profileDir != ""
	ctrls := []controller{{Name: "kcm", Bin: o.kcm, ContentType: o.contentType, Profile: profile}, {Name: "jobkit", Bin: o.jobkit, ManagedBy: managedByJobkit, ContentType: o.jobkitContentType, Profile: profile, Extra: o.jobkitArgs}}
	fmt.Fprintf(log, "logs in %s\n", b.logDir)
	var results []result
	seq := 0
	ok = true
	for round := range o.rounds {
		for _, limits := range o.limits {
			for _, c := range o.cases {
				// Interleaved: the controller that goes first alternates.
				order := ctrls
				if (seq/2+round)%2 == 1 {
					order = []controller{ctrls[1], ctrls[0]}
				}
				for _, ctrl := range order {
					if o.only != "" && ctrl.Name != o.only {
						continue
					}
					res, err := b.run(ctx, ctrl, c, limits, seq)
					seq++
					if err != nil {
						return false, fmt.Errorf("%s under %s at %v: %w", c.Name, ctrl.Name, limits, err)
					}
					fmt.Fprintln(log, res.line())
					fmt.Fprintf(log, "  timeline: %v; idle control plane after %v\n", res.Timeline, res.Settled.Round(time.Second))
					for _, p := range res.Problems {
						fmt.Fprintf(log, "  CHECK FAILED: %s\n", p)
						ok = false
					}
					results = append(results, res)
				}
			}
		}
	}
	writeTables(out, results)
	return ok, nil
}

// pairFlags checks the flags of a pair of controllers: --controllers (kcm,jobkit in
// either order, or one of them alone, returned as only), the binaries it needs
// (--kcm, --jobkit) and --rounds.
func pairFlags(ctrls, kcm, jobkit string, rounds int) (only string, err error) {
	switch ctrls {
	case "kcm,jobkit", "jobkit,kcm":
	case "kcm", "jobkit":
		only = ctrls
	default:
		return "", fmt.Errorf("--controllers=%q: want kcm,jobkit, kcm or jobkit", ctrls)
	}
	if (kcm == "" && only != "jobkit") || (jobkit == "" && only != "kcm") {
		return "", errors.New("--kcm and --jobkit are required (one of them with --controllers naming the other)")
	}
	if rounds < 1 {
		return "", fmt.Errorf("--rounds=%d: must be at least 1", rounds)
	}
	return only, nil
}
