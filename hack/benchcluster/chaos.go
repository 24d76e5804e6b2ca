package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// chaos is the state of one chaos run.
type chaos struct {
	o         chaosOptions
	cs        kubernetes.Interface
	namespace string
	nodes     []string
	ctrl      controller
	logDir    string
	log       io.Writer
	hist      *history
	plan      []chaosJob
	start     time.Time

	mu      sync.Mutex
	created map[string]types.UID // Job name -> UID, once created
	kills   []string             // one line per kill or restart
	// proc is the controller's process now: killAll alone replaces it while the run
	// goes on; the rest reads it once killAll has returned.
	proc *running
}

func (c *chaos) logf(format string, args ...any) {
	fmt.Fprintf(c.log, "%6.1fs  %s\n", time.Since(c.start).Seconds(), fmt.Sprintf(format, args...))
}

// runChaos runs the chaos run of o and prints its report to out; ok is false when a
// check failed.
func runChaos(ctx context.Context, o chaosOptions, out io.Writer) (ok bool, err error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return false, fmt.Errorf("load %s: %w", o.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.UserAgent = "benchcluster-chaos"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	c := &chaos{o: o, cs: cs, namespace: "chaos", log: out, hist: newHistory(), created: map[string]types.UID{},
		ctrl:   controller{Name: "jobkit", Bin: o.jobkit, ManagedBy: managedByJobkit},
		logDir: filepath.Join(o.clusterDir, "logs", "chaos-"+time.Now().UTC().Format("20060102-150405"))}
	if o.smoke {
		c.plan = []chaosJob{{Name: "smoke-indexed-100", Shape: shapeComplete, Indexed: true, Completions: 100, Parallelism: 100}}
	} else {
		spread := time.Duration(o.kills) * (o.minGap + o.maxGap) / 2
		c.plan = chaosPlan(o.seed, o.jobs, spread)
	}
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		return false, err
	}
	fmt.Fprintf(out, "chaos: seed %d, %d Jobs, %d kills, restart kube-apiserver %v, QPS %v, logs in %s\n",
		o.seed, len(c.plan), o.kills, o.restartAPI, o.limits, c.logDir)
	if err := c.prepare(ctx); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	c.start = time.Now()
	if err := c.watch(ctx); err != nil {
		return false, err
	}
	c.proc, err = c.ctrl.start(ctx, o.kubeconfig, c.logDir, "000", o.limits)
	if err != nil {
		return false, err
	}
	defer func() {
		if c.proc != nil && !c.proc.exited() {
			c.proc.kill()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Go(func() { errs <- c.createAll(ctx) })
	wg.Go(func() { errs <- c.killAll(ctx) })
	wg.Wait()
	close(errs)
	for e := range errs {
		if e != nil {
			return false, e
		}
	}
	// Past the timeout the checks still run: they say what went wrong.
	settled := c.waitSettled(ctx)
	if err := c.proc.stop(); err != nil {
		return false, fmt.Errorf("stop the controller: %w", err)
	}
	problems, err := c.check(context.WithoutCancel(ctx))
	if err != nil {
		return false, err
	}
	if settled != nil {
		problems = append([]string{settled.Error()}, problems...)
	}
	c.report(out, problems)
	return len(problems) == 0, nil
}

// prepare finds the nodes, makes the namespace and drops what an earlier run left.
func (c *chaos) prepare(ctx context.Context) error {
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil {
		return fmt.Errorf("list the nodes (is the cluster up? hack/cluster.sh up): %w", err)
	}
	for _, n := range nodes.Items {
		c.nodes = append(c.nodes, n.Name)
	}
	if len(c.nodes) == 0 {
		return errors.New("no node labelled type=kwok: is the cluster up (hack/cluster.sh up)?")
	}
	if err := ensureNamespace(ctx, c.cs, c.namespace); err != nil {
		return err
	}
	return cleanupLabel(ctx, c.cs, c.namespace, labelChaos)
}

// createAll creates the Jobs of the plan at their moments and acts on them
// (suspend and resume, delete).
func (c *chaos) createAll(ctx context.Context) error {
	order := slices.Clone(c.plan)
	slices.SortStableFunc(order, func(a, b chaosJob) int { return int(a.At - b.At) })
	var wg sync.WaitGroup
	defer wg.Wait()
	for i, j := range order {
		if err := sleepUntil(ctx, c.start.Add(j.At)); err != nil {
			return err
		}
		obj := j.object(c.namespace, managedByJobkit, c.nodes[i%len(c.nodes)])
		var uid types.UID
		err := retry(ctx, "create Job "+j.Name, func() error {
			got, err := c.cs.BatchV1().Jobs(c.namespace).Create(ctx, obj, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) { // an earlier attempt went through
				got, err = c.cs.BatchV1().Jobs(c.namespace).Get(ctx, j.Name, metav1.GetOptions{})
			}
			if err == nil {
				uid = got.UID
			}
			return err
		})
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.created[j.Name] = uid
		c.mu.Unlock()
		switch j.Shape {
		case shapeSuspend:
			wg.Go(func() { c.suspendResume(ctx, j) })
		case shapeDelete:
			wg.Go(func() { c.deleteJob(ctx, j) })
		}
	}
	return nil
}

func (c *chaos) suspendResume(ctx context.Context, j chaosJob) {
	for _, step := range []struct {
		after   time.Duration
		suspend bool
	}{{j.ActAfter, true}, {j.ResumeAfter, false}} {
		if sleepFor(ctx, step.after) != nil {
			return
		}
		patch := fmt.Appendf(nil, `{"spec":{"suspend":%v}}`, step.suspend)
		err := retry(ctx, "suspend or resume "+j.Name, func() error {
			_, err := c.cs.BatchV1().Jobs(c.namespace).Patch(ctx, j.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		})
		if err != nil {
			c.logf("%s: %v", j.Name, err)
			return
		}
		c.logf("%s: suspend=%v", j.Name, step.suspend)
	}
}

// deleteJob deletes the Job while it runs, then its pods, as the garbage collector
// would (none runs on this control plane).
func (c *chaos) deleteJob(ctx context.Context, j chaosJob) {
	if sleepFor(ctx, j.ActAfter) != nil {
		return
	}
	err := retry(ctx, "delete Job "+j.Name, func() error {
		err := c.cs.BatchV1().Jobs(c.namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		c.logf("%s: %v", j.Name, err)
		return
	}
	c.logf("%s: deleted", j.Name)
	if err := c.collect(ctx, j.Name); err != nil {
		c.logf("%s: delete its pods: %v", j.Name, err)
	}
}

// collect deletes the pods of the deleted Job name (the garbage collector's part).
func (c *chaos) collect(ctx context.Context, name string) error {
	return retry(ctx, "delete the pods of "+name, func() error {
		return c.cs.CoreV1().Pods(c.namespace).DeleteCollection(ctx, metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: labelChaos + "=" + name})
	})
}

// killAll kills the controller o.kills times at drawn moments, restarting it each
// time, and restarts kube-apiserver once halfway.
func (c *chaos) killAll(ctx context.Context) error {
	r := rand.New(rand.NewPCG(c.o.seed, 0x6b696c6c))
	for k := 1; k <= c.o.kills; k++ {
		if c.o.smoke {
			// Half of the Job's pods exist: the kill lands while it creates and
			// counts.
			for c.hist.createdCount() < int(c.plan[0].Completions)/2 {
				if err := sleepFor(ctx, 50*time.Millisecond); err != nil {
					return fmt.Errorf("waiting for half of the pods before the kill: %w", err)
				}
			}
		} else if err := sleepFor(ctx, c.o.minGap+time.Duration(r.Int64N(int64(c.o.maxGap-c.o.minGap)+1))); err != nil {
			return fmt.Errorf("before kill %d: %w", k, err)
		}
		died := c.proc.exited()
		c.proc.kill()
		c.note("kill %d: SIGKILL pid %d (%d pods seen; it had exited by itself before: %v)", k, c.proc.pid(), c.hist.createdCount(), died)
		if died {
			return fmt.Errorf("the controller exited by itself before kill %d: see %s", k, c.proc.log)
		}
		if c.o.restartAPI && k == (c.o.kills+1)/2 {
			if err := c.restartAPIServer(ctx); err != nil {
				return err
			}
		}
		if err := sleepFor(ctx, time.Duration(r.Int64N(int64(500*time.Millisecond)))); err != nil {
			return err
		}
		p, err := c.ctrl.launch(c.o.kubeconfig, c.logDir, fmt.Sprintf("%03d", k), c.o.limits)
		if err != nil {
			return err
		}
		c.proc = p
	}
	return nil
}

func (c *chaos) note(format string, args ...any) {
	line := fmt.Sprintf("%.1fs ", time.Since(c.start).Seconds()) + fmt.Sprintf(format, args...)
	c.mu.Lock()
	c.kills = append(c.kills, line)
	c.mu.Unlock()
	fmt.Fprintln(c.log, "  "+line)
}

// restartAPIServer restarts kube-apiserver through hack/cluster.sh, which waits until
// it is ready again.
func (c *chaos) restartAPIServer(ctx context.Context) error {
	began := time.Now()
	cmd := exec.CommandContext(ctx, c.o.clusterScript, "restart-apiserver")
	cmd.Env = append(os.Environ(), "JOBKIT_CLUSTER_DIR="+c.o.clusterDir)
	outb, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s restart-apiserver: %w\n%s", c.o.clusterScript, err, outb)
	}
	c.note("kube-apiserver restarted (down and up again in %.1fs)", time.Since(began).Seconds())
	return nil
}

// waitSettled waits until every Job is created, those not deleted have finished,
// the pods of the deleted ones are gone and no pod holds the tracking finalizer.
func (c *chaos) waitSettled(ctx context.Context) error {
	var pending string
	for {
		var err error
		pending, err = c.pending(ctx)
		if err == nil && pending == "" {
			break
		}
		if err != nil {
			pending = err.Error()
		}
		if sleepFor(ctx, time.Second) != nil {
			return fmt.Errorf("not settled after --timeout=%v: %s (seed %d)", c.o.timeout, pending, c.o.seed)
		}
	}
	c.logf("settled: every Job finished or deleted, no finalizer left")
	return sleepFor(ctx, 2*time.Second) // writes in flight land before the checks
}

// pending says what the run still waits for; empty when nothing.
func (c *chaos) pending(ctx context.Context) (string, error) {
	jobs, err := c.cs.BatchV1().Jobs(c.namespace).List(ctx, metav1.ListOptions{LabelSelector: labelChaos})
	if err != nil {
		return "", err
	}
	unfinished := 0
	for _, j := range jobs.Items {
		if !isFinished(&j) {
			unfinished++
		}
	}
	pods, err := c.cs.CoreV1().Pods(c.namespace).List(ctx, metav1.ListOptions{LabelSelector: labelChaos})
	if err != nil {
		return "", err
	}
	held, orphans := 0, 0
	byName := map[string]bool{}
	for _, j := range jobs.Items {
		byName[j.Name] = true
	}
	for _, p := range pods.Items {
		if hasTrackingFinalizer(&p) {
			held++
		}
		if !byName[p.Labels[labelChaos]] {
			orphans++
		}
	}
	if orphans > 0 {
		// A pod the controller created after the deletion, or one the collection
		// missed: collect again.
		for _, j := range c.plan {
			if j.Shape == shapeDelete && !byName[j.Name] {
				_ = c.collect(ctx, j.Name)
			}
		}
	}
	c.mu.Lock()
	created := len(c.created)
	c.mu.Unlock()
	if created < len(c.plan) || unfinished > 0 || held > 0 || orphans > 0 {
		return fmt.Sprintf("%d of %d Jobs created, %d unfinished, %d pods hold the finalizer, %d pods of deleted Jobs left",
			created, len(c.plan), unfinished, held, orphans), nil
	}
	return "", nil
}
