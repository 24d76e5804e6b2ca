package kueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
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
	eventually(t, "the ClusterQueue's reservation at Task a's 2 CPUs", func() bool { return cl.usage(t) == 2000 })
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

// A higher-priority Task preempts a running lower-priority one: the low one is
// suspended, its pods gone, none counted as succeeded; the high one runs and
// finishes; then the low one is admitted again and finishes with every
// completion counted once.
func TestPreemption(t *testing.T) {
	cl := start(t, "2")
	for name, value := range map[string]int32{cl.cq + "-low": 10, cl.cq + "-high": 1000} {
		cl.create(t, &kueueapi.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
	}
	low, high := cl.task("low", 2), cl.task("high", 2)
	low.Labels[constants.WorkloadPriorityClassLabel] = cl.cq + "-low"
	high.Labels[constants.WorkloadPriorityClassLabel] = cl.cq + "-high"
	cl.create(t, low)
	eventually(t, "Task low running two pods", func() bool { return len(cl.kubelet.selectors("low")) == 2 && cl.get(t, "low").Status.Active == 2 })
	cl.create(t, high)
	eventually(t, "Task low evicted and suspended with no pod left", func() bool {
		task := cl.get(t, "low")
		return conditionTrue(cl.workload(t, "low"), kueueapi.WorkloadEvicted) && ptr.Deref(task.Spec.Suspend, false) &&
			task.Status.Active == 0 && cl.pods(t, "low") == 0
	})
	// A suspension's pods count neither as succeeded nor as failed, and the
	// start time is cleared, as the Job controller does.
	if task := cl.get(t, "low"); task.Status.Succeeded != 0 || task.Status.Failed != 0 || task.Status.StartTime != nil ||
		task.Spec.Template.Spec.NodeSelector["pool"] != "" {
		t.Fatalf("preempted Task low: succeeded %d, failed %d, startTime %v, template node selector %v; want 0, 0, nil and the flavour's selector restored away",
			task.Status.Succeeded, task.Status.Failed, task.Status.StartTime, task.Spec.Template.Spec.NodeSelector)
	}
	eventually(t, "Task high admitted and running", func() bool {
		return conditionTrue(cl.workload(t, "high"), kueueapi.WorkloadAdmitted) && cl.get(t, "high").Status.Active == 2
	})
	cl.kubelet.finish("high")
	eventually(t, "Task high Complete", func() bool { return complete(cl.get(t, "high")) })
	eventually(t, "Task low admitted again", func() bool {
		return conditionTrue(cl.workload(t, "low"), kueueapi.WorkloadAdmitted) && !ptr.Deref(cl.get(t, "low").Spec.Suspend, true)
	})
	cl.kubelet.finish("low")
	eventually(t, "Task low Complete", func() bool { return complete(cl.get(t, "low")) })
	if task := cl.get(t, "low"); task.Status.Succeeded != 2 {
		t.Errorf("Task low succeeded = %d, want 2 (each completion once)", task.Status.Succeeded)
	}
	eventually(t, "the ClusterQueue's reservation released", func() bool { return cl.usage(t) == 0 })
}

// waitForPodsReady: an admitted Task whose pods are all ready gets the
// Workload condition PodsReady; one whose pods never become ready is evicted
// after the timeout (PodsReadyTimeout), suspended and left with no pod.
func TestWaitForPodsReady(t *testing.T) {
	// The requeuing backoff starts at a minute: the evicted Task stays suspended
	// while the test looks.
	cl := start(t, "4", withPodsReady(&configapi.WaitForPodsReady{Timeout: metav1.Duration{Duration: 3 * time.Second}}))
	cl.create(t, cl.task("ready", 2))
	eventually(t, "Task ready's Workload PodsReady", func() bool { return conditionTrue(cl.workload(t, "ready"), kueueapi.WorkloadPodsReady) })
	cl.kubelet.stall("stuck")
	cl.create(t, cl.task("stuck", 2))
	eventually(t, "Task stuck running two pods that are not ready", func() bool { return cl.get(t, "stuck").Status.Active == 2 })
	if conditionTrue(cl.workload(t, "stuck"), kueueapi.WorkloadPodsReady) {
		t.Fatal("Task stuck's Workload PodsReady with no pod ready")
	}
	eventually(t, "Task stuck evicted for PodsReadyTimeout, suspended, no pod left", func() bool {
		wl := cl.workload(t, "stuck")
		if wl == nil {
			return false
		}
		c := apimeta.FindStatusCondition(wl.Status.Conditions, kueueapi.WorkloadEvicted)
		task := cl.get(t, "stuck")
		return c != nil && c.Reason == kueueapi.WorkloadEvictedByPodsReadyTimeout && ptr.Deref(task.Spec.Suspend, false) &&
			task.Status.Active == 0 && cl.pods(t, "stuck") == 0
	})
	cl.kubelet.finish("ready")
	eventually(t, "Task ready Complete", func() bool { return complete(cl.get(t, "ready")) })
}

// With Options.Webhook, a queued Task created unsuspended is stored suspended
// (no pod starts before admission), then admitted and run; a Task without a
// queue name is left as created.
func TestWebhookSuspendsOnCreate(t *testing.T) {
	cl := start(t, "2", func(o *options) { o.webhook = true })
	queued := cl.task("queued", 2)
	queued.Spec.Suspend = nil
	eventually(t, "the webhook server answering", func() bool { return cl.c.Create(context.Background(), queued) == nil })
	if !ptr.Deref(queued.Spec.Suspend, false) {
		t.Fatalf("queued Task stored with suspend %v, want true", queued.Spec.Suspend)
	}
	free := cl.task("free", 1)
	free.Spec.Suspend = nil
	delete(free.Labels, constants.QueueLabel)
	cl.create(t, free)
	if free.Spec.Suspend != nil {
		t.Fatalf("Task without a queue name stored with suspend %v, want unset", *free.Spec.Suspend)
	}
	eventually(t, "the queued Task admitted and running", func() bool {
		return conditionTrue(cl.workload(t, "queued"), kueueapi.WorkloadAdmitted) && len(cl.kubelet.selectors("queued")) == 2
	})
	cl.kubelet.finish("queued")
	eventually(t, "the queued Task Complete", func() bool { return complete(cl.get(t, "queued")) })
}

// With the webhook, a queued owner whose LocalQueue's ClusterQueue has a
// MultiKueue admission check is stored suspended and handed to MultiKueue's
// controller (spec.managedBy kueue.x-k8s.io/multikueue), which jobkit's
// controller leaves alone; one of an ordinary queue keeps jobkit's.
func TestWebhookManagedByMultiKueue(t *testing.T) {
	cl := start(t, "2", func(o *options) { o.webhook = true })
	multi := cl.cq + "-multi"
	cl.create(t, &kueueapi.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: multi},
		Spec: kueueapi.AdmissionCheckSpec{ControllerName: kueueapi.MultiKueueControllerName}})
	cl.create(t, &kueueapi.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: multi}, Spec: kueueapi.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: cl.namespace}},
		AdmissionChecksStrategy: &kueueapi.AdmissionChecksStrategy{AdmissionChecks: []kueueapi.AdmissionCheckStrategyRule{
			{Name: kueueapi.AdmissionCheckReference(multi)}}},
		ResourceGroups: []kueueapi.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueueapi.FlavorQuotas{{Name: kueueapi.ResourceFlavorReference(cl.cq),
				Resources: []kueueapi.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("2")}}}}}},
	}})
	cl.create(t, &kueueapi.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: cl.namespace, Name: "multi"},
		Spec: kueueapi.LocalQueueSpec{ClusterQueue: kueueapi.ClusterQueueReference(multi)}})
	remote := cl.task("remote", 1)
	remote.Spec.Suspend = nil
	remote.Labels[constants.QueueLabel] = "multi"
	eventually(t, "the webhook server answering", func() bool { return cl.c.Create(context.Background(), remote) == nil })
	if !ptr.Deref(remote.Spec.Suspend, false) || ptr.Deref(remote.Spec.ManagedBy, "") != kueueapi.MultiKueueControllerName {
		t.Fatalf("Task of the MultiKueue queue stored with suspend %v, managedBy %v; want true, %s",
			remote.Spec.Suspend, remote.Spec.ManagedBy, kueueapi.MultiKueueControllerName)
	}
	local := cl.task("local", 1)
	local.Spec.Suspend = nil
	cl.create(t, local)
	if !ptr.Deref(local.Spec.Suspend, false) || ptr.Deref(local.Spec.ManagedBy, "") != controllerName {
		t.Fatalf("Task of an ordinary queue stored with suspend %v, managedBy %v; want true, %s", local.Spec.Suspend, local.Spec.ManagedBy, controllerName)
	}
	eventually(t, "the local Task admitted and running", func() bool { return len(cl.kubelet.selectors("local")) == 1 })
	cl.kubelet.finish("local")
	eventually(t, "the local Task Complete", func() bool { return complete(cl.get(t, "local")) })
	if task := cl.get(t, "remote"); task.Status.StartTime != nil || cl.pods(t, "remote") != 0 {
		t.Errorf("Task remote, MultiKueue's: startTime %v, %d pods; want none: jobkit's controller leaves it alone", task.Status.StartTime, cl.pods(t, "remote"))
	}
}

// Reclaimable pods: once two of a Task's three completions succeeded, only one
// of its two pods is needed; Kueue gives the other's quota back, and a waiting
// one-pod Task is admitted while the first still runs.
func TestReclaimablePods(t *testing.T) {
	cl := start(t, "2")
	first := cl.task("first", 2)
	first.Spec.Completions = ptr.To[int32](3)
	cl.create(t, first)
	eventually(t, "Task first running two pods", func() bool { return cl.get(t, "first").Status.Active == 2 })
	cl.create(t, cl.task("small", 1))
	eventually(t, "a Workload for Task small", func() bool { return cl.workload(t, "small") != nil })
	if conditionTrue(cl.workload(t, "small"), kueueapi.WorkloadQuotaReserved) {
		t.Fatal("Task small got quota while first holds it all")
	}
	cl.kubelet.succeed("first", 2)
	eventually(t, "one pod of first reclaimed and Task small admitted while first runs", func() bool {
		wl := cl.workload(t, "first")
		return wl != nil && len(wl.Status.ReclaimablePods) == 1 && wl.Status.ReclaimablePods[0].Count == 1 &&
			conditionTrue(cl.workload(t, "small"), kueueapi.WorkloadAdmitted) && !complete(cl.get(t, "first"))
	})
	cl.kubelet.finish("first")
	cl.kubelet.finish("small")
	eventually(t, "both Tasks Complete", func() bool { return complete(cl.get(t, "first")) && complete(cl.get(t, "small")) })
	if got := cl.get(t, "first").Status.Succeeded; got != 3 {
		t.Errorf("Task first succeeded = %d, want 3", got)
	}
	eventually(t, "the ClusterQueue's reservation released", func() bool { return cl.usage(t) == 0 })
}
