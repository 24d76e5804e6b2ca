package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// The sides of the groups benchmark.
const (
	sideJobSet = "jobset" // JobSet's controller + kube-controller-manager's Job controller
	sideJobkit = "jobkit" // jobkit's JobSet controller + jobkit-clientgo
	sideOwner  = "owner"  // the TrainingJob controller: one owner of the roles' pods
)

// starter starts one process of a side; Measured tells a controller of the side
// from the garbage collector, which every side runs and which is reported apart.
type starter struct {
	Name     string
	Measured bool
	Start    func(ctx context.Context, run string) (*running, error)
}

// groupBench is what every run of the groups benchmark shares.
type groupBench struct {
	*bench
	dyn    dynamic.Interface
	limits qps
	sides  map[string][]starter
}

// groupResult is what one run of a group case under one side measured.
type groupResult struct {
	Case groupCase
	Side string
	// Duration: for a case that completes, from the create call to the finished
	// condition seen through a watch; for a restart, from the moment the benchmark
	// failed the worker pod to the moment every pod of the new attempt runs.
	Duration time.Duration
	// Setup is, for a restart, from the create call to every pod of the first
	// attempt running.
	Setup         time.Duration
	Requests      requests
	OtherRequests requests
	CPU           map[string]float64 // by process, the garbage collector's among them
	RSS           map[string]int64   // peak, by process
	APIServerCPU  float64
	// Facts are what the run left: the group's status (restarts, conditions, the
	// replicatedJobs' counts), its children (child Jobs by attempt and condition with
	// their counts) and its pods by attempt and phase.
	Facts    []string
	Problems []string
}

// controllerCPU is the CPU of the side's controllers, without the garbage collector.
func (r groupResult) controllerCPU() float64 {
	sum := 0.0
	for name, v := range r.CPU {
		if name != "gc" {
			sum += v
		}
	}
	return sum
}

// controllerRSS is the sum of the peak RSS of the side's controllers.
func (r groupResult) controllerRSS() int64 {
	var sum int64
	for name, v := range r.RSS {
		if name != "gc" {
			sum += v
		}
	}
	return sum
}

// groupNotController tells the requests no controller of a side makes: kwok's pod
// status updates (and the one pod failure the benchmark writes the same way), the
// benchmark's create and watch of the group, and everything outside the group's,
// Jobs', pods', Services' and events' resources (kwok's nodes and leases,
// kube-apiserver's own, the garbage collector's watches of every other kind).
// The garbage collector's writes on Jobs and pods (when an attempt's child Jobs are
// deleted with foreground propagation) are counted: they are the same under
// JobSet and jobkit, and part of what a restart costs.
func groupNotController(k requestKey) bool {
	switch k.Resource {
	case "pods":
		return k.Subresource == "status"
	case "jobsets", "trainingjobs":
		return k.Subresource == "" && (k.Verb == "POST" || k.Verb == "WATCH")
	case "jobs", "services", "events":
		return false
	}
	return true
}

// groupSnapshot is the counters at one moment.
type groupSnapshot struct {
	requests requests
	cpu      map[string]float64
	api      float64
}

func (g *groupBench) snapshot(ctx context.Context, procs map[string]*running) (groupSnapshot, error) {
	s := groupSnapshot{cpu: map[string]float64{}}
	raw, err := g.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		return s, fmt.Errorf("scrape kube-apiserver /metrics: %w", err)
	}
	defer raw.Close()
	if s.requests, err = parseRequests(raw); err != nil {
		return s, err
	}
	for name, p := range procs {
		if s.cpu[name], err = cpuSeconds(p.pid()); err != nil {
			return s, fmt.Errorf("%s: %w", name, err)
		}
	}
	s.api, err = cpuSeconds(g.others["kube-apiserver"])
	return s, err
}

// run runs case c under side and measures it; seq numbers the run.
func (g *groupBench) run(ctx context.Context, c groupCase, side string, seq int) (groupResult, error) {
	res := groupResult{Case: c, Side: side}
	if _, settled, err := g.settle(ctx); err != nil {
		return res, err
	} else if !settled {
		fmt.Fprintln(g.log, "the control plane was still busy; running anyway")
	}
	run := fmt.Sprintf("%03d-%s", seq, c.Name)
	procs := map[string]*running{}
	defer func() {
		for name, p := range procs {
			if err := p.stop(); err != nil {
				fmt.Fprintf(g.log, "stop %s: %v\n", name, err)
			}
		}
		if err := g.cleanupGroups(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(g.log, "cleanup: %v\n", err)
		}
	}()
	for _, s := range g.sides[side] {
		p, err := s.Start(ctx, run)
		if err != nil {
			return res, err
		}
		procs[s.Name] = p
	}
	before, err := g.snapshot(ctx, procs)
	if err != nil {
		return res, err
	}
	name := fmt.Sprintf("%s-%d", c.Name, seq)
	node := g.nodes[seq%len(g.nodes)]
	var obj *unstructured.Unstructured
	gvr := jobSetResource
	switch side {
	case sideJobSet:
		obj, err = c.jobSet(name, g.namespace, "", node)
	case sideJobkit:
		obj, err = c.jobSet(name, g.namespace, managedByJobkit, node)
	default:
		obj, err = c.trainingJob(name, g.namespace, node)
		gvr = trainingJobResource
	}
	if err != nil {
		return res, err
	}
	groups := g.dyn.Resource(gvr).Namespace(g.namespace)
	gw, err := groups.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return res, err
	}
	defer gw.Stop()
	pw, err := g.watchPods(ctx, c)
	if err != nil {
		return res, err
	}
	defer pw.w.Stop()
	start := time.Now()
	if _, err := groups.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("create %s %s: %w", obj.GetKind(), name, err)
	}
	want := c.pods()
	if side == sideOwner {
		want = c.ownerPods()
	}
	if !c.Restart {
		end, err := g.waitGroupFinished(ctx, gw)
		if err != nil {
			return res, err
		}
		res.Duration = end.Sub(start)
	} else {
		running0, err := pw.until(ctx, g.timeout, func() bool { return pw.count(0, corev1.PodRunning) == want })
		if err != nil {
			return res, fmt.Errorf("the first attempt: %w", err)
		}
		res.Setup = running0.Sub(start)
		failedAt, err := g.failWorker(ctx, pw)
		if err != nil {
			return res, err
		}
		running1, err := pw.until(ctx, g.timeout, func() bool { return pw.count(1, corev1.PodRunning) == want })
		if err != nil {
			return res, fmt.Errorf("the new attempt: %w", err)
		}
		res.Duration = running1.Sub(failedAt)
		// The writes of the restart include the removal of the old attempt.
		if _, err := pw.until(ctx, 3*time.Minute, func() bool { return pw.attemptLeft(0) == 0 }); err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("pods of attempt 0 left: %v", err))
		}
	}
	time.Sleep(time.Second) // the last writes after the moment measured (events)
	res.RSS = map[string]int64{}
	for n, p := range procs {
		if res.RSS[n], err = peakRSS(p.pid()); err != nil {
			return res, err
		}
	}
	after, err := g.snapshot(ctx, procs)
	if err != nil {
		return res, err
	}
	res.CPU = map[string]float64{}
	for n, v := range after.cpu {
		res.CPU[n] = v - before.cpu[n]
	}
	res.APIServerCPU = after.api - before.api
	res.Requests, res.OtherRequests = requests{}, requests{}
	for k, v := range after.requests.sub(before.requests) {
		if groupNotController(k) {
			res.OtherRequests[k] = v
		} else {
			res.Requests[k] = v
		}
	}
	res.Facts, err = g.settleFacts(ctx, c, side, name)
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	return res, nil
}

// waitGroupFinished waits until the watched group has a finished condition
// (JobSet: Completed or Failed; TrainingJob: Complete or Failed) and returns when it
// was seen.
func (g *groupBench) waitGroupFinished(ctx context.Context, w watch.Interface) (time.Time, error) {
	timeout := time.After(g.timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return time.Time{}, fmt.Errorf("the watch of the group ended before it finished")
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if ok && ev.Type != watch.Error && finishedCondition(u) != "" {
				return time.Now(), nil
			}
		case <-timeout:
			return time.Time{}, fmt.Errorf("the group did not finish in %v", g.timeout)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// finishedCondition is the type of the group's true finished condition, empty
// while none: JobSet's status.conditions, or a TrainingJob's (status.conditions
// without a launcher, status.groupConditions with one).
func finishedCondition(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	group, _, _ := unstructured.NestedSlice(u.Object, "status", "groupConditions")
	for _, c := range append(conds, group...) {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		if m["status"] == "True" && (t == "Completed" || t == "Complete" || t == "Failed") {
			return t
		}
	}
	return ""
}

// failWorker fails worker index 0 of the first child Job (of the workers role under
// the one owner) as its kubelet would report a container that exited with code 1,
// and returns when.
func (g *groupBench) failWorker(ctx context.Context, pw *podWatch) (time.Time, error) {
	var names []string
	for n, p := range pw.pods {
		if p.Labels["jobset.sigs.k8s.io/replicatedjob-name"] == "workers" &&
			p.Annotations["batch.kubernetes.io/job-completion-index"] == "0" &&
			(p.Labels[jobIndexLabel] == "" || p.Labels[jobIndexLabel] == "0") && attemptOf(p) == 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return time.Time{}, fmt.Errorf("no worker pod of index 0 to fail")
	}
	p := pw.pods[names[0]].DeepCopy()
	now := metav1.Now()
	p.Status.Phase = corev1.PodFailed
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: now},
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: p.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: now, FinishedAt: now}}}}
	at := time.Now()
	if _, err := g.cs.CoreV1().Pods(g.namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return at, fmt.Errorf("fail pod %s: %w", p.Name, err)
	}
	fmt.Fprintf(g.log, "  failed pod %s\n", p.Name)
	return at, nil
}
