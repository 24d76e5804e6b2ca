package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/internal/podutil"
)

// playAgents plays the in-place restart agents of the group's pods, as
// TestInPlaceRestartOnTheAPIServer does: once every pod runs, each reports attempt
// 0 (the barrier lifts at 0); one pod reports 1 (previous 0, current still 0);
// the others report 1 (current 1). The pods then run out and succeed.
func (g *groupChaos) playAgents(ctx context.Context, cg chaosGroup) {
	want := int(1 + cg.Workers*cg.Pods)
	var pods []corev1.Pod
	if !g.until(ctx, cg, fmt.Sprintf("%d pods running", want), func() (bool, string) {
		l, err := g.cs.CoreV1().Pods(g.namespace).List(ctx, metav1.ListOptions{LabelSelector: labelJobSetName + "=" + cg.Name})
		if err != nil {
			return false, err.Error()
		}
		running := 0
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		pods = l.Items
		return running == want && len(l.Items) == want, fmt.Sprintf("%d pods, %d running", len(l.Items), running)
	}) {
		return
	}
	report := func(p corev1.Pod, attempt int) bool {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, annotationInPlace, strconv.Itoa(attempt))
		err := retry(ctx, "report attempt of pod "+p.Name, func() error {
			_, err := g.cs.CoreV1().Pods(g.namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		})
		if err != nil {
			g.finding("%s: the agent of pod %s reporting attempt %d: %v", cg.Name, p.Name, attempt, err)
		}
		return err == nil
	}
	barrier := func(what string, prev, cur int64) bool {
		return g.until(ctx, cg, what, func() (bool, string) {
			u, err := g.dyn.Resource(cg.gvr()).Namespace(g.namespace).Get(ctx, cg.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			p, okP, _ := unstructured.NestedInt64(u.Object, "status", "previousInPlaceRestartAttempt")
			c, okC, _ := unstructured.NestedInt64(u.Object, "status", "currentInPlaceRestartAttempt")
			if !okP {
				p = -1
			}
			if !okC {
				c = -1
			}
			return p == prev && c == cur, fmt.Sprintf("previous %d, current %d (-1: unset)", p, c)
		})
	}
	for _, p := range pods {
		if !report(p, 0) {
			return
		}
	}
	if !barrier("the barrier lifted at attempt 0", -1, 0) || !report(pods[0], 1) ||
		!barrier("previous attempt 0 once one pod reports 1", 0, 0) {
		return
	}
	for _, p := range pods[1:] {
		if !report(p, 1) {
			return
		}
	}
	if barrier("the barrier lifted at attempt 1", 0, 1) {
		g.logf("%s: restarted in place: attempt 1", cg.Name)
	}
}

// until polls f every 200 ms for up to 2 minutes; past that it records a finding.
func (g *groupChaos) until(ctx context.Context, cg chaosGroup, what string, f func() (bool, string)) bool {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ok, state := f()
		if ok {
			return true
		}
		if time.Now().After(deadline) || sleepFor(ctx, 200*time.Millisecond) != nil {
			g.finding("%s: the agents waited 2 minutes for %s: %s", cg.Name, what, state)
			return false
		}
	}
}

// groupFinished returns the type and reason of the JobSet's Completed or
// Failed condition that is True, and how many there are.
func groupFinished(u *unstructured.Unstructured) (typ, reason string, n int) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] == "True" && (m["type"] == "Completed" || m["type"] == "Failed") {
			typ, _ = m["type"].(string)
			reason, _ = m["reason"].(string)
			n++
		}
	}
	return typ, reason, n
}

// waitGroupsSettled waits until every group is created and finished, no child Job
// is unfinished or being deleted, and every pod is finished, none holding the
// tracking finalizer.
func (g *groupChaos) waitGroupsSettled(ctx context.Context) error {
	for {
		pending, err := g.groupsPending(ctx)
		if err == nil && pending == "" {
			break
		}
		if err != nil {
			pending = err.Error()
		}
		if sleepFor(ctx, time.Second) != nil {
			return fmt.Errorf("groups not settled after --timeout=%v: %s (seed %d)", g.o.timeout, pending, g.o.seed)
		}
	}
	g.logf("settled: every group finished, every child Job finished, no pod running or holding the finalizer")
	return sleepFor(ctx, 2*time.Second)
}

func (g *groupChaos) groupsPending(ctx context.Context) (string, error) {
	g.gmu.Lock()
	made := len(g.made)
	g.gmu.Unlock()
	unfinished := 0
	for _, gvr := range g.apis() {
		l, err := g.jobSets(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", err
		}
		for i := range l.Items {
			if _, _, n := groupFinished(&l.Items[i]); n == 0 {
				unfinished++
			}
		}
	}
	jobs, err := g.cs.BatchV1().Jobs(g.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	running, deleting := 0, 0
	for i := range jobs.Items {
		if jobs.Items[i].DeletionTimestamp != nil {
			deleting++
		} else if !isFinished(&jobs.Items[i]) {
			running++
		}
	}
	pods, err := g.cs.CoreV1().Pods(g.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	held, live := 0, 0
	for i := range pods.Items {
		if hasTrackingFinalizer(&pods.Items[i]) {
			held++
		}
		if !podutil.IsTerminal(&pods.Items[i]) {
			live++
		}
	}
	if made < len(g.groups) || unfinished+running+deleting+held+live > 0 {
		return fmt.Sprintf("%d of %d groups created, %d unfinished; child Jobs: %d unfinished, %d being deleted; pods: %d hold the finalizer, %d not finished",
			made, len(g.groups), unfinished, running, deleting, held, live), nil
	}
	return "", nil
}

// checkGroups compares each group's end with its plan and the history.
func (g *groupChaos) checkGroups(ctx context.Context) ([]string, error) {
	var problems []string
	g.hist.mu.Lock()
	problems = append(problems, g.hist.gaps...)
	g.hist.mu.Unlock()
	g.gh.mu.Lock()
	problems = append(problems, g.gh.backwards...)
	g.gh.mu.Unlock()
	g.gmu.Lock()
	problems = append(problems, g.findings...)
	g.gmu.Unlock()
	jobs, err := g.cs.BatchV1().Jobs(g.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, cg := range g.groups {
		u, err := g.dyn.Resource(cg.gvr()).Namespace(g.namespace).Get(ctx, cg.Name, metav1.GetOptions{})
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", cg.Name, err))
			continue
		}
		var left []*batchv1.Job
		for i := range jobs.Items {
			if jobs.Items[i].Labels[labelJobSetName] == cg.Name {
				left = append(left, &jobs.Items[i])
			}
		}
		problems = append(problems, g.checkGroup(cg, u, left)...)
		typ, reason, _ := groupFinished(u)
		restarts, _, _ := unstructured.NestedInt64(u.Object, "status", "restarts")
		g.summary = append(g.summary, fmt.Sprintf("%-22s %-16s %s(%s) restarts=%d jobRestarts=%v, %d child Jobs and %d pods seen",
			cg.Name, cg.gvr().Group, typ, reason, restarts, jobRestartsOf(u), len(g.gh.childrenOf(cg.Name)), g.gh.podsSeen(cg.Name)))
	}
	pods, err := g.cs.CoreV1().Pods(g.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if hasTrackingFinalizer(p) {
			problems = append(problems, fmt.Sprintf("pod %s holds %s", p.Name, batchv1.JobTrackingFinalizer))
		}
		if !podutil.IsTerminal(p) {
			problems = append(problems, fmt.Sprintf("pod %s left %s", p.Name, p.Status.Phase))
		}
	}
	for i, p := range g.procs {
		if !p.exited() {
			problems = append(problems, fmt.Sprintf("%s (pid %d) still runs", g.ctrls[i].Name, p.pid()))
		}
	}
	return problems, nil
}

// reportGroups prints the kills and the checks of the groups' run.
func (g *groupChaos) reportGroups(out io.Writer, problems []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fmt.Fprintf(out, "\nchaos groups: seed %d, %d groups, %d pods, %d kills and restarts in %.0fs:\n",
		g.o.seed, len(g.groups), g.gh.podCount(), len(g.kills), time.Since(g.start).Seconds())
	for _, k := range g.kills {
		fmt.Fprintln(out, "  "+k)
	}
	for _, l := range g.summary {
		fmt.Fprintln(out, "  "+l)
	}
	for _, ch := range []string{
		"every group finished with the condition its plan asks for (Completed, or Failed with ReachedMaxRestarts past maxRestarts or FailJobSetFailurePolicyAction), terminalState the same",
		"restarts, restartsCountTowardsMax and jobRestarts equal the failures caused (kwok's fail-restarts) and the failed children the history shows; no counter went down",
		"no child Job of an old attempt (group or child) left, none beyond its role's replicas, none unfinished",
		"dependsOn: no worker created before the leader was ready (Ready) or complete (Complete)",
		"in place: the barrier moved to attempt 1, no child Job or pod replaced, no restart counted",
		"no child Job created twice (one per role, index, group attempt and job attempt), none after its group finished; BlockingRecreate: none before the old attempt was gone (by etcd revision)",
		"no pod holds the tracking finalizer; no pod left running; the watches saw every event",
	} {
		fmt.Fprintln(out, "check: "+ch)
	}
	if len(problems) == 0 {
		fmt.Fprintln(out, "chaos groups: PASS")
		return
	}
	for _, p := range problems {
		fmt.Fprintln(out, "CHECK FAILED: "+p)
	}
	fmt.Fprintf(out, "chaos groups: FAIL (%d problems); rerun the same groups and kill moments with --seed %d\n", len(problems), g.o.seed)
}
