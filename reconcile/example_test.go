package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// A Job of 5 completions, 2 at a time, run to completion on the in-memory cluster:
// the Driver delivers watch events, syncs the Job and lets the kubelet script move
// the pods, one simulated second per step.
func ExampleReconciler_Sync() {
	cluster := reconciletest.NewCluster(reconciletest.Options{})
	r, err := reconcile.New(reconcile.Config{
		Name:                        "example.com/job-controller",
		Clock:                       cluster.Clock(),
		FinalizerRemovalParallelism: 1,
	}, cluster, reconcile.JobStatusWriter(cluster))
	if err != nil {
		panic(err)
	}
	job := reconciletest.NewJob("default", "pi", 5, 2)
	job.Spec.ManagedBy = ptr.To("example.com/job-controller")
	if _, err := cluster.Jobs().Create(job); err != nil {
		panic(err)
	}
	cluster.Kubelet().SetScript(reconciletest.SucceedPods())

	d := reconciletest.NewDriver(cluster, r)
	rr, err := d.Run(context.Background(), "default", "pi", 100)
	if err != nil {
		panic(err)
	}
	st := rr.Workload.Status
	fmt.Printf("steps=%d succeeded=%d failed=%d active=%d\n", rr.Steps, st.Succeeded, st.Failed, st.Active)
	for _, c := range st.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason)
	}
	// Output:
	// steps=7 succeeded=5 failed=0 active=0
	// SuccessCriteriaMet True CompletionsReached
	// Complete True CompletionsReached
}

// A caller that reads a value in use fills the defaults in first and gives the
// result to New: here a test inspects the expectations of a sync, through the store
// it shares with the Reconciler.
func ExampleConfig_WithDefaults() {
	cluster := reconciletest.NewCluster(reconciletest.Options{})
	cfg, err := reconcile.Config{Name: "example.com/job-controller", Clock: cluster.Clock()}.WithDefaults()
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Owner.Kind, cfg.PodEventBatchPeriod, cfg.UncertainCreationTimeout, cfg.Expectations.TTL())
	r, err := reconcile.New(cfg, cluster, reconcile.JobStatusWriter(cluster))
	if err != nil {
		panic(err)
	}
	job := reconciletest.NewJob("default", "pi", 2, 2)
	job.Spec.ManagedBy = ptr.To("example.com/job-controller")
	if _, err := cluster.Jobs().Create(job); err != nil {
		panic(err)
	}
	d := reconciletest.NewDriver(cluster, r)
	cluster.Cache().DeliverAll()
	if _, _, err := d.Sync(context.Background(), "default", "pi"); err != nil {
		panic(err)
	}
	fmt.Println("creations expected:", cfg.Expectations.Get(reconcile.Key("default", "pi")).Creations)
	cluster.Cache().DeliverAll()
	fmt.Println("satisfied once the pods are seen:", cfg.Expectations.Satisfied(reconcile.Key("default", "pi")))
	// Output:
	// Job 1s 30s 5m0s
	// creations expected: 2
	// satisfied once the pods are seen: true
}

// The name is required: it is what the controller answers to in spec.managedBy.
func ExampleNew() {
	c := reconciletest.NewCluster(reconciletest.Options{})
	_, err := reconcile.New(reconcile.Config{}, c, c)
	fmt.Println(errors.Is(err, reconcile.ErrInvalidConfig))
	// Output:
	// true
}

// An informer's pod handler asks MapPodEvent which Job to sync and what the event
// tells the expectations.
func ExampleMapPodEvent() {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pi", UID: "1234"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "pi-x7k2p", UID: "abcd", ResourceVersion: "7",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		Finalizers:      []string{finalizers.Name},
	}}
	m := reconcile.MapPodEvent(owner.BatchJob, reconcile.PodEvent{Type: reconcile.PodAdded, New: pod}, time.Second)
	for _, t := range m.Jobs {
		fmt.Printf("sync %s after %s; creation observed: %v\n", t.Key, m.Delay, t.CreationObserved)
	}

	gone := pod.DeepCopy()
	gone.ResourceVersion = "9"
	gone.Finalizers = nil
	m = reconcile.MapPodEvent(owner.BatchJob, reconcile.PodEvent{Type: reconcile.PodDeleted, Old: gone}, time.Second)
	t := m.Jobs[0]
	fmt.Printf("deletion observed: %v; finalizer removal observed: %v\n", t.DeletionObserved, t.FinalizerRemovalObserved)
	// Output:
	// sync default/pi after 1s; creation observed: true
	// deletion observed: true; finalizer removal observed: true
}

// ObservePodEvent applies an event to the Reconciler's expectations; a pod whose Job
// is gone goes to the orphan cleanup.
func ExampleReconciler_ObservePodEvent() {
	c := reconciletest.NewCluster(reconciletest.Options{})
	cfg, _ := reconcile.Config{Name: "example.com/job-controller"}.WithDefaults()
	r, _ := reconcile.New(cfg, c, c)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pi", UID: "1234"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "pi-x7k2p", UID: "abcd",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		Finalizers:      []string{finalizers.Name},
	}}
	noJobs := func(namespace, name string) *finalizers.OrphanOwner { return nil }
	res := r.ObservePodEvent(reconcile.PodEvent{Type: reconcile.PodAdded, New: pod}, noJobs)
	fmt.Println("sync:", res.Sync, "orphan cleanup:", res.OrphanCleanup)

	d := finalizers.DecideOrphan(cfg.Owner, pod, nil, cfg.Name)
	fmt.Println(d.Remove, d.Reason)
	// Output:
	// sync: [] orphan cleanup: true
	// true controlling Job no longer exists
}

// ObservePodEvent for a custom owner kind: the lookup returns
// the owner's facts from the controller's own cache.
func ExampleReconciler_ObservePodEvent_owner() {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	c := reconciletest.NewCluster(reconciletest.Options{})
	r, _ := reconcile.New(reconcile.Config{Name: "ml.example.com/controller", Owner: kind}, c, c)
	tj := &metav1.ObjectMeta{Namespace: "default", Name: "train", UID: "1234"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "train-0", UID: "abcd",
		OwnerReferences: []metav1.OwnerReference{kind.NewControllerRef(tj)},
		Finalizers:      []string{kind.Finalizer},
	}}
	finished := func(namespace, name string) *finalizers.OrphanOwner {
		return &finalizers.OrphanOwner{UID: "1234", ManagedBy: "ml.example.com/controller", Finished: true}
	}
	res := r.ObservePodEvent(reconcile.PodEvent{Type: reconcile.PodAdded, New: pod}, finished)
	fmt.Println("sync:", res.Sync, "orphan cleanup:", res.OrphanCleanup)
	// Output:
	// sync: [] orphan cleanup: true
}

// Owner events: a spec change syncs at once, a status change is batched.
func ExampleReconciler_ObserveOwnerEvent() {
	c := reconciletest.NewCluster(reconciletest.Options{})
	r, _ := reconcile.New(reconcile.Config{Name: "example.com/job-controller"}, c, reconcile.JobStatusWriter(c))
	old := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pi", UID: "1", Generation: 1}}
	cur := old.DeepCopy()
	cur.Generation = 2
	res := r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: plan.JobWorkload(old), New: plan.JobWorkload(cur)})
	fmt.Println(res.Key, res.Sync, res.Delay)
	cur = old.DeepCopy()
	cur.Status.Active = 1
	res = r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: plan.JobWorkload(old), New: plan.JobWorkload(cur)})
	fmt.Println(res.Key, res.Sync, res.Delay)
	res = r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: plan.JobWorkload(cur)})
	fmt.Println(res.Key, res.Sync, res.OrphanCleanup.UID, res.Gone)
	// Output:
	// default/pi true 0s
	// default/pi true 1s
	// default/pi false 1 true
}

func ExampleAdoptPatch() {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pi", UID: "1234"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "stray", UID: "abcd"}}
	p := reconcile.AdoptPatch(owner.BatchJob, job, pod)
	fmt.Println(p.Type)
	fmt.Println(string(p.Data))
	// Output:
	// application/strategic-merge-patch+json
	// {"metadata":{"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"pi","uid":"1234","controller":true,"blockOwnerDeletion":true}],"uid":"abcd","finalizers":["batch.kubernetes.io/job-tracking"]}}
}

func ExampleReleasePatch() {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pi-x7k2p", UID: "abcd", ResourceVersion: "42"}}
	fmt.Println(string(reconcile.ReleasePatch(owner.BatchJob, "1234", pod).Data))
	// Output:
	// {"metadata":{"ownerReferences":[{"$patch":"delete","uid":"1234"}],"uid":"abcd","$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"],"resourceVersion":"42"}}
}
