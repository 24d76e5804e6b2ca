package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// chaosOptions are the flags of `benchcluster chaos`.
type chaosOptions struct {
	jobkit        string
	kubeconfig    string
	clusterDir    string
	clusterScript string
	seed          uint64
	jobs          int
	kills         int
	minGap        time.Duration
	maxGap        time.Duration
	restartAPI    bool
	limits        qps
	timeout       time.Duration
	smoke         bool
	chaosGroupOptions
}

func parseChaosFlags(args []string, output io.Writer) (chaosOptions, error) {
	fs := flag.NewFlagSet("benchcluster chaos", flag.ContinueOnError)
	fs.SetOutput(output)
	var o chaosOptions
	dir := os.Getenv("JOBKIT_CLUSTER_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "jobkit-cluster")
	}
	fs.StringVar(&o.jobkit, "jobkit", "", "the jobkit-clientgo binary")
	fs.StringVar(&o.clusterDir, "cluster-dir", dir, "hack/cluster.sh's state directory")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "admin kubeconfig (default: CLUSTER-DIR/kubeconfig)")
	fs.StringVar(&o.clusterScript, "cluster-script", "hack/cluster.sh", "hack/cluster.sh, run as `restart-apiserver` once in the run")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the Jobs, the moments of the kills and the restart (0: drawn from the clock and printed)")
	fs.IntVar(&o.jobs, "jobs", 56, "Jobs in the run, the shapes in turn (0: the groups alone)")
	fs.IntVar(&o.kills, "kills", 24, "SIGKILLs of the controller")
	fs.DurationVar(&o.minGap, "min-gap", 500*time.Millisecond, "shortest time from a controller start to its kill")
	fs.DurationVar(&o.maxGap, "max-gap", 4*time.Second, "longest time from a controller start to its kill")
	fs.BoolVar(&o.restartAPI, "restart-apiserver", true, "restart kube-apiserver once, halfway through the kills")
	limits := fs.String("qps", "50/100", "the controller's client QPS/burst")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "longest run, from the first Job to the checks")
	fs.BoolVar(&o.smoke, "smoke", false, "one Indexed Job of 100 pods, one kill when half its pods exist, no restart of kube-apiserver, at 20/30, --timeout 3m unless set")
	o.registerGroupFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if o.jobkit == "" {
		return o, errors.New("--jobkit is required")
	}
	var err error
	if o.limits, err = parseQPS(*limits); err != nil {
		return o, fmt.Errorf("--qps: %w", err)
	}
	switch {
	case o.jobs < 0 || o.jobs == 0 && o.groups == 0:
		return o, fmt.Errorf("--jobs=%d --groups=%d: want no negative number and at least one Job or group", o.jobs, o.groups)
	case o.kills < 0:
		return o, fmt.Errorf("--kills=%d: must not be negative", o.kills)
	case o.minGap <= 0 || o.maxGap < o.minGap:
		return o, fmt.Errorf("--min-gap=%v --max-gap=%v: want 0 < min-gap <= max-gap", o.minGap, o.maxGap)
	case o.timeout <= 0:
		return o, fmt.Errorf("--timeout=%v: must be positive", o.timeout)
	}
	if err := o.checkGroupFlags(); err != nil {
		return o, err
	}
	if o.kubeconfig == "" {
		o.kubeconfig = filepath.Join(o.clusterDir, "kubeconfig")
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	if o.smoke {
		o.jobs, o.kills, o.restartAPI, o.limits = 1, 1, false, qps{QPS: 20, Burst: 30}
		o.groups, o.groupKills = min(o.groups, 1), 2
		timeoutSet := false
		fs.Visit(func(f *flag.Flag) { timeoutSet = timeoutSet || f.Name == "timeout" })
		if !timeoutSet {
			o.timeout = 3 * time.Minute // the test command's budget, not the chaos run's
		}
	}
	return o, nil
}
