package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/jobkit/jobkit/jobstatus"
)

const jobIndexLabel = "jobset.sigs.k8s.io/job-index"

// podWatch follows the pods of a case through one watch.
type podWatch struct {
	w    watch.Interface
	pods map[string]*corev1.Pod
}

func (g *groupBench) watchPods(ctx context.Context, c groupCase) (*podWatch, error) {
	w, err := g.cs.CoreV1().Pods(g.namespace).Watch(ctx, metav1.ListOptions{LabelSelector: groupLabel + "=" + c.Name})
	if err != nil {
		return nil, err
	}
	return &podWatch{w: w, pods: map[string]*corev1.Pod{}}, nil
}

// until reads the watch until done holds and returns the moment it did.
func (pw *podWatch) until(ctx context.Context, timeout time.Duration, done func() bool) (time.Time, error) {
	limit := time.After(timeout)
	for !done() {
		select {
		case ev, ok := <-pw.w.ResultChan():
			if !ok {
				return time.Time{}, fmt.Errorf("the watch of the pods ended")
			}
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(pw.pods, p.Name)
			} else {
				pw.pods[p.Name] = p
			}
		case <-limit:
			return time.Time{}, fmt.Errorf("not reached in %v (%s)", timeout, pw.summary())
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
	return time.Now(), nil
}

// count is the number of pods of attempt in phase, not being deleted.
func (pw *podWatch) count(attempt int, phase corev1.PodPhase) int {
	n := 0
	for _, p := range pw.pods {
		if attemptOf(p) == attempt && p.Status.Phase == phase && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// attemptLeft is the number of pods of attempt that exist.
func (pw *podWatch) attemptLeft(attempt int) int {
	n := 0
	for _, p := range pw.pods {
		if attemptOf(p) == attempt {
			n++
		}
	}
	return n
}

// summary counts the pods by attempt, phase and whether they hold a finalizer.
func (pw *podWatch) summary() string {
	counts := map[string]int{}
	for _, p := range pw.pods {
		k := fmt.Sprintf("attempt %d %s", attemptOf(p), p.Status.Phase)
		if p.DeletionTimestamp != nil {
			k += " deleting"
		}
		if len(p.Finalizers) > 0 {
			k += " finalizer"
		}
		counts[k]++
	}
	var parts []string
	for k, v := range counts {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return "pods: " + strings.Join(parts, ", ")
}

// settleFacts waits up to a minute for the group's status and children to settle
// (the same facts twice, 2 s apart, and the case's finish or restart reached) and
// returns them; an error when they did not.
func (g *groupBench) settleFacts(ctx context.Context, c groupCase, side, name string) ([]string, error) {
	var last []string
	deadline := time.Now().Add(time.Minute)
	for {
		facts, reached, err := g.facts(ctx, c, side, name)
		if err != nil {
			return nil, err
		}
		if reached && strings.Join(facts, "\n") == strings.Join(last, "\n") {
			return facts, nil
		}
		if time.Now().After(deadline) {
			return facts, fmt.Errorf("status not settled after a minute: %v", facts)
		}
		last = facts
		time.Sleep(2 * time.Second)
	}
}

// facts reads the group's status, children and pods; reached tells whether the case's
// end (finished, or for a restart: one restart, every child of attempt 1 active
// with all its pods) shows.
// conditionRestarting is JobSet v0.12's condition type of a restart in progress.
const conditionRestarting = "RestartingJobSet"

func (g *groupBench) facts(ctx context.Context, c groupCase, side, name string) (facts []string, reached bool, err error) {
	gvr := jobSetResource
	if side == sideOwner {
		gvr = trainingJobResource
	}
	u, err := g.dyn.Resource(gvr).Namespace(g.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	restarts, _, _ := unstructured.NestedInt64(st, "restarts")
	towards, _, _ := unstructured.NestedInt64(st, "restartsCountTowardsMax")
	terminal, _, _ := unstructured.NestedString(st, "terminalState")
	facts = append(facts, fmt.Sprintf("restarts=%d restartsCountTowardsMax=%d terminalState=%q", restarts, towards, terminal))
	conds, _, _ := unstructured.NestedSlice(st, "conditions")
	var cs []string
	for _, x := range conds {
		m, _ := x.(map[string]any)
		if m["type"] == conditionRestarting {
			// JobSet v0.12 added this condition type (True while a restart goes on,
			// False with JobsReady and the like once it ended), and jobkit writes it
			// as v0.12 does; v0.11.1, the controller compared here, has no such type.
			// It is left out of the comparison: a version difference, not a
			// behaviour one.
			continue
		}
		cs = append(cs, fmt.Sprintf("%v=%v(%v)", m["type"], m["status"], m["reason"]))
	}
	sort.Strings(cs)
	facts = append(facts, "conditions: "+strings.Join(cs, " "))
	if gcs, found, _ := unstructured.NestedSlice(st, "groupConditions"); found {
		var gs []string
		for _, x := range gcs {
			m, _ := x.(map[string]any)
			gs = append(gs, fmt.Sprintf("%v=%v(%v)", m["type"], m["status"], m["reason"]))
		}
		sort.Strings(gs)
		facts[len(facts)-1] += "; groupConditions: " + strings.Join(gs, " ")
	}
	pods, err := g.cs.CoreV1().Pods(g.namespace).List(ctx, metav1.ListOptions{LabelSelector: groupLabel + "=" + c.Name})
	if err != nil {
		return nil, false, err
	}
	pw := &podWatch{pods: map[string]*corev1.Pod{}}
	for i := range pods.Items {
		pw.pods[pods.Items[i].Name] = &pods.Items[i]
	}
	facts = append(facts, pw.summary())
	if side == sideOwner {
		for _, f := range []string{"active", "succeeded", "failed"} {
			v, _, _ := unstructured.NestedInt64(st, f)
			facts = append(facts, fmt.Sprintf("%s=%d", f, v))
		}
		if c.Restart {
			return facts, restarts == 1, nil
		}
		return facts, finishedCondition(u) != "", nil
	}
	rjs, _, _ := unstructured.NestedSlice(st, "replicatedJobsStatus")
	readyWorkers := int64(-1)
	for _, x := range rjs {
		m, _ := x.(map[string]any)
		facts = append(facts, fmt.Sprintf("replicatedJob %v: ready=%v succeeded=%v failed=%v active=%v suspended=%v",
			m["name"], m["ready"], m["succeeded"], m["failed"], m["active"], m["suspended"]))
		if m["name"] == "workers" {
			readyWorkers, _ = m["ready"].(int64)
		}
	}
	jobs, err := g.cs.BatchV1().Jobs(g.namespace).List(ctx, metav1.ListOptions{LabelSelector: groupLabel + "=" + c.Name})
	if err != nil {
		return nil, false, err
	}
	byKind := map[string]int{}
	for _, j := range jobs.Items {
		cond := "running"
		if t, ok := jobstatus.Finished(&j.Status); ok {
			cond = string(t)
		}
		k := fmt.Sprintf("child Jobs of attempt %s %s: succeeded=%d failed=%d active=%d", j.Labels[attemptLabel], cond, j.Status.Succeeded, j.Status.Failed, j.Status.Active)
		if j.DeletionTimestamp != nil {
			k += " deleting"
		}
		byKind[k]++
	}
	for k, v := range byKind {
		facts = append(facts, fmt.Sprintf("%s x%d", k, v))
	}
	sort.Strings(facts[3:])
	if c.Restart {
		return facts, restarts == 1 && readyWorkers == int64(c.Jobs) && len(jobs.Items) == c.Jobs+btoi(c.Leader), nil
	}
	return facts, finishedCondition(u) != "", nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cleanupGroups deletes the groups benchmark's JobSets, TrainingJobs, Jobs, pods and
// Services, their finalizers removed first (no controller runs any more), and waits
// until the Jobs and pods are gone.
func (g *groupBench) cleanupGroups(ctx context.Context) error {
	sel := metav1.ListOptions{LabelSelector: groupLabel}
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	for _, gvr := range []schema.GroupVersionResource{jobSetResource, trainingJobResource} {
		r := g.dyn.Resource(gvr).Namespace(g.namespace)
		list, err := r.List(ctx, sel)
		if err != nil {
			return err
		}
		for _, u := range list.Items {
			if len(u.GetFinalizers()) > 0 {
				if _, err := r.Patch(ctx, u.GetName(), types.MergePatchType, unfinalize, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			}
			if err := r.Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	jobs := g.cs.BatchV1().Jobs(g.namespace)
	list, err := jobs.List(ctx, sel)
	if err != nil {
		return err
	}
	for _, j := range list.Items {
		if len(j.Finalizers) > 0 {
			if _, err := jobs.Patch(ctx, j.Name, types.MergePatchType, unfinalize, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	svcs, err := g.cs.CoreV1().Services(g.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, s := range svcs.Items {
		if err := g.cs.CoreV1().Services(g.namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if err := cleanupLabel(ctx, g.cs, g.namespace, groupLabel); err != nil {
		return err
	}
	for range 600 {
		left, err := jobs.List(ctx, metav1.ListOptions{LabelSelector: groupLabel, Limit: 1})
		if err != nil {
			return err
		}
		if len(left.Items) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the Jobs labelled %s are left after a minute", groupLabel)
}

// crdResource is the API of CustomResourceDefinitions.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs applies the CustomResourceDefinitions of the YAML files (server-side,
// as the benchmark) and waits until each is Established.
func (g *groupBench) installCRDs(ctx context.Context, files []string) error {
	crds := g.dyn.Resource(crdResource)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(raw), "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if u.GetKind() != "CustomResourceDefinition" {
				continue
			}
			if _, err := crds.Patch(ctx, u.GetName(), types.ApplyPatchType, js, metav1.PatchOptions{FieldManager: "benchcluster", Force: ptr.To(true)}); err != nil {
				return fmt.Errorf("apply %s from %s: %w", u.GetName(), f, err)
			}
			if err := waitEstablished(ctx, g, u.GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, g *groupBench, name string) error {
	for range 300 {
		u, err := g.dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s not Established after 30 s", name)
}
