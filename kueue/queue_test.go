package kueue_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// A queued Task waits suspended with no pod until Kueue admits its Workload,
// then runs with the flavour's node selector in its template and on each pod,
// and gives its quota back when it finishes.
func TestAdmittedRunsWithFlavour(t *testing.T) {
	cl := start(t, "2")
	cl.create(t, cl.task("a", 2))
	eventually(t, "Task a admitted and unsuspended", func() bool {
		return conditionTrue(cl.workload(t, "a"), kueueapi.WorkloadAdmitted) && !ptr.Deref(cl.get(t, "a").Spec.Suspend, true)
	})
	wl := cl.workload(t, "a")
	if n := len(wl.Spec.PodSets); n != 1 || wl.Spec.PodSets[0].Name != kueueapi.DefaultPodSetName || wl.Spec.PodSets[0].Count != 2 {
		t.Fatalf("Workload pod sets = %+v, want one \"main\" of count 2", wl.Spec.PodSets)
	}
	if got := cl.get(t, "a").Spec.Template.Spec.NodeSelector["pool"]; got != cl.cq {
		t.Fatalf("template nodeSelector pool = %q, want the flavour's %q", got, cl.cq)
	}
	eventually(t, "two pods of Task a started with the flavour's node selector", func() bool {
		return len(cl.kubelet.selectors("a")) == 2
	})
	for _, sel := range cl.kubelet.selectors("a") {
		if sel["pool"] != cl.cq {
			t.Fatalf("a pod of Task a started with node selector %v, want pool=%s", sel, cl.cq)
		}
	}
	if got := cl.usage(t); got != 2000 {
		t.Fatalf("ClusterQueue reservation = %dm CPU while a runs, want 2000m", got)
	}
	cl.kubelet.finish("a")
	eventually(t, "Task a Complete and its Workload Finished", func() bool {
		return complete(cl.get(t, "a")) && conditionTrue(cl.workload(t, "a"), kueueapi.WorkloadFinished)
	})
	eventually(t, "the ClusterQueue's reservation released", func() bool { return cl.usage(t) == 0 })
}

// Two Tasks over the quota: the second stays suspended, with no pod, until the
// first finishes; then it is admitted, runs and finishes.
func TestSecondWaitsForQuota(t *testing.T) {
	cl := start(t, "2")
	cl.create(t, cl.task("first", 2))
	eventually(t, "Task first admitted", func() bool { return conditionTrue(cl.workload(t, "first"), kueueapi.WorkloadAdmitted) })
	cl.create(t, cl.task("second", 2))
	eventually(t, "a Workload for Task second", func() bool { return cl.workload(t, "second") != nil })
	// Kueue's scheduler has seen second: give it time to admit it wrongly.
	time.Sleep(2 * time.Second)
	if wl := cl.workload(t, "second"); conditionTrue(wl, kueueapi.WorkloadQuotaReserved) {
		t.Fatalf("Task second got quota while first holds it all: %+v", wl.Status.Conditions)
	}
	if task := cl.get(t, "second"); !ptr.Deref(task.Spec.Suspend, false) || task.Status.Active != 0 {
		t.Fatalf("Task second suspend = %v, active = %d; want suspended with no pod", ptr.Deref(task.Spec.Suspend, false), task.Status.Active)
	}
	if sel := cl.kubelet.selectors("second"); sel != nil {
		t.Fatalf("pods of Task second started before admission (node selectors %v)", sel)
	}
	cl.kubelet.finish("first")
	eventually(t, "Task second admitted after first finished", func() bool {
		return complete(cl.get(t, "first")) && conditionTrue(cl.workload(t, "second"), kueueapi.WorkloadAdmitted)
	})
	cl.kubelet.finish("second")
	eventually(t, "Task second Complete", func() bool { return complete(cl.get(t, "second")) })
	eventually(t, "the ClusterQueue's reservation released", func() bool { return cl.usage(t) == 0 })
	for _, name := range []string{"first", "second"} {
		if wl := cl.workload(t, name); !conditionTrue(wl, kueueapi.WorkloadFinished) {
			t.Errorf("Workload of %s not Finished: %s", name, fmt.Sprint(wl.Status.Conditions))
		}
	}
}
