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

// queuedOptions are the flags of `benchcluster queued`.
type queuedOptions struct {
	kcm, jobkit, kueue, trainingJob string
	crds                            []string
	kubeconfig, clusterDir          string
	c                               queuedCase
	sides                           []string
	limits                          qps
	rounds                          int
	timeout                         time.Duration
}

func parseQueuedFlags(args []string, output io.Writer) (queuedOptions, error) {
	fs := flag.NewFlagSet("benchcluster queued", flag.ContinueOnError)
	fs.SetOutput(output)
	var o queuedOptions
	dir := os.Getenv("JOBKIT_CLUSTER_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "jobkit-cluster")
	}
	fs.StringVar(&o.kcm, "kcm", "", "the kube-controller-manager binary (its Job controller, side kcm)")
	fs.StringVar(&o.jobkit, "jobkit", "", "the jobkit-clientgo binary (side jobkit)")
	fs.StringVar(&o.kueue, "kueue", "", "Kueue's manager (hack/cluster-bins.sh --kueue), under every side")
	fs.StringVar(&o.trainingJob, "trainingjob", "", "examples/kueue's trainingjob-controller, run with --kueue (side owner)")
	crds := fs.String("crds", "", "comma-separated CRD files to apply first (Kueue's, the TrainingJob's)")
	fs.StringVar(&o.clusterDir, "cluster-dir", dir, "hack/cluster.sh's state directory (pid files, logs)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "admin kubeconfig (default: CLUSTER-DIR/kubeconfig)")
	fs.IntVar(&o.c.Owners, "owners", 50, "owners queued")
	fs.IntVar(&o.c.Pods, "pods", 20, "pods of each owner (one CPU each)")
	fs.IntVar(&o.c.Admitted, "admitted", 10, "owners the ClusterQueue's CPU quota admits at a time")
	sides := fs.String("sides", "kcm,jobkit,owner", "comma-separated sides: kcm, jobkit, owner")
	limits := fs.String("qps", "500/1000", "client limits QPS/burst of every controller, Kueue's manager among them")
	fs.IntVar(&o.rounds, "rounds", 1, "times the case runs under each side")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "longest wait for one run's owners to finish")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if err := o.c.validate(); err != nil {
		return o, err
	}
	var err error
	if o.limits, err = parseQPS(*limits); err != nil {
		return o, fmt.Errorf("--qps: %w", err)
	}
	need := map[string]string{"--kueue": o.kueue}
	for _, s := range strings.Split(*sides, ",") {
		switch s = strings.TrimSpace(s); s {
		case queuedKCM:
			need["--kcm"] = o.kcm
		case queuedJobkit:
			need["--jobkit"] = o.jobkit
		case queuedOwner:
			need["--trainingjob"] = o.trainingJob
		default:
			return o, fmt.Errorf("--sides: %q: want kcm, jobkit or owner", s)
		}
		o.sides = append(o.sides, s)
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

// mainQueued is `benchcluster queued`: exit status 1 when a check failed or the run
// could not finish, 2 for bad flags.
func mainQueued(args []string) {
	o, err := parseQueuedFlags(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcluster queued:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := runQueued(ctx, o, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcluster queued:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// kueueProc is Kueue's manager (sigs.k8s.io/kueue/cmd/kueue) with the configuration
// of kueueConfig, its certificate self-signed in the run's directory as JobSet's
// controller's is (jobsetProc): the manager does not start without one, and its
// /readyz waits for the webhook server.
//
// With internal certificate management off, Kueue v0.17's main also loads a metrics
// certificate from the fixed path /etc/kueue/metrics/certs (even with the metrics
// server off) and exits without one. Rather than write into the machine's /etc, the
// manager runs in a mount namespace of its own (unshare -m, which needs root) where an
// overlay on /etc adds kueue/metrics/certs from the run's directory; the namespace and
// its mount end with the process. unshare and sh exec into the manager: the process
// measured is Kueue's. The path of the configuration file of each start goes to
// *config, which queuedTrainingJobProc passes on.
func kueueProc(bin string, config *string) groupProc {
	return groupProc{Name: "kueue", Bin: "unshare", ReadyURL: "/readyz",
		Args: func(kubeconfig string, limits qps, probePort int, dir string) ([]string, error) {
			certDir := filepath.Join(dir, "certs")
			if err := selfSignedCert(certDir); err != nil {
				return nil, err
			}
			upper, work := filepath.Join(dir, "etc-upper"), filepath.Join(dir, "etc-work")
			if err := selfSignedCert(filepath.Join(upper, "kueue", "metrics", "certs")); err != nil {
				return nil, err
			}
			if err := os.MkdirAll(work, 0o700); err != nil {
				return nil, err
			}
			webhookPort, err := freePort()
			if err != nil {
				return nil, err
			}
			path := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(path, []byte(kueueConfig(webhookPort, certDir, probePort, limits)), 0o644); err != nil {
				return nil, err
			}
			*config = path
			mount := fmt.Sprintf(`mount -t overlay overlay -o lowerdir=/etc,upperdir=%s,workdir=%s /etc && exec "$0" "$@"`, upper, work)
			return []string{"-m", "sh", "-c", mount, bin, "--config", path, "--kubeconfig", kubeconfig, "--zap-log-level", "info"}, nil
		}}
}

// queuedTrainingJobProc is examples/kueue's trainingjob-controller with --kueue: it
// runs jobkit's TrainingJob controller and, in the same manager, Kueue's job
// reconciler for the kind (kueue.Setup), which writes the TrainingJobs' Workloads and
// unsuspends an owner once Kueue's manager admitted its Workload. --kueue-config is
// *config, the file Kueue's manager of the same run reads (kueueProc, started
// before it): the reconciler follows the manager's settings, as a deployment's
// does (examples/kueue/config/kueue mounts one file for both).
func queuedTrainingJobProc(bin string, config *string) groupProc {
	p := trainingJobProc(bin)
	inner := p.Args
	p.Args = func(kubeconfig string, limits qps, probePort int, dir string) ([]string, error) {
		if *config == "" {
			return nil, fmt.Errorf("no Kueue configuration: Kueue's manager starts before trainingjob-controller --kueue")
		}
		args, err := inner(kubeconfig, limits, probePort, dir)
		return append(args, "--kueue", "--kueue-config="+*config), err
	}
	return p
}

// runQueued runs the case under every side, interleaved, and prints the table.
func runQueued(ctx context.Context, o queuedOptions, out, log io.Writer) (bool, error) {
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
	b := &bench{cs: cs, kubeconfig: o.kubeconfig, namespace: "queued", timeout: o.timeout, log: log,
		logDir: filepath.Join(o.clusterDir, "logs", "queued-"+time.Now().UTC().Format("20060102-150405")), others: map[string]int{}}
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
	for _, ns := range []string{b.namespace, "kueue-system"} {
		if err := ensureNamespace(ctx, cs, ns); err != nil {
			return false, err
		}
	}
	g := &groupBench{bench: b, dyn: dyn, limits: o.limits, sides: map[string][]starter{}}
	if err := g.installCRDs(ctx, o.crds); err != nil {
		return false, err
	}
	q := &queuedBench{groupBench: g, c: o.c}
	if err := q.cleanup(ctx); err != nil {
		return false, err
	}
	if err := q.createQueues(ctx); err != nil {
		return false, err
	}
	// Kueue's manager talks to kube-apiserver through versionProxy (queuedproxy.go).
	vp, err := startVersionProxy(cfg)
	if err != nil {
		return false, err
	}
	defer vp.stop()
	kueueKubeconfig, err := vp.kubeconfig(b.logDir)
	if err != nil {
		return false, err
	}
	proc := func(p groupProc, kubeconfig string) starter {
		return starter{Name: p.Name, Measured: true, Start: func(ctx context.Context, run string) (*running, error) {
			return p.start(ctx, kubeconfig, b.logDir, run, o.limits)
		}}
	}
	jobCtrl := func(c controller) starter {
		return starter{Name: c.Name, Measured: true, Start: func(ctx context.Context, run string) (*running, error) {
			return c.start(ctx, o.kubeconfig, b.logDir, run, o.limits)
		}}
	}
	var kueueConfigFile string // the current run's, shared by Kueue's manager and the TrainingJob side
	kueue := proc(kueueProc(o.kueue, &kueueConfigFile), kueueKubeconfig)
	g.sides[queuedKCM] = []starter{kueue, jobCtrl(controller{Name: "kcm", Bin: o.kcm})}
	g.sides[queuedJobkit] = []starter{kueue, jobCtrl(controller{Name: "jobkit", Bin: o.jobkit, ManagedBy: managedByJobkit})}
	g.sides[queuedOwner] = []starter{kueue, proc(queuedTrainingJobProc(o.trainingJob, &kueueConfigFile), o.kubeconfig)}
	fmt.Fprintf(log, "logs in %s\n", b.logDir)
	var results []queuedResult
	seq, ok := 0, true
	for round := range o.rounds {
		n := len(o.sides)
		for k := range n {
			side := o.sides[(k+round)%n]
			res, err := q.run(ctx, side, seq)
			seq++
			if err != nil {
				return false, fmt.Errorf("%s under %s: %w", o.c.Name(), side, err)
			}
			fmt.Fprintln(log, res.line())
			for _, p := range res.Problems {
				fmt.Fprintf(log, "  CHECK FAILED: %s\n", p)
				ok = false
			}
			results = append(results, res)
		}
	}
	writeQueuedTable(out, results)
	return ok, nil
}
