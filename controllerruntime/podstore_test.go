package controllerruntime

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// Setup over a manager's informer cache lists an owner's pods as the informer's
// own objects and sets Config.ImmutablePods: a pod unchanged between two lists is
// the same pointer (its plan.FactCache facts are found again), an updated pod is a
// new one, and the orphans an owner's selector matches come from the same store.
func TestSetupListsInformerPods(t *testing.T) {
	ctx := t.Context()
	s := taskScheme(t)
	c := directClient(t, s)
	ns := namespace(t, c, "podstore")
	mgr, err := manager.New(restConfig, manager.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		Logger: logr.FromSlogHandler(slog.DiscardHandler),
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: func(obj any) (any, error) {
			if pod, ok := obj.(*corev1.Pod); ok {
				return reconcile.TrimPod(pod), nil
			}
			return obj, nil
		}}}}})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options[*reconciletest.Task]{Type: taskType, SkipNameValidation: true,
		Config: reconcile.Config{Name: "test.jobkit.dev/podstore", Owner: customKind}}
	ctl, err := Setup(mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !ctl.o.cfg.ImmutablePods || ctl.o.pods == nil {
		t.Fatalf("Setup over an informer cache: ImmutablePods=%v, store=%v; want true and the pod informer's store", ctl.o.cfg.ImmutablePods, ctl.o.pods)
	}
	// A second Setup on the same manager finds the index already there.
	opts.Name = "second"
	if second, err := Setup(mgr, opts); err != nil || second.o.pods != ctl.o.pods {
		t.Fatalf("second Setup: err=%v, same store=%v; want no error and the same store", err, err == nil && second.o.pods == ctl.o.pods)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	// Pods of an owner that does not exist (nothing syncs them) and orphans.
	const uid = "podstore-owner-uid"
	ghost := &reconciletest.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ghost", UID: uid}}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}
	for i, name := range []string{"a", "b", "c", "orphan-match", "orphan-other"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "x"}}, Spec: spec}
		switch {
		case i < 3:
			pod.OwnerReferences = []metav1.OwnerReference{customKind.NewControllerRef(ghost)}
		case name == "orphan-other":
			pod.Labels["app"] = "y"
		}
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	w := &plan.Workload{Namespace: ns, Name: "ghost", UID: uid}
	names := func(pods []*corev1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	var first []*corev1.Pod
	waitFor(t, "the informer to hold the three owned pods", 30*time.Second, func() bool {
		first, err = ctl.o.listOwned(ctx, w)
		return err == nil && len(first) == 3
	})
	byName := func(pods []*corev1.Pod) map[string]*corev1.Pod {
		m := map[string]*corev1.Pod{}
		for _, p := range pods {
			m[p.Name] = p
		}
		return m
	}
	again, err := ctl.o.listOwned(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	before, after := byName(first), byName(again)
	for name, p := range before {
		if after[name] != p {
			t.Errorf("pod %s listed twice unchanged: pointers %p and %p, want the same", name, p, after[name])
		}
	}
	if p := before["a"]; p.ManagedFields != nil {
		t.Errorf("pod a from the store keeps managedFields: the transform did not run on the stored object")
	}

	// An updated pod is a new object; the others stay.
	pod := &corev1.Pod{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "a"}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Labels["rev"] = "2"
	if err := c.Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	var updated map[string]*corev1.Pod
	waitFor(t, "the informer to see pod a's update", 30*time.Second, func() bool {
		pods, err := ctl.o.listOwned(ctx, w)
		updated = byName(pods)
		return err == nil && updated["a"] != nil && updated["a"].Labels["rev"] == "2"
	})
	if updated["a"] == before["a"] {
		t.Errorf("updated pod a: same pointer as before its update, want a new object")
	}
	if before["a"].Labels["rev"] != "" {
		t.Errorf("the old object of pod a was changed in place: labels %v", before["a"].Labels)
	}
	for _, name := range []string{"b", "c"} {
		if updated[name] != before[name] {
			t.Errorf("pod %s unchanged: pointers %p and %p, want the same", name, before[name], updated[name])
		}
	}

	// With a selector, the orphans it matches are listed too, from the store.
	w.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	var withOrphans []*corev1.Pod
	waitFor(t, "the informer to hold the orphans", 30*time.Second, func() bool {
		withOrphans, err = ctl.o.listPods(ctx, w)
		return err == nil && len(withOrphans) == 4
	})
	if got, want := names(withOrphans), []string{"a", "b", "c", "orphan-match"}; !slices.Equal(got, want) {
		t.Errorf("listPods with selector app=x = %v, want %v", got, want)
	}
	orphans, err := ctl.o.listPods(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if byName(orphans)["orphan-match"] != byName(withOrphans)["orphan-match"] {
		t.Errorf("orphan listed twice unchanged: different pointers")
	}
}

// Without an informer store (a fake client; a cache whose pod informer exposes
// none) the pods are listed as copies and Config.ImmutablePods is false, even when
// Options.Config sets it.
func TestPodListFallback(t *testing.T) {
	idx, err := podIndexer(t.Context(), &informertest.FakeInformers{}, true)
	if err != nil || idx != nil {
		t.Errorf("podIndexer over informers without a store = %v, %v; want nil, nil", idx, err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "p",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "j", Controller: ptr.To(true)}}}}
	cl := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(pod).
		WithIndex(&corev1.Pod{}, OwnerUIDIndex, OwnerUID).WithStatusSubresource(&batchv1.Job{}).Build()
	ctl, err := NewController(cl, cl, Options[*batchv1.Job]{Type: reconcile.JobType,
		Config: reconcile.Config{Name: name, ImmutablePods: true}})
	if err != nil {
		t.Fatal(err)
	}
	if ctl.o.cfg.ImmutablePods || ctl.o.pods != nil {
		t.Errorf("NewController over a fake client: ImmutablePods=%v, store=%v; want false and none", ctl.o.cfg.ImmutablePods, ctl.o.pods)
	}
	w := &plan.Workload{Namespace: "ns", Name: "j", UID: "j"}
	first, err := ctl.o.listOwned(t.Context(), w)
	if err != nil || len(first) != 1 || first[0].Name != "p" {
		t.Fatalf("listOwned = %v, %v; want pod p", first, err)
	}
	again, err := ctl.o.listOwned(t.Context(), w)
	if err != nil || len(again) != 1 || again[0] == first[0] {
		t.Errorf("listOwned twice over the fake client: same pointer=%v, err=%v; want copies", err == nil && len(again) == 1 && again[0] == first[0], err)
	}
}
