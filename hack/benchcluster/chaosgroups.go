package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// groupChaos is the state of the groups' part of a chaos run.
type groupChaos struct {
	*chaos // its options, clients, log, start, history of watch gaps and kills
	dyn    dynamic.Interface
	groups []chaosGroup
	gh     *groupHistory
	ctrls  []controller // jobkit-clientgo, then one JobSet controller per API in the plan

	gmu      sync.Mutex
	procs    []*running // killAll alone replaces them while the run goes on
	made     map[string]bool
	findings []string // problems met by the driver's own actions (the agents' dance)
	summary  []string // one line per group for the report
}

// runGroupChaos runs the groups of o (the JobSet controllers and jobkit-clientgo
// killed with SIGKILL at random moments and restarted, kube-apiserver restarted
// once) and prints its report to out; ok is false when a check failed.
func runGroupChaos(ctx context.Context, o chaosOptions, out io.Writer) (ok bool, err error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return false, fmt.Errorf("load %s: %w", o.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.UserAgent = "benchcluster-chaos-groups"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	g := &groupChaos{
		chaos: &chaos{o: o, cs: cs, namespace: fmt.Sprintf("chaos-groups-%d", time.Now().Unix()), log: out, hist: newHistory(),
			created: map[string]types.UID{}, logDir: filepath.Join(o.clusterDir, "logs", "chaos-groups-"+time.Now().UTC().Format("20060102-150405"))},
		dyn: dyn, gh: newGroupHistory(), made: map[string]bool{},
	}
	if o.smoke {
		g.groups = smokeGroups()
	} else {
		g.groups = groupPlan(o.seed, o.groups, time.Duration(o.groupKills)*(o.minGap+o.maxGap)/2)
	}
	g.ctrls = []controller{{Name: "jobkit", Bin: o.jobkit, ManagedBy: managedByJobkit}}
	for _, gvr := range g.apis() {
		g.ctrls = append(g.ctrls, controller{Name: "jobset-" + strings.Split(gvr.Group, ".")[1], Bin: o.jobset, ManagedBy: gvr.Group,
			Extra: []string{"--api", gvr.Group, "--child-managed-by", managedByJobkit, "--feature-gates=InPlaceRestart=true"}})
	}
	if err := os.MkdirAll(g.logDir, 0o755); err != nil {
		return false, err
	}
	fmt.Fprintf(out, "\nchaos groups: seed %d, %d groups, %d kills of %d controllers, restart kube-apiserver %v, namespace %s, logs in %s\n",
		o.seed, len(g.groups), o.groupKills, len(g.ctrls), o.restartAPI, g.namespace, g.logDir)
	if err := g.installCRDs(ctx); err != nil {
		return false, err
	}
	if err := g.prepare(ctx); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	g.start = time.Now()
	if err := g.watchGroups(ctx); err != nil {
		return false, err
	}
	go g.collectGarbage(ctx)
	for i, c := range g.ctrls {
		p, err := c.start(ctx, o.kubeconfig, g.logDir, "000", o.limits)
		if err != nil {
			return false, err
		}
		g.procs = append(g.procs, p)
		defer func() {
			if p := g.procs[i]; !p.exited() {
				p.kill()
			}
		}()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Go(func() { errs <- g.createGroups(ctx) })
	wg.Go(func() { errs <- g.killGroups(ctx) })
	wg.Wait()
	close(errs)
	for e := range errs {
		if e != nil {
			return false, e
		}
	}
	settled := g.waitGroupsSettled(ctx)
	for i, p := range g.procs {
		if err := p.stop(); err != nil {
			return false, fmt.Errorf("stop %s: %w", g.ctrls[i].Name, err)
		}
	}
	problems, err := g.checkGroups(context.WithoutCancel(ctx))
	if err != nil {
		return false, err
	}
	if settled != nil {
		problems = append([]string{settled.Error()}, problems...)
	}
	g.reportGroups(out, problems)
	return len(problems) == 0, nil
}

var gvrCRDs = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs applies the CRDs of o.groupCRDs (server-side) and waits until each
// is established.
func (g *groupChaos) installCRDs(ctx context.Context) error {
	for _, file := range g.o.groupCRDs {
		b, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("--group-crds: %w", err)
		}
		for doc := range strings.SplitSeq(string(b), "\n---") {
			if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
				continue
			}
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				return fmt.Errorf("--group-crds: %s: %w", file, err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(j); err != nil {
				return fmt.Errorf("--group-crds: %s: %w", file, err)
			}
			err = retry(ctx, "apply CRD "+u.GetName(), func() error {
				_, err := g.dyn.Resource(gvrCRDs).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "benchcluster", Force: true})
				return err
			})
			if err != nil {
				return err
			}
			if err := g.waitEstablished(ctx, u.GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *groupChaos) waitEstablished(ctx context.Context, name string) error {
	for range 300 {
		crd, err := g.dyn.Resource(gvrCRDs).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		}
		if err := sleepFor(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("CRD %s not established after 30 s", name)
}

// prepare finds the nodes and makes the run's namespace (a new one each run: no
// namespace controller runs here to empty an old one).
func (g *groupChaos) prepare(ctx context.Context) error {
	nodes, err := g.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil {
		return fmt.Errorf("list the nodes (is the cluster up? hack/cluster.sh up): %w", err)
	}
	for _, n := range nodes.Items {
		g.nodes = append(g.nodes, n.Name)
	}
	if len(g.nodes) == 0 {
		return errors.New("no node labelled type=kwok: is the cluster up (hack/cluster.sh up)?")
	}
	return ensureNamespace(ctx, g.cs, g.namespace)
}

// createGroups creates the groups at their moments and acts on them (suspend and
// resume, scaling, the in-place agents).
func (g *groupChaos) createGroups(ctx context.Context) error {
	order := slices.Clone(g.groups)
	slices.SortStableFunc(order, func(a, b chaosGroup) int { return int(a.At - b.At) })
	var wg sync.WaitGroup
	defer wg.Wait()
	for i, cg := range order {
		if err := sleepUntil(ctx, g.start.Add(cg.At)); err != nil {
			return err
		}
		obj, err := cg.object(g.namespace, g.nodes[i%len(g.nodes)])
		if err != nil {
			return err
		}
		err = retry(ctx, "create JobSet "+cg.Name, func() error {
			_, err := g.dyn.Resource(cg.gvr()).Namespace(g.namespace).Create(ctx, obj.DeepCopy(), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
		if err != nil {
			return err
		}
		g.gmu.Lock()
		g.made[cg.Name] = true
		g.gmu.Unlock()
		g.logf("%s: created", cg.Name)
		switch cg.Shape {
		case gSuspend:
			wg.Go(func() { g.suspendResumeGroup(ctx, cg) })
		case gScale:
			wg.Go(func() { g.scaleGroup(ctx, cg) })
		case gInPlace:
			wg.Go(func() { g.playAgents(ctx, cg) })
		}
	}
	return nil
}

func (g *groupChaos) patchGroup(ctx context.Context, cg chaosGroup, pt types.PatchType, patch string) error {
	return retry(ctx, "patch JobSet "+cg.Name, func() error {
		_, err := g.dyn.Resource(cg.gvr()).Namespace(g.namespace).Patch(ctx, cg.Name, pt, []byte(patch), metav1.PatchOptions{})
		return err
	})
}

func (g *groupChaos) suspendResumeGroup(ctx context.Context, cg chaosGroup) {
	for _, step := range []struct {
		after   time.Duration
		suspend bool
	}{{cg.ActAfter, true}, {cg.ResumeAfter, false}} {
		if sleepFor(ctx, step.after) != nil {
			return
		}
		if err := g.patchGroup(ctx, cg, types.MergePatchType, fmt.Sprintf(`{"spec":{"suspend":%v}}`, step.suspend)); err != nil {
			g.finding("%s: suspend=%v: %v", cg.Name, step.suspend, err)
			return
		}
		g.logf("%s: suspend=%v", cg.Name, step.suspend)
	}
}

// scaleGroup changes the workers' replicas of the running group.
func (g *groupChaos) scaleGroup(ctx context.Context, cg chaosGroup) {
	if sleepFor(ctx, cg.ActAfter) != nil {
		return
	}
	if u, err := g.dyn.Resource(cg.gvr()).Namespace(g.namespace).Get(ctx, cg.Name, metav1.GetOptions{}); err == nil {
		if typ, _, n := groupFinished(u); n > 0 {
			g.finding("%s: %s before the scale: the plan's workers run too short for this machine", cg.Name, typ)
			return
		}
	}
	patch := fmt.Sprintf(`[{"op":"test","path":"/spec/replicatedJobs/1/name","value":"workers"},{"op":"replace","path":"/spec/replicatedJobs/1/replicas","value":%d}]`, cg.ScaleTo)
	if err := g.patchGroup(ctx, cg, types.JSONPatchType, patch); err != nil {
		g.finding("%s: scale the workers to %d: %v", cg.Name, cg.ScaleTo, err)
		return
	}
	g.logf("%s: workers scaled from %d to %d replicas", cg.Name, cg.Workers, cg.ScaleTo)
}

func (g *groupChaos) finding(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	g.gmu.Lock()
	g.findings = append(g.findings, msg)
	g.gmu.Unlock()
	g.logf("%s", msg)
}

// killGroups kills one of the controllers, drawn, o.groupKills times at drawn
// moments, starting it again each time, and restarts kube-apiserver once halfway.
// The smoke kills each controller once, in turn: jobkit-clientgo once two pods
// exist, the JobSet controller once kwok has failed the worker.
func (g *groupChaos) killGroups(ctx context.Context) error {
	r := rand.New(rand.NewPCG(g.o.seed, 0x676b696c6c))
	for k := 1; k <= g.o.groupKills; k++ {
		i := r.IntN(len(g.procs))
		if g.o.smoke {
			// jobkit-clientgo once two pods exist; the JobSet controller once kwok has
			// failed the worker: the kill lands in the restart.
			i = (k - 1) % len(g.procs)
			for k == 1 && g.gh.podCount() < 2 || k > 1 && len(g.gh.failuresOf(g.groups[0].Name)) == 0 {
				if err := sleepFor(ctx, 20*time.Millisecond); err != nil {
					return fmt.Errorf("waiting for the moment of kill %d: %w", k, err)
				}
			}
		} else if err := sleepFor(ctx, g.o.minGap+time.Duration(r.Int64N(int64(g.o.maxGap-g.o.minGap)+1))); err != nil {
			return fmt.Errorf("before kill %d: %w", k, err)
		}
		p := g.procs[i]
		died := p.exited()
		p.kill()
		g.note("kill %d: SIGKILL %s pid %d (%d pods seen; it had exited by itself before: %v)", k, g.ctrls[i].Name, p.pid(), g.gh.podCount(), died)
		if died {
			return fmt.Errorf("%s exited by itself before kill %d: see %s", g.ctrls[i].Name, k, p.log)
		}
		if g.o.restartAPI && k == (g.o.groupKills+1)/2 {
			if err := g.restartAPIServer(ctx); err != nil {
				return err
			}
		}
		if err := sleepFor(ctx, time.Duration(r.Int64N(int64(500*time.Millisecond)))); err != nil {
			return err
		}
		np, err := g.ctrls[i].launch(g.o.kubeconfig, g.logDir, fmt.Sprintf("%03d", k), g.o.limits)
		if err != nil {
			return err
		}
		g.procs[i] = np
	}
	return nil
}
