package controller_test

// The integration tests run the controller against a real kube-apiserver and etcd
// (envtest) with the CRD installed. envtest runs no scheduler, kubelet or garbage
// collector: the suite's test kubelet (internal/scenarios) binds, runs and ends the
// pods through the API, as each test tells it.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	"github.com/jobkit/jobkit/reconcile"
)

var (
	restConfig *rest.Config // the controllers': authenticated as controllerUser
	scheme     *runtime.Scheme
	k8s        client.Client        // the tests' own client, straight to the API server
	clientset  kubernetes.Interface // for the kubelet and the pod watches
)

// poll is how the tests wait for the controller: up to 30 s, looking every
// 25 ms, and for 1.5 s where a state must hold.
var poll = envtesting.Poll{}

// controllerUser is the user the controllers of the tests run as: it holds only
// config/rbac/role.yaml, so every test also checks that the role covers what the
// controller does.
const controllerUser = "trainingjob-controller"

func TestMain(m *testing.M) {
	opts := envtesting.Options{CRDs: []string{filepath.Join("..", "config", "crd")}, AddToScheme: v1alpha1.AddToScheme, QPS: 1000, Burst: 2000}
	os.Exit(envtesting.Main(m, opts, func(e *envtesting.Env) (err error) {
		scheme, k8s, clientset = e.Scheme, e.Client, e.Clientset
		restConfig, err = e.UserWithRole(filepath.Join("..", "config", "rbac", "role.yaml"), controllerUser)
		return err
	}))
}

// env is one test's world: a namespace, a test kubelet, a log of the pods created
// there, and a controller of its own (a managedBy name of its own) whose status
// writes are recorded.
type env struct {
	t         *testing.T
	ns        string
	managedBy string
	writes    *scenarios.StatusWrites
	kubelet   *scenarios.Kubelet

	mu       sync.Mutex
	outcomes map[string]scenarios.Outcome // by pod name
	fallback scenarios.Outcome            // for the other pods
	failedAt map[string]time.Time         // when the kubelet was told to fail a pod
	created  map[types.UID]string         // every pod ADDED in the namespace: its index
	syncs    []string                     // what the controller's syncs did, the last ones
	stop     func()
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tj-"}}
	if err := k8s.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	e := &env{
		t: t, ns: ns.Name, managedBy: "tests.ml.examples.jobkit.dev/" + ns.Name,
		writes:   scenarios.NewStatusWrites(v1alpha1.GroupName, "trainingjobs"),
		kubelet:  scenarios.NewKubelet(clientset, ns.Name),
		outcomes: map[string]scenarios.Outcome{}, failedAt: map[string]time.Time{}, created: map[types.UID]string{},
	}
	e.kubelet.SetPolicy(func(p *corev1.Pod) scenarios.Outcome {
		e.mu.Lock()
		defer e.mu.Unlock()
		o, ok := e.outcomes[p.Name]
		if !ok {
			o = e.fallback
		}
		if o != (scenarios.Outcome{}) && o != scenarios.Succeed() {
			e.failedAt[p.Name] = time.Now()
		}
		return o
	})
	w, err := clientset.CoreV1().Pods(ns.Name).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watching pods: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { e.kubelet.Run(ctx) })
	wg.Go(func() {
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
				e.mu.Lock()
				e.created[pod.UID] = pod.Annotations[batchv1.JobCompletionIndexAnnotation]
				e.mu.Unlock()
			}
		}
	})
	t.Cleanup(func() { w.Stop(); cancel(); wg.Wait() })
	t.Cleanup(e.stopController) // before the kubelet stops
	e.startController()
	return e
}

// startController starts a controller with fresh state (a new process), writing
// through a transport that records its TrainingJob status writes.
func (e *env) startController() {
	e.t.Helper()
	cfg := rest.CopyConfig(restConfig)
	cfg.WrapTransport = e.writes.Wrap
	e.stop = envtesting.Manager{
		Name:   "the controller",
		Config: cfg,
		Options: ctrl.Options{
			Scheme:     scheme,
			Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		},
		Setup: func(mgr manager.Manager) error {
			_, err := controller.Setup(mgr, jkcr.Options[*v1alpha1.TrainingJob]{Config: reconcile.Config{
				Name:                e.managedBy,
				PodEventBatchPeriod: 50 * time.Millisecond,
				MinBackoffRequeue:   100 * time.Millisecond,
			}, SkipNameValidation: true, OnSync: e.recordSync})
			return err
		},
		SyncTimeout: envtesting.DefaultTimeout,
	}.Start(e.t)
}

// recordSync keeps what the last syncs did, for the messages of failed tests.
func (e *env) recordSync(tj *v1alpha1.TrainingJob, res reconcile.Result, err error) {
	line := fmt.Sprintf("%s rv=%s skipped=%q retry=%q writes=%d removed=%d deleted=%d created=%d requeue=%v err=%v",
		time.Now().Format("15:04:05.000"), tj.ResourceVersion, res.Skipped, res.Retry, res.StatusWrites, res.FinalizersRemoved, res.Deleted, res.Created, res.RequeueAfter, err)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.syncs = append(e.syncs, line)
	if len(e.syncs) > 40 {
		e.syncs = e.syncs[len(e.syncs)-40:]
	}
}

// lastSyncs returns what the last syncs did, one a line.
func (e *env) lastSyncs() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return "\n  " + strings.Join(e.syncs, "\n  ")
}

func (e *env) stopController() {
	if e.stop != nil {
		e.stop()
		e.stop = nil
	}
}

// newTJ returns a TrainingJob of the test's controller: workers indexes, one
// container "trainer".
func (e *env) newTJ(name string, workers int32) *v1alpha1.TrainingJob {
	return &v1alpha1.TrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: v1alpha1.TrainingJobSpec{
			Workers:   workers,
			ManagedBy: ptr.To(e.managedBy),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "trainer", Image: "registry.example/trainer:1"}},
			}},
		},
	}
}

func (e *env) create(tj *v1alpha1.TrainingJob) {
	e.t.Helper()
	if err := k8s.Create(e.t.Context(), tj); err != nil {
		e.t.Fatalf("creating TrainingJob %s: %v", tj.Name, err)
	}
}

func (e *env) get(name string) *v1alpha1.TrainingJob {
	e.t.Helper()
	tj := &v1alpha1.TrainingJob{}
	if err := k8s.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, tj); err != nil {
		e.t.Fatalf("getting TrainingJob %s: %v", name, err)
	}
	return tj
}

// finish tells the kubelet how the pod ends.
func (e *env) finish(pod *corev1.Pod, o scenarios.Outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.outcomes[pod.Name] = o
}

// finishAll makes every pod not told otherwise end with o.
func (e *env) finishAll(o scenarios.Outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fallback = o
}

// pods lists the pods of the namespace, sorted by index then creation.
func (e *env) pods() []*corev1.Pod {
	e.t.Helper()
	var list corev1.PodList
	if err := k8s.List(e.t.Context(), &list, client.InNamespace(e.ns)); err != nil {
		e.t.Fatalf("listing pods: %v", err)
	}
	out := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		return strings.Compare(index(a)+"/"+a.CreationTimestamp.UTC().Format(time.RFC3339)+a.Name,
			index(b)+"/"+b.CreationTimestamp.UTC().Format(time.RFC3339)+b.Name)
	})
	return out
}

func index(p *corev1.Pod) string { return p.Annotations[batchv1.JobCompletionIndexAnnotation] }

func running(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
}

// podOf returns the running pod of index i, or nil.
func podOf(pods []*corev1.Pod, i string) *corev1.Pod {
	for _, p := range pods {
		if index(p) == i && running(p) {
			return p
		}
	}
	return nil
}

// waitRunning waits until n pods run and returns them.
func (e *env) waitRunning(n int) []*corev1.Pod {
	e.t.Helper()
	var run []*corev1.Pod
	poll.Eventually(e.t, fmt.Sprintf("%d running pods", n), func() (bool, string) {
		pods := e.pods()
		run = run[:0]
		for _, p := range pods {
			if running(p) {
				run = append(run, p)
			}
		}
		return len(run) == n, describePods(pods)
	})
	return run
}

// waitFinished waits for the condition Complete or Failed of name.
func (e *env) waitFinished(name string) *v1alpha1.TrainingJob {
	e.t.Helper()
	var tj *v1alpha1.TrainingJob
	poll.Eventually(e.t, name+" finished", func() (bool, string) {
		tj = e.get(name)
		return controller.Finished(tj), fmt.Sprintf("%+v", tj.Status)
	})
	return tj
}

// finalStatus is the part of a finished run's status the tests compare exactly.
type finalStatus struct {
	Succeeded, Failed int32
	CompletedIndexes  string
	FailedIndexes     string
	Conditions        []string // type=status/reason, in order
}

func statusOf(tj *v1alpha1.TrainingJob) finalStatus {
	s := finalStatus{
		Succeeded: tj.Status.Succeeded, Failed: tj.Status.Failed,
		CompletedIndexes: tj.Status.CompletedIndexes, FailedIndexes: ptr.Deref(tj.Status.FailedIndexes, ""),
	}
	for _, c := range tj.Status.Conditions {
		s.Conditions = append(s.Conditions, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return s
}

// createdPerIndex returns how many pods were ever created for each index.
func (e *env) createdPerIndex() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for _, i := range e.created {
		out[i]++
	}
	return out
}

// checkDone checks what holds after every run: no pod keeps the tracking finalizer,
// nothing uncounted, and the API server accepted every status write the controller
// sent (Conflicts aside) and at least one.
func (e *env) checkDone(tj *v1alpha1.TrainingJob) {
	e.t.Helper()
	if u := tj.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		e.t.Errorf("uncountedTerminatedPods = %+v after the run finished", *u)
	}
	if tj.Status.Active != 0 {
		e.t.Errorf("active = %d after the run finished", tj.Status.Active)
	}
	poll.Eventually(e.t, "no pod keeps the tracking finalizer", func() (bool, string) {
		pods := e.pods()
		return count(pods, tracked) == 0, describePods(pods)
	})
	e.checkWrites()
}

func (e *env) checkWrites() {
	e.t.Helper()
	accepted, rejected := e.writes.Counts()
	for _, r := range rejected {
		e.t.Errorf("the API server refused a status write of the controller: %s", r)
	}
	if accepted == 0 {
		e.t.Error("no status write of the controller went through the recorded transport")
	}
}

func tracked(p *corev1.Pod) bool { return controller.Kind.HasFinalizer(p) }

func count(pods []*corev1.Pod, f func(*corev1.Pod) bool) int {
	n := 0
	for _, p := range pods {
		if f(p) {
			n++
		}
	}
	return n
}

func describePods(pods []*corev1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "\n  %s index=%s phase=%s deleting=%v finalizers=%v", p.Name, index(p), p.Status.Phase, p.DeletionTimestamp != nil, p.Finalizers)
	}
	return b.String()
}
