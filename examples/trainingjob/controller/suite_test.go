package controller_test

// The integration tests run the controller against a real kube-apiserver and etcd
// (envtest) with the CRD installed. envtest runs no scheduler, kubelet or garbage
// collector: the suite's test kubelet (internal/scenarios) binds, runs and ends the
// pods through the API, as each test tells it.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/controllerruntime/testenv"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	"github.com/jobkit/jobkit/reconcile"
)

var (
	restConfig *rest.Config // the controllers': authenticated as controllerUser
	scheme     = runtime.NewScheme()
	k8s        client.Client        // the tests' own client, straight to the API server
	clientset  kubernetes.Interface // for the kubelet and the pod watches
)

const (
	waitTimeout = 30 * time.Second
	quietPeriod = 1500 * time.Millisecond
	pollEvery   = 25 * time.Millisecond
)

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	ctrl.SetLogger(logr.Discard())
	env, cfg, err := testenv.Start(filepath.Join("..", "config", "crd"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err == nil {
		clientset, err = kubernetes.NewForConfig(cfg)
	}
	if err == nil {
		restConfig, err = userWithRole(env, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// controllerUser is the user the controllers of the tests run as: it holds only
// config/rbac/role.yaml, so every test also checks that the role covers what the
// controller does.
const controllerUser = "trainingjob-controller"

// userWithRole binds the ClusterRole of config/rbac/role.yaml to controllerUser and
// returns a rest config that authenticates as that user.
func userWithRole(env *envtest.Environment, admin *rest.Config) (*rest.Config, error) {
	data, err := os.ReadFile(filepath.Join("..", "config", "rbac", "role.yaml"))
	if err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		return nil, fmt.Errorf("decoding the role: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: controllerUser}},
	}
	ctx := context.Background()
	if err := errors.Join(k8s.Create(ctx, role), k8s.Create(ctx, binding)); err != nil {
		return nil, fmt.Errorf("installing the role: %w", err)
	}
	user, err := env.AddUser(envtest.User{Name: controllerUser}, admin)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", controllerUser, err)
	}
	cfg := user.Config()
	cfg.QPS, cfg.Burst = admin.QPS, admin.Burst
	return cfg, nil
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
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     scheme,
		Logger:     logr.Discard(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		e.t.Fatalf("manager: %v", err)
	}
	_, err = controller.Setup(mgr, jkcr.Options[*v1alpha1.TrainingJob]{Config: reconcile.Config{
		Name:                e.managedBy,
		PodEventBatchPeriod: 50 * time.Millisecond,
		MinBackoffRequeue:   100 * time.Millisecond,
	}, SkipNameValidation: true, OnSync: e.recordSync})
	if err != nil {
		e.t.Fatalf("Setup: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	syncCtx, cancelSync := context.WithTimeout(ctx, waitTimeout)
	defer cancelSync()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		e.t.Fatal("the controller's caches did not sync")
	}
	e.stop = func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("manager: %v", err)
		}
	}
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

// eventually polls cond until it holds, failing the test after waitTimeout with
// the last description cond gave.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ok, desc := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s: %s", what, desc)
		}
		time.Sleep(pollEvery)
	}
}

// consistently fails the test if cond stops holding within quietPeriod.
func (e *env) consistently(what string, cond func() (bool, string)) {
	e.t.Helper()
	for deadline := time.Now().Add(quietPeriod); time.Now().Before(deadline); time.Sleep(pollEvery) {
		if ok, desc := cond(); !ok {
			e.t.Fatalf("%s: no longer true: %s", what, desc)
		}
	}
}

// waitRunning waits until n pods run and returns them.
func (e *env) waitRunning(n int) []*corev1.Pod {
	e.t.Helper()
	var run []*corev1.Pod
	e.eventually(fmt.Sprintf("%d running pods", n), func() (bool, string) {
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
	e.eventually(name+" finished", func() (bool, string) {
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
	e.eventually("no pod keeps the tracking finalizer", func() (bool, string) {
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
