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
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// familyOptions are the flags of `benchcluster families`.
type familyOptions struct {
	kcm, jobkit string
	kubeconfig  string
	clusterDir  string
	families    []familyCase
	rounds      int
	timeout     time.Duration
	only        string
}

// familyLimits are both controllers' client limits in the families: the writes of a
// Job of 4 pods never wait for the limiter.
var familyLimits = qps{QPS: 500, Burst: 1000}

// smokeFamilies are the families of --smoke: one that writes every kind (pod
// creates, finalizer removals, deletions, status, events), under each controller
// in about 25 s.
var smokeFamilies = []string{"podfailurepolicy-failjob"}

func parseFamilyFlags(args []string, output io.Writer) (familyOptions, error) {
	fs := flag.NewFlagSet("benchcluster families", flag.ContinueOnError)
	fs.SetOutput(output)
	var o familyOptions
	dir := os.Getenv("JOBKIT_CLUSTER_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "jobkit-cluster")
	}
	fs.StringVar(&o.kcm, "kcm", "", "the kube-controller-manager binary")
	fs.StringVar(&o.jobkit, "jobkit", "", "the jobkit-clientgo binary")
	fs.StringVar(&o.clusterDir, "cluster-dir", dir, "hack/cluster.sh's state directory (pid files, logs)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "admin kubeconfig (default: CLUSTER-DIR/kubeconfig)")
	var names []string
	for _, f := range families {
		names = append(names, f.slug())
	}
	list := fs.String("families", "all", "comma-separated families, or all: "+strings.Join(names, ", "))
	fs.IntVar(&o.rounds, "rounds", 1, "times each family runs under each controller")
	fs.DurationVar(&o.timeout, "timeout", time.Minute, "longest wait for one step of a family")
	ctrls := fs.String("controllers", "kcm,jobkit", "kcm,jobkit (both, interleaved), kcm or jobkit")
	smoke := fs.Bool("smoke", false, "the family "+strings.Join(smokeFamilies, ", ")+", one round (the test command's smoke)")
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
	want := strings.Split(strings.ToLower(*list), ",")
	if *smoke {
		want, o.rounds = smokeFamilies, 1
	}
	for _, f := range families {
		if *list == "all" && !*smoke || slices.Contains(want, f.slug()) {
			o.families = append(o.families, f)
		}
	}
	if *list != "all" || *smoke {
		for _, w := range want {
			if !slices.Contains(names, w) {
				return o, fmt.Errorf("--families: %q: want one of %s", w, strings.Join(names, ", "))
			}
		}
	}
	return o, nil
}

// mainFamilies is `benchcluster families`: exit status 1 when a run failed or jobkit
// wrote more than the Job controller in a family, 2 for bad flags.
func mainFamilies(args []string) {
	o, err := parseFamilyFlags(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcluster families:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, _, err := newBench(ctx, o.kubeconfig, o.clusterDir, "families", o.timeout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcluster families:", err)
		os.Exit(1)
	}
	ctrls := []controller{{Name: "kcm", Bin: o.kcm}, {Name: "jobkit", Bin: o.jobkit, ManagedBy: managedByJobkit}}
	fmt.Fprintf(os.Stderr, "logs in %s\n", b.logDir)
	var results []familyResult
	seq := 0
	for round := range o.rounds {
		for i, f := range o.families {
			order := ctrls
			if (i+round)%2 == 1 {
				order = []controller{ctrls[1], ctrls[0]}
			}
			for _, ctrl := range order {
				if o.only != "" && ctrl.Name != o.only {
					continue
				}
				res, err := b.runFamily(ctx, ctrl, f, round, seq)
				seq++
				if err != nil {
					fmt.Fprintf(os.Stderr, "benchcluster families: %s under %s: %v\n", f.Name, ctrl.Name, err)
					os.Exit(1)
				}
				fmt.Fprintf(os.Stderr, "%s under %s: %v in %v\n", f.Name, ctrl.Name, res.Writes, res.Took.Round(100*time.Millisecond))
				results = append(results, res)
			}
		}
	}
	if !writeFamilyTable(os.Stdout, results) {
		os.Exit(1)
	}
}

// familyWrites are a controller's writes in one family by kind.
type familyWrites struct {
	Creates, Patches, Deletes, Status, Events float64
	// Other are the writes of any other verb and resource, named.
	Other map[string]float64
}

func (w familyWrites) String() string {
	s := fmt.Sprintf("%g/%g/%g/%g/%g", w.Creates, w.Patches, w.Deletes, w.Status, w.Events)
	var keys []string
	for k := range w.Other {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s += fmt.Sprintf(" +%g %s", w.Other[k], k)
	}
	return s
}

// classify sorts the controller's write requests by kind.
func classify(reqs requests) familyWrites {
	w := familyWrites{Other: map[string]float64{}}
	for k, v := range reqs {
		if notController(k) || !isWrite(k.Verb) {
			continue
		}
		switch {
		case k.Resource == "pods" && k.Subresource == "" && k.Verb == "POST":
			w.Creates += v
		case k.Resource == "pods" && k.Subresource == "" && (k.Verb == "PATCH" || k.Verb == "PUT" || k.Verb == "APPLY"):
			w.Patches += v
		case k.Resource == "pods" && k.Subresource == "" && k.Verb == "DELETE":
			w.Deletes += v
		case k.Resource == "jobs" && k.Subresource == "status":
			w.Status += v
		case k.Resource == "events":
			w.Events += v
		case v != 0:
			w.Other[k.String()] += v
		}
	}
	return w
}

// familyResult is one family under one controller.
type familyResult struct {
	Family     string
	Controller string
	Round      int
	Writes     familyWrites
	Took       time.Duration
}

// runFamily runs family f under ctrl: the controller started, the Job created, the
// family's steps, the end; then the writes once they have stopped.
func (b *bench) runFamily(ctx context.Context, ctrl controller, f familyCase, round, seq int) (familyResult, error) {
	res := familyResult{Family: f.Name, Controller: ctrl.Name, Round: round}
	if _, settled, err := b.settle(ctx); err != nil {
		return res, err
	} else if !settled {
		fmt.Fprintln(b.log, "the control plane was still busy; running anyway")
	}
	name := fmt.Sprintf("f%02d-%s", seq, f.slug())
	if len(name) > 50 {
		name = name[:50]
	}
	proc, err := ctrl.start(ctx, b.kubeconfig, b.logDir, name, familyLimits)
	if err != nil {
		return res, err
	}
	defer func() {
		if err := proc.stop(); err != nil {
			fmt.Fprintf(b.log, "stop %s: %v\n", ctrl.Name, err)
		}
		if err := b.cleanup(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(b.log, "cleanup: %v\n", err)
		}
	}()
	before, err := b.snapshot(ctx, proc.pid())
	if err != nil {
		return res, err
	}
	start := time.Now()
	trace, err := b.traceStatus(ctx, name, start)
	if err != nil {
		return res, err
	}
	tracePath := filepath.Join(b.logDir, fmt.Sprintf("%s-%s.status", name, ctrl.Name))
	defer func() {
		if err := trace.finish(tracePath); err != nil {
			fmt.Fprintf(b.log, "status trace: %v\n", err)
		}
	}()
	obj := f.object(name, b.namespace, ctrl.ManagedBy, b.nodes[seq%len(b.nodes)])
	created, err := b.cs.BatchV1().Jobs(b.namespace).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return res, err
	}
	r := &familyRun{cs: b.cs, namespace: b.namespace, name: name, uid: created.UID, timeout: b.timeout, own: requests{},
		indexed: obj.Spec.CompletionMode != nil && *obj.Spec.CompletionMode == "Indexed"}
	for i, s := range f.steps {
		if err := s.Do(ctx, r); err != nil {
			return res, fmt.Errorf("step %d (%s): %w", i+1, s.What, err)
		}
	}
	if err := r.waitEnd(ctx, f); err != nil {
		return res, err
	}
	res.Took = time.Since(start)
	after, err := b.quietWrites(ctx, proc.pid())
	if err != nil {
		return res, err
	}
	diff := after.requests.sub(before.requests)
	for k, v := range r.own {
		diff[k] -= v
	}
	res.Writes = classify(diff)
	return res, nil
}

// quietWrites takes snapshots every second until the controller's writes have not
// moved for 2 s (events go out after the writes that cause them), at most 20 s, and
// returns the last.
func (b *bench) quietWrites(ctx context.Context, pid int) (snapshot, error) {
	count := func(s snapshot) float64 {
		n := 0.0
		for k, v := range s.requests {
			if !notController(k) && isWrite(k.Verb) {
				n += v
			}
		}
		return n
	}
	last, err := b.snapshot(ctx, pid)
	if err != nil {
		return last, err
	}
	still := 0
	for i := 0; i < 20 && still < 2; i++ {
		if err := sleepFor(ctx, time.Second); err != nil {
			return last, err
		}
		cur, err := b.snapshot(ctx, pid)
		if err != nil {
			return last, err
		}
		if count(cur) == count(last) {
			still++
		} else {
			still = 0
		}
		last = cur
	}
	return last, nil
}

// writeFamilyTable prints one row per family and round: each controller's writes by
// kind and whether jobkit's are no more than the Job controller's, kind by kind; ok
// is false when they are more in some family.
func writeFamilyTable(out io.Writer, results []familyResult) (ok bool) {
	type key struct {
		family string
		round  int
	}
	byKey := map[key]map[string]familyWrites{}
	var order []key
	for _, r := range results {
		k := key{r.Family, r.Round}
		if byKey[k] == nil {
			byKey[k] = map[string]familyWrites{}
			order = append(order, k)
		}
		byKey[k][r.Controller] = r.Writes
	}
	fmt.Fprintln(out, "\nWrites by kind: pod creates / pod patches / pod deletes / Job status / events.")
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| family | round | Job controller (kcm) | jobkit-clientgo | jobkit ≤ kcm |")
	fmt.Fprintln(out, "|---|---|---|---|---|")
	ok = true
	for _, k := range order {
		kcm, hasK := byKey[k]["kcm"]
		jk, hasJ := byKey[k]["jobkit"]
		verdict := "-"
		if hasK && hasJ {
			var more []string
			for _, c := range []struct {
				name     string
				jobkit   float64
				upstream float64
			}{{"creates", jk.Creates, kcm.Creates}, {"patches", jk.Patches, kcm.Patches}, {"deletes", jk.Deletes, kcm.Deletes},
				{"status", jk.Status, kcm.Status}, {"events", jk.Events, kcm.Events}} {
				if c.jobkit > c.upstream {
					more = append(more, fmt.Sprintf("%s %g > %g", c.name, c.jobkit, c.upstream))
				}
			}
			verdict = "yes"
			if len(more) > 0 {
				verdict, ok = "NO: "+strings.Join(more, ", "), false
			}
		}
		cell := func(w familyWrites, has bool) string {
			if !has {
				return "-"
			}
			return w.String()
		}
		fmt.Fprintf(out, "| %s | %d | %s | %s | %s |\n", k.family, k.round+1, cell(kcm, hasK), cell(jk, hasJ), verdict)
	}
	return ok
}
