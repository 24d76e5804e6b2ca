package controllerruntime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// restConfig is the API server of the package's integration tests, started once by
// TestMain, with the CRD of testdata/tasks.yaml installed.
var restConfig *rest.Config

func TestMain(m *testing.M) {
	// Informers started by controller-runtime log to its global logger, which must
	// be set once.
	crlog.SetLogger(logr.FromSlogHandler(slog.DiscardHandler))
	env, cfg, err := testenv.Start("testdata")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration environment:", err)
		os.Exit(1)
	}
	restConfig = cfg
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the integration environment:", err)
	}
	os.Exit(code)
}

// taskList is the list type of reconciletest.Task, which the manager's cache needs.
type taskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []reconciletest.Task `json:"items"`
}

func (l *taskList) DeepCopyObject() runtime.Object {
	out := &taskList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopy())
	}
	return out
}

// taskType is the Type of the Task custom resource: the one a user writes.
var taskType = reconcile.Type[*reconciletest.Task]{
	New:       func() *reconciletest.Task { return &reconciletest.Task{} },
	Workload:  func(t *reconciletest.Task) (*plan.Workload, error) { return t.Workload(), nil },
	SetStatus: func(t *reconciletest.Task, status batchv1.JobStatus) { t.Status = status },
	ManagedBy: func(t *reconciletest.Task) *string { return t.Spec.ManagedBy },
}

func taskScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	gv := customKind.GroupVersionKind().GroupVersion()
	s.AddKnownTypeWithName(gv.WithKind("Task"), &reconciletest.Task{})
	s.AddKnownTypeWithName(gv.WithKind("TaskList"), &taskList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}

func directClient(t *testing.T, s *runtime.Scheme) client.Client {
	t.Helper()
	c, err := client.New(restConfig, client.Options{Scheme: s})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	return c
}

func namespace(t *testing.T, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating a namespace %s-*: %v", prefix, err)
	}
	return ns.Name
}

// kubelet runs the pods of namespace through the API until ctx ends: each pending
// pod goes Running, then Succeeded, except the first fail ones, which fail with
// exit code 1.
func kubelet(ctx context.Context, c client.Client, namespace string, fail int) {
	go func() {
		failed := 0
		for ctx.Err() == nil {
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(namespace)); err == nil {
				for i := range pods.Items {
					pod := &pods.Items[i]
					now := metav1.Now()
					switch pod.Status.Phase {
					case corev1.PodPending, "":
						pod.Status.Phase, pod.Status.StartTime = corev1.PodRunning, &now
					case corev1.PodRunning:
						code := int32(0)
						pod.Status.Phase = corev1.PodSucceeded
						if failed < fail {
							code, pod.Status.Phase = 1, corev1.PodFailed
						}
						pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
							Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: now, FinishedAt: now}}}}
						if err := c.Status().Update(ctx, pod); err == nil && code != 0 {
							failed++
						}
						continue
					default:
						continue
					}
					_ = c.Status().Update(ctx, pod)
				}
			}
			time.Sleep(30 * time.Millisecond)
		}
	}()
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A custom owner runs to completion through the one call, with its metrics under
// its own prefix, and its pods are freed by the orphan worker once it is deleted
// (envtest runs no garbage collector).
func TestSetupRunsCustomOwner(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := taskScheme(t)
	c := directClient(t, s)
	ns := namespace(t, c, "task")
	const ctrlName = "test.jobkit.dev/task-controller"
	mgr, err := manager.New(restConfig, manager.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		Logger: logr.FromSlogHandler(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := Setup(mgr, Options[*reconciletest.Task]{
		Type:               taskType,
		Config:             reconcile.Config{Name: ctrlName, Owner: customKind, PodEventBatchPeriod: 20 * time.Millisecond},
		SkipNameValidation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The run below is planned from the informer's pods, with a plan.FactCache per
	// owner; its results are those of reconcile's syncs without one (reconcile's
	// TestImmutablePodsSameCalls).
	if !ctl.o.cfg.ImmutablePods {
		t.Fatal("Setup over an informer cache left Config.ImmutablePods false")
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	kubelet(ctx, c, ns, 1)

	task := &reconciletest.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "work"}, Spec: batchv1.JobSpec{
		Completions: ptr.To[int32](3), Parallelism: ptr.To[int32](2), CompletionMode: ptr.To(batchv1.IndexedCompletion),
		BackoffLimit: ptr.To[int32](3), ManagedBy: ptr.To(ctrlName),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}},
	}}
	if err := c.Create(ctx, task); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "work"}
	got := &reconciletest.Task{}
	waitFor(t, "the Task to complete", 60*time.Second, func() bool {
		return c.Get(ctx, key, got) == nil && slices.ContainsFunc(got.Status.Conditions, func(c batchv1.JobCondition) bool {
			return c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue
		})
	})
	if got.Status.Succeeded != 3 || got.Status.Failed != 1 || got.Status.CompletedIndexes != "0-2" {
		t.Errorf("status succeeded=%d failed=%d completedIndexes=%q, want 3, 1 and 0-2", got.Status.Succeeded, got.Status.Failed, got.Status.CompletedIndexes)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if ref := customKind.ControllerOf(&p); ref == nil || ref.UID != got.UID {
			t.Errorf("pod %s is not controlled by the Task: %+v", p.Name, p.OwnerReferences)
		}
	}

	// Metrics under the kind's own prefix, in controller-runtime's registry.
	series := gatherNames(t)
	for _, want := range []string{
		`task_controller_job_syncs_total{action=pods_created,completion_mode=Indexed,result=success}`,
		`task_controller_jobs_finished_total{completion_mode=Indexed,reason=CompletionsReached,result=succeeded}`,
		`task_controller_job_finished_indexes_total{backoffLimit=global,status=succeeded}`,
		`task_controller_stale_sync_skips_total{group=test.jobkit.dev,resource=tasks}`,
	} {
		if !slices.Contains(series, want) {
			t.Errorf("no series %s in controller-runtime's registry; task_controller series: %v", want, filter(series, "task_controller_"))
		}
	}

	// A pod of a Task being deleted keeps its finalizer until the orphan worker
	// frees it.
	doomed := task.DeepCopy()
	doomed.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "doomed"}
	doomed.Spec.Suspend = ptr.To(true)
	if err := c.Create(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orphan", Finalizers: []string{customKind.Finalizer},
		OwnerReferences: []metav1.OwnerReference{customKind.NewControllerRef(doomed)}}, Spec: task.Spec.Template.Spec}
	if err := c.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := c.Delete(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the orphan's finalizer to go", 30*time.Second, func() bool {
		p := &corev1.Pod{}
		err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "orphan"}, p)
		return err != nil || !customKind.HasFinalizer(p)
	})
}

// gatherNames returns every series of controller-runtime's registry as
// name{label=value,...}.
func gatherNames(t *testing.T) []string {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out = append(out, f.GetName()+"{"+strings.Join(labels, ",")+"}")
		}
	}
	return out
}

func filter(xs []string, prefix string) []string {
	var out []string
	for _, x := range xs {
		if strings.HasPrefix(x, prefix) {
			out = append(out, x)
		}
	}
	return out
}

// The pod client behaves as the Reconciler expects of the API server.
func TestClientConformance(t *testing.T) {
	c := directClient(t, clientgoscheme.Scheme)
	ns := namespace(t, c, "conformance")
	reconciletest.RunClientConformance(t, reconciletest.ConformanceFixture{
		Client:    newAPIClient(c, nil),
		Namespace: ns,
		CreateJob: func(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
			out := job.DeepCopy()
			return out, c.Create(ctx, out)
		},
		GetPod: func(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
			pod := &corev1.Pod{}
			return pod, c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, pod)
		},
		GetJob: func(ctx context.Context, namespace, name string) (*batchv1.Job, error) {
			job := &batchv1.Job{}
			return job, c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, job)
		},
	})
}
