package reconciletest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// taskKind is the custom owner kind of these examples and tests: Tasks of group
// test.jobkit.dev, with their own tracking finalizer.
var taskKind = owner.Kind{Group: "test.jobkit.dev", Version: "v1", Kind: "Task", Finalizer: "test.jobkit.dev/task-tracking"}

// newTask returns a NonIndexed Task with the spec of reconciletest.NewJob and no
// managedBy.
func newTask(namespace, name string, completions, parallelism int32) *reconciletest.Task {
	j := reconciletest.NewJob(namespace, name, completions, parallelism)
	return &reconciletest.Task{ObjectMeta: j.ObjectMeta, Spec: j.Spec}
}

// An Indexed Job whose first two pods fail runs to completion; the Driver reports
// each step.
func ExampleDriver_Run() {
	c := reconciletest.NewCluster(reconciletest.Options{Seed: 1})
	r, _ := reconcile.New(reconcile.Config{
		Name:                        "example.com/jobs",
		Clock:                       c.Clock(),
		FinalizerRemovalParallelism: 1,
		Backoff:                     plainbackoff.Policy{Base: time.Second, Max: 2 * time.Second},
	}, c, reconcile.JobStatusWriter(c))
	job := reconciletest.NewJob("default", "render", 3, 3)
	job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	job.Spec.ManagedBy = ptr.To("example.com/jobs")
	_, _ = c.Jobs().Create(job)
	c.Kubelet().SetScript(reconciletest.FailFirst(2, 1))

	d := reconciletest.NewDriver(c, r)
	rr, err := d.Run(context.Background(), "default", "render", 100)
	if err != nil {
		panic(err)
	}
	st := rr.Workload.Status
	fmt.Printf("succeeded=%d failed=%d completedIndexes=%q\n", st.Succeeded, st.Failed, st.CompletedIndexes)
	fmt.Println(c.CountPods(rr.Workload.Object.(*batchv1.Job)))
	// Output:
	// succeeded=3 failed=2 completedIndexes="0-2"
	// map[Failed:2 Succeeded:3]
}

// A custom owner: a Store holds Tasks of the Cluster's own kind (NewStore with
// TaskType), the Reconciler is New with that kind and the Cluster as pod client
// and status writer, and the Driver syncs the Task through Sync. The pods carry the
// Task's controller reference and finalizer, and the garbage collector follows that
// kind.
func ExampleDriver_Run_customOwner() {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	c, tasks := reconciletest.NewStore(reconciletest.Options{Seed: 1, Owner: kind}, reconciletest.TaskType)
	r, err := reconcile.New(reconcile.Config{
		Name:                        "ml.example.com/controller",
		Owner:                       kind,
		Clock:                       c.Clock(),
		FinalizerRemovalParallelism: 1,
	}, c, c)
	if err != nil {
		panic(err)
	}
	task := newTask("default", "train", 3, 3)
	task.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	task.Spec.ManagedBy = ptr.To("ml.example.com/controller")
	_, _ = tasks.Create(task)
	c.Kubelet().SetScript(reconciletest.FailFirst(1, 1))

	d := reconciletest.NewDriver(c, r)
	rr, err := d.Run(context.Background(), "default", "train", 100)
	if err != nil {
		panic(err)
	}
	task = rr.Workload.Object.(*reconciletest.Task)
	st := task.Status
	fmt.Printf("%s: succeeded=%d failed=%d completedIndexes=%q\n", task.Kind, st.Succeeded, st.Failed, st.CompletedIndexes)
	pod := c.ListPods("default")[0]
	fmt.Println(pod.OwnerReferences[0].APIVersion, pod.OwnerReferences[0].Kind, pod.Finalizers)

	_ = tasks.Delete("default", "train")
	fmt.Println("collected:", c.CollectGarbage())
	// Output:
	// TrainingJob: succeeded=3 failed=1 completedIndexes="0-2"
	// ml.example.com/v1 TrainingJob []
	// collected: 4
}

// An owner deleted while its pods run: the garbage collector deletes the pods, the
// kubelet stops them, and the orphan cleanup removes the tracking finalizer that
// would otherwise keep them forever.
func ExampleDriver_CleanOrphans() {
	c, tasks := reconciletest.NewStore(reconciletest.Options{Seed: 1, Owner: taskKind}, reconciletest.TaskType)
	r, _ := reconcile.New(reconcile.Config{Name: "example.com/tasks", Owner: taskKind, Clock: c.Clock()}, c, c)
	task := newTask("default", "crawl", 2, 2)
	task.Spec.ManagedBy = ptr.To("example.com/tasks")
	_, _ = tasks.Create(task)
	d := reconciletest.NewDriver(c, r)
	_, _ = d.Step(context.Background(), "default", "crawl") // creates two pods
	for _, p := range c.ListPods("default") {
		_ = c.Kubelet().Run(p.Namespace, p.Name)
	}

	_ = tasks.Delete("default", "crawl")
	fmt.Println("deleted by the garbage collector:", c.CollectGarbage())
	_ = c.Kubelet().Step() // the pods stop, and wait for their finalizer
	c.Cache().DeliverAll()
	fmt.Println("pods left:", len(c.ListPods("default")))
	n, err := d.CleanOrphans(context.Background())
	fmt.Println("finalizers removed:", n, err)
	fmt.Println("pods left:", len(c.ListPods("default")))
	// Output:
	// deleted by the garbage collector: 2
	// pods left: 2
	// finalizers removed: 2 <nil>
	// pods left: 0
}

// The Cluster is a reconcile.StatusWriter: a Task converted with Task.Workload has its
// status written through its Store with its resourceVersion as the precondition, and validated as a
// Job's.
func ExampleCluster_WriteStatus() {
	c, tasks := reconciletest.NewStore(reconciletest.Options{Owner: taskKind}, reconciletest.TaskType)
	task, _ := tasks.Create(newTask("default", "t", 1, 1))
	w := task.Workload()
	out, err := c.WriteStatus(context.Background(), w, batchv1.JobStatus{Active: 1})
	fmt.Println(out.Status.Active, out.ResourceVersion != w.ResourceVersion, err)
	_, err = c.WriteStatus(context.Background(), w, batchv1.JobStatus{Active: 0}) // w is stale now
	fmt.Println(apierrors.IsConflict(err))
	_, err = c.WriteStatus(context.Background(), out, batchv1.JobStatus{Active: -1})
	fmt.Println(apierrors.IsInvalid(err))
	// Output:
	// 1 true <nil>
	// true
	// true
}

// Faults: the second pod creation fails, and the call log shows what the
// controller saw.
func ExampleCluster_FailNth() {
	c := reconciletest.NewCluster(reconciletest.Options{Seed: 1})
	c.FailNth(reconciletest.OpCreatePod, 2, apierrors.NewTooManyRequests("simulated throttling", 1))
	for range 3 {
		pod := &corev1.Pod{}
		pod.Namespace, pod.GenerateName = "default", "worker-"
		_, _ = c.CreatePod(context.Background(), pod)
	}
	for _, call := range c.Calls() {
		fmt.Println(call)
	}
	// Output:
	// #1 CreatePod default/worker-zth45
	// #2 CreatePod default/worker-* err=simulated throttling
	// #3 CreatePod default/worker-b8j8h
}

// A stale cache: the write is in the cluster at once, in the Cache only when the
// test delivers its event.
func ExampleCache() {
	c := reconciletest.NewCluster(reconciletest.Options{})
	c.Cache().OnPodEvent(func(ev reconcile.PodEvent) { fmt.Println("handler:", ev.Type, ev.New.Name) })
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = "default", "p"
	_, _ = c.CreatePod(context.Background(), pod)

	fmt.Println("cached before delivery:", c.Cache().Pod("default", "p") != nil)
	c.Cache().DeliverAll()
	fmt.Println("cached after delivery:", c.Cache().Pod("default", "p") != nil)
	// Output:
	// cached before delivery: false
	// handler: add p
	// cached after delivery: true
}

// An event handled in the middle of a list: the handler hears of the pod's change,
// the list returned holds the pod as it was before.
func ExampleCache_DeliverDuringList() {
	c := reconciletest.NewCluster(reconciletest.Options{})
	job, _ := c.Jobs().Create(reconciletest.NewJob("default", "j", 1, 1))
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = "default", "p"
	pod.OwnerReferences = []metav1.OwnerReference{owner.BatchJob.NewControllerRef(job)}
	_, _ = c.AddPod(pod)
	c.Cache().DeliverAll()
	c.Cache().OnPodEvent(func(ev reconcile.PodEvent) { fmt.Println("handler:", ev.Type, ev.New.Status.Phase) })
	_ = c.Kubelet().Run("default", "p")

	c.Cache().DeliverDuringList(1)
	pods, _ := c.Cache().OwnerPods(plan.JobWorkload(c.Jobs().Cached("default", "j")))
	fmt.Println("listed:", pods[0].Status.Phase)
	fmt.Println("cached now:", c.Cache().Pod("default", "p").Status.Phase)
	// Output:
	// handler: update Running
	// listed: Pending
	// cached now: Running
}

// The Kubelet moves a pod through its phases on command.
func ExampleKubelet() {
	c := reconciletest.NewCluster(reconciletest.Options{})
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = "default", "p"
	pod.Spec.Containers = []corev1.Container{{Name: "main"}}
	_, _ = c.CreatePod(context.Background(), pod)
	k := c.Kubelet()
	show := func() {
		p, _ := c.GetPod(context.Background(), "default", "p")
		fmt.Println(p.Status.Phase)
	}
	show()
	_ = k.Run("default", "p")
	show()
	_ = k.Evict("default", "p")
	show()
	// Output:
	// Pending
	// Running
	// Failed
}

// An adapter's test runs the conformance suite against its Client; this one runs it
// against the in-memory cluster.
func ExampleRunClientConformance() {
	c := reconciletest.NewCluster(reconciletest.Options{})
	fixture := reconciletest.ConformanceFixture{
		Client:    c,
		Namespace: "conformance",
		CreateJob: func(_ context.Context, j *batchv1.Job) (*batchv1.Job, error) { return c.Jobs().Create(j) },
		GetPod:    c.GetPod,
		GetJob:    func(_ context.Context, ns, name string) (*batchv1.Job, error) { return c.Jobs().Get(ns, name) },
	}
	// In a _test.go file:
	_ = func(t *testing.T) { reconciletest.RunClientConformance(t, fixture) }
}

// Restart(nil) restarts the informers only: the Cache lists the cluster anew and
// the Reconciler keeps what it remembers (its expectations of the pods it created).
// Restart with a new Reconciler is a new process that remembers nothing and
// learns the pods from the Cache's list. Neither creates a pod twice.
func ExampleDriver_Restart() {
	c := reconciletest.NewCluster(reconciletest.Options{Seed: 1})
	newReconciler := func() *reconcile.Reconciler {
		r, _ := reconcile.New(reconcile.Config{Name: "example.com/jobs", Clock: c.Clock(), FinalizerRemovalParallelism: 1},
			c, reconcile.JobStatusWriter(c))
		return r
	}
	job := reconciletest.NewJob("default", "restart", 2, 2)
	job.Spec.ManagedBy = ptr.To("example.com/jobs")
	_, _ = c.Jobs().Create(job)
	c.Kubelet().SetScript(nil) // pods stay Pending until the script changes
	c.Cache().DeliverAll()
	c.SetEventLatency(10 * time.Second) // the pods' events come late
	ctx := context.Background()

	d := reconciletest.NewDriver(c, newReconciler())
	_, _ = d.Step(ctx, "default", "restart")
	fmt.Println("pods:", len(c.ListPods("default")), "events waiting:", len(c.Cache().Pending()))

	d.Restart(nil)
	_, _ = d.Step(ctx, "default", "restart")
	fmt.Println("after Restart(nil): pods:", len(c.ListPods("default")))

	d.Restart(newReconciler())
	_, _ = d.Step(ctx, "default", "restart")
	fmt.Println("after Restart(new): pods:", len(c.ListPods("default")))

	c.Kubelet().SetScript(reconciletest.SucceedPods())
	rr, err := d.Run(ctx, "default", "restart", 100)
	if err != nil {
		panic(err)
	}
	fmt.Println("succeeded:", rr.Workload.Status.Succeeded, "pods:", len(c.ListPods("default")))
	// Output:
	// pods: 2 events waiting: 3
	// after Restart(nil): pods: 2
	// after Restart(new): pods: 2
	// succeeded: 2 pods: 2
}

// One Recorder serves as a Reconciler's event recorder and metrics sink; a test
// reads the event reasons and the series.
func ExampleRecorder() {
	c := reconciletest.NewCluster(reconciletest.Options{Seed: 1})
	rec := &reconciletest.Recorder{}
	r, _ := reconcile.New(reconcile.Config{Name: "example.com/jobs", Clock: c.Clock(), Events: rec, Metrics: rec, FinalizerRemovalParallelism: 1},
		c, reconcile.JobStatusWriter(c))
	job := reconciletest.NewJob("default", "rec", 2, 2)
	job.Spec.ManagedBy = ptr.To("example.com/jobs")
	_, _ = c.Jobs().Create(job)
	c.Kubelet().SetScript(reconciletest.SucceedPods())
	if _, err := reconciletest.NewDriver(c, r).Run(context.Background(), "default", "rec", 100); err != nil {
		panic(err)
	}
	fmt.Println("Completed events:", rec.Count("Completed"))
	fmt.Println("pods created:", rec.Get("job_pods_creation_total{new,succeeded}"))
	// Output:
	// Completed events: 1
	// pods created: 2
}
