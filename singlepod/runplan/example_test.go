package runplan_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	plainconc "github.com/jobkit/jobkit/plain/concurrency"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

// A run goes through its life, one plan per sync; a controller would execute
// each plan and write the run back.
func ExampleCompute() {
	t0 := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	run := runplan.Run{UID: "run-7", Name: "unit-7", JobName: "unit", MaxConcurrency: 1, Created: t0}
	busy := runplan.Run{UID: "run-6", Name: "unit-6", JobName: "unit", State: runplan.StatePending, Created: t0.Add(-time.Minute)}
	in := runplan.Input{
		Run:     run,
		Peers:   []runplan.Run{busy},
		Outcome: podoutcome.Options{MaxRevivals: 3, Timeouts: plaindl.DefaultTimeouts()},
		Now:     t0,
	}

	// A new run of a job that already runs once: held back.
	p, _ := runplan.Compute(in)
	fmt.Println(p)

	// The other run finished: the run starts.
	in.Run.State, in.Run.StartTime = runplan.StateTriggered, t0
	in.Peers[0].State, in.Peers[0].Completed = runplan.StateSuccess, true
	in.Now = t0.Add(10 * time.Second)
	p, _ = runplan.Compute(in)
	fmt.Println(p)

	// Its pod is evicted: replaced, the revival recorded first.
	in.Run.State, in.Run.PendingTime = runplan.StatePending, in.Now
	in.Pod = &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "unit-7", UID: "pod-a", CreationTimestamp: metav1.NewTime(in.Now),
			OwnerReferences: []metav1.OwnerReference{{Kind: "RunJob", Name: "unit-7", UID: "run-7", Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"},
	}
	in.Now = in.Now.Add(time.Minute)
	p, _ = runplan.Compute(in)
	fmt.Println(p)
	// Output:
	// Wait(MaxConcurrency) start requeue=10s "Waiting: 1 jobs named \"unit\" are pending or were triggered earlier, at most 1 may run at once"
	// Create(Start) state=pending create-pod "Job triggered."
	// Revive(Evicted) revivals=1 delete-pod release-finalizers "Replacing pod unit-7 (Evicted), revival 1."
}

// Two runs test the same pull request: the newer one survives, and the older
// one, reconciled, finishes as aborted and deletes its pod.
func ExampleCompute_dedupe() {
	t0 := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	older := runplan.Run{UID: "a", Name: "unit-1", JobName: "unit", DedupeKey: "pr-42", State: runplan.StatePending,
		Created: t0, StartTime: t0, PendingTime: t0, HadPod: true}
	newer := runplan.Run{UID: "b", Name: "unit-2", JobName: "unit", DedupeKey: "pr-42", State: runplan.StateTriggered,
		Created: t0.Add(time.Minute), StartTime: t0.Add(time.Minute)}
	peers := []runplan.Run{older, newer}
	now := t0.Add(2 * time.Minute)

	p, _ := runplan.Compute(runplan.Input{Run: newer, Peers: peers, Now: now})
	fmt.Println(p)
	p, _ = runplan.Compute(runplan.Input{Run: older, Peers: peers, Now: now})
	fmt.Println(p)
	// Output:
	// Create(Start) supersede=unit-1 state=pending create-pod "Job triggered."
	// Finish(Superseded) state=aborted delete-pod complete "Superseded by a newer run unit-2."
}

// The de-duplication alone, without a whole plan: which run survives among
// three that test the same pull request, and which ones it supersedes.
func ExampleDeduplicate() {
	t0 := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	runs := []runplan.Run{
		{UID: "a", Name: "unit-1", JobName: "unit", DedupeKey: "pr-42", State: runplan.StatePending, Created: t0, StartTime: t0},
		{UID: "b", Name: "unit-2", JobName: "unit", DedupeKey: "pr-42", State: runplan.StateTriggered, Created: t0.Add(time.Minute), StartTime: t0.Add(time.Minute)},
		{UID: "c", Name: "unit-3", JobName: "unit", DedupeKey: "pr-42", State: runplan.StateTriggered, Created: t0.Add(2 * time.Minute)},
	}
	d := runplan.Deduplicate(runs[0], runs, t0.Add(time.Hour))
	fmt.Println("survives:", d.NewestName, "self superseded:", d.Self)
	for _, o := range d.Others {
		fmt.Println("supersede:", o.Name, "-", o.Description)
	}
	// Output:
	// survives: unit-3 self superseded: true
	// supersede: unit-2 - Superseded by a newer run unit-3.
}

func ExampleClassifyCreateError() {
	exists := apierrors.NewAlreadyExists(schema.GroupResource{Resource: "pods"}, "unit-7")
	for _, policy := range []runplan.CreateErrorPolicy{runplan.CreateErrorsJobkit, runplan.CreateErrorsPlank} {
		v := runplan.ClassifyCreateError(exists, policy, runplan.FixedName)
		fmt.Printf("%q: %d %s (%s)\n", policy, v.Code, v.Class, v.Why)
	}
	v := runplan.ClassifyCreateError(exists, runplan.CreateErrorsJobkit, runplan.GeneratedName)
	fmt.Printf("generated name: %d %s (%s)\n", v.Code, v.Class, v.Why)
	// Output:
	// "": 409 Exists (the pod exists already: adopt it)
	// "Plank": 409 Terminal (a 4xx answer (plank's rule))
	// generated name: 409 Retry (a generated name was taken: the next create generates another)
}

func ExamplePlan_CreateFailed() {
	p, _ := runplan.Compute(runplan.Input{
		Run:    runplan.Run{UID: "run-7", Name: "unit-7", State: runplan.StateTriggered},
		Limits: plainconc.Limits{},
		Now:    time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC),
	})
	fmt.Println(p)
	refused := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "unit-7", fmt.Errorf("violates PodSecurity"))
	fmt.Println(p.CreateFailed(refused))
	// Output:
	// Create(Start) state=pending create-pod "Job triggered."
	// Finish(CreateRefused) state=error complete "Pod can not be created: pods \"unit-7\" is forbidden: violates PodSecurity"
}

// A controller wakes the runs waiting behind a run as soon as that run stops
// holding a slot, instead of leaving them to their periodic retry.
func ExampleSharesLimit() {
	t0 := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	limits := plainconc.Limits{Queues: map[string]int{"gpu": 1}}
	before := runplan.Run{UID: "a", JobName: "train", Queue: "gpu", State: runplan.StatePending, Created: t0}
	after := before
	after.State, after.Completed = runplan.StateSuccess, true
	waiting := []runplan.Run{
		{UID: "b", JobName: "eval", Queue: "gpu", State: runplan.StateTriggered, Created: t0.Add(time.Minute)},
		{UID: "c", JobName: "lint", State: runplan.StateTriggered, Created: t0.Add(time.Minute)},
		{UID: "d", JobName: "eval", Queue: "gpu", State: runplan.StatePending, Created: t0.Add(time.Minute)},
	}
	if runplan.Holds(before) && !runplan.Holds(after) {
		for _, w := range waiting {
			if runplan.Waits(w) && runplan.SharesLimit(w, after, limits) {
				fmt.Println("wake", w.UID)
			}
		}
	}
	// Output:
	// wake b
}
