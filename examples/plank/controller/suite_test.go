package controller_test

// The integration suite: one real kube-apiserver and etcd (envtest) with the
// RunJob CRD installed, one manager running the controller, and a test kubelet
// that sets pod status through the API. Every test works in its own namespace
// and runs in parallel.

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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/plank/controller"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
)

// The controller's configuration in this suite.
const (
	maxPending = 3        // per namespace
	queueOne   = "one"    // capacity 1
	queueShut  = "closed" // capacity 0

	// reporter is the finalizer a reporter would put on the pods; the
	// controller releases it from the pods it replaces.
	reporter = "test.jobkit.dev/reporter"
)

// waitTimeout bounds every wait for the controller; the steps take well under a
// second, the timeouts under test 2s.
const waitTimeout = 20 * time.Second

var (
	// k8s talks to the API server directly, without a cache.
	k8s    client.Client
	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	logger := logr.Discard()
	if v := os.Getenv("PLANK_TEST_V"); v != "" { // e.g. PLANK_TEST_V=1 go test -v
		cfg := textlogger.NewConfig()
		_ = cfg.Verbosity().Set(v)
		logger = textlogger.NewLogger(cfg)
	}
	ctrl.SetLogger(logger)

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
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Cache:   controller.CacheOptions(""),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := controller.New(mgr.GetClient(), controller.Config{
		MaxPending:         maxPending,
		Queues:             map[string]int{queueOne: 1, queueShut: 0},
		DefaultTimeouts:    &plaindl.Timeouts{}, // pods never schedule here: no timeout unless a test sets one
		RetryAfter:         time.Second,
		LockRetry:          50 * time.Millisecond,
		Workers:            8,
		ReporterFinalizers: []string{reporter},
	})
	if err == nil {
		err = r.SetupWithManager(mgr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	})
	defer func() { cancel(); wg.Wait() }()

	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "plank-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return ns.Name
}

// newRun creates a RunJob named name in ns running one container; edit, if not
// nil, changes its spec first.
func newRun(t *testing.T, ns, name string, edit func(*v1alpha1.RunJobSpec)) *v1alpha1.RunJob {
	t.Helper()
	rj := &v1alpha1.RunJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.RunJobSpec{
			JobName: name,
			PodSpec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/test:1"}}},
		},
	}
	if edit != nil {
		edit(&rj.Spec)
	}
	if err := k8s.Create(context.Background(), rj); err != nil {
		t.Fatalf("creating RunJob %s/%s: %v", ns, name, err)
	}
	return rj
}

func getRun(t *testing.T, ns, name string) *v1alpha1.RunJob {
	t.Helper()
	var rj v1alpha1.RunJob
	if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &rj); err != nil {
		t.Fatalf("getting RunJob %s/%s: %v", ns, name, err)
	}
	return &rj
}

// waitRun polls the RunJob until cond holds and returns it.
func waitRun(t *testing.T, ns, name, what string, cond func(*v1alpha1.RunJob) bool) *v1alpha1.RunJob {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		rj := getRun(t, ns, name)
		if cond(rj) {
			return rj
		}
		if time.Now().After(deadline) {
			t.Fatalf("RunJob %s/%s: not %s after %v; status: %+v", ns, name, what, waitTimeout, rj.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitState(t *testing.T, ns, name string, state v1alpha1.State) *v1alpha1.RunJob {
	t.Helper()
	return waitRun(t, ns, name, "in state "+string(state), func(rj *v1alpha1.RunJob) bool {
		return rj.Status.State == state && (!state.Finished() || rj.Status.CompletionTime != nil)
	})
}

// waitDescription waits until the run's description contains want.
func waitDescription(t *testing.T, ns, name, want string) *v1alpha1.RunJob {
	t.Helper()
	return waitRun(t, ns, name, fmt.Sprintf("described %q", want), func(rj *v1alpha1.RunJob) bool {
		return strings.Contains(rj.Status.Description, want)
	})
}

// waitPod waits until a pod named name exists in ns and is not uid (the UID of
// a pod it replaces, or "").
func waitPod(t *testing.T, ns, name string, notUID types.UID) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		var pod corev1.Pod
		err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &pod)
		if err == nil && pod.UID != notUID {
			return &pod
		}
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("getting pod %s/%s: %v", ns, name, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s/%s (other than UID %q) did not appear within %v", ns, name, notUID, waitTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPodGone waits until the pod with uid is gone.
func waitPodGone(t *testing.T, ns, name string, uid types.UID) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		var pod corev1.Pod
		err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &pod)
		if apierrors.IsNotFound(err) || (err == nil && pod.UID != uid) {
			return
		}
		if err != nil {
			t.Fatalf("getting pod %s/%s: %v", ns, name, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s/%s (UID %s) still exists after %v", ns, name, uid, waitTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// podExists reports whether a pod named name exists in ns.
func podExists(t *testing.T, ns, name string) bool {
	t.Helper()
	err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &corev1.Pod{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("getting pod %s/%s: %v", ns, name, err)
	}
	return err == nil
}

// setPodStatus is the test kubelet: it changes the status of the pod through
// the status subresource, retrying on conflicts.
func setPodStatus(t *testing.T, pod *corev1.Pod, edit func(*corev1.Pod)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur corev1.Pod
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), &cur); err != nil {
			return err
		}
		edit(&cur)
		return k8s.Status().Update(context.Background(), &cur)
	})
	if err != nil {
		t.Fatalf("kubelet: updating status of pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// updatePod changes the pod's metadata or spec, retrying on conflicts.
func updatePod(t *testing.T, pod *corev1.Pod, edit func(*corev1.Pod)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur corev1.Pod
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), &cur); err != nil {
			return err
		}
		edit(&cur)
		return k8s.Update(context.Background(), &cur)
	})
	if err != nil {
		t.Fatalf("updating pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// updateRunStatus changes a run's status as a user would (kubectl patch
// --subresource=status), retrying on conflicts.
func updateRunStatus(t *testing.T, ns, name string, edit func(*v1alpha1.RunJobStatus)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rj := getRun(t, ns, name)
		edit(&rj.Status)
		return k8s.Status().Update(context.Background(), rj)
	})
	if err != nil {
		t.Fatalf("updating the status of RunJob %s/%s: %v", ns, name, err)
	}
}

// The test kubelet's transitions. They keep phases moving forward, as the
// API server requires.

func startPod(t *testing.T, pod *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	now := metav1.Now()
	setPodStatus(t, pod, func(p *corev1.Pod) {
		p.Status.Phase = phase
		p.Status.StartTime = &now
		for _, c := range p.Spec.Containers {
			st := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
			if phase == corev1.PodRunning {
				st.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
				st.Started = ptr.To(true)
				st.Ready = true
			} else {
				st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
			}
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses[:0:0], st)
		}
	})
}

// endPod finishes the pod in phase with its containers terminated with
// exitCode (and reason, when not empty).
func endPod(t *testing.T, pod *corev1.Pod, phase corev1.PodPhase, exitCode int32, reason string) {
	t.Helper()
	now := metav1.Now()
	setPodStatus(t, pod, func(p *corev1.Pod) {
		p.Status.Phase = phase
		p.Status.Reason = reason
		if p.Status.StartTime == nil {
			p.Status.StartTime = &now
		}
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: exitCode, StartedAt: *p.Status.StartTime, FinishedAt: now,
				}},
			})
		}
	})
}

func evictPod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	setPodStatus(t, pod, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason = "Evicted"
		p.Status.Message = "The node was low on resource: memory."
	})
}

// pendingCounter records the largest number of runs of a namespace matching
// group that were pending at once, sampled every few milliseconds from the API.
type pendingCounter struct {
	mu   sync.Mutex
	max  int
	stop chan struct{}
	done chan struct{}
}

func countPending(t *testing.T, ns string, group func(*v1alpha1.RunJob) bool) *pendingCounter {
	t.Helper()
	c := &pendingCounter{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			var runs v1alpha1.RunJobList
			if err := k8s.List(context.Background(), &runs, client.InNamespace(ns)); err == nil {
				n := 0
				for i := range runs.Items {
					if rj := &runs.Items[i]; group(rj) && rj.Status.State == v1alpha1.StatePending {
						n++
					}
				}
				c.mu.Lock()
				c.max = max(c.max, n)
				c.mu.Unlock()
			}
			select {
			case <-c.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(c.close)
	return c
}

func (c *pendingCounter) close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
}

// Max stops sampling and returns the largest count seen.
func (c *pendingCounter) Max() int {
	c.close()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.max
}

// creationOrder returns the names of the runs in the order the controller
// starts them: by creation time, then UID.
func creationOrder(t *testing.T, ns string, names ...string) []string {
	t.Helper()
	runs := make([]*v1alpha1.RunJob, 0, len(names))
	for _, n := range names {
		runs = append(runs, getRun(t, ns, n))
	}
	slices.SortFunc(runs, func(a, b *v1alpha1.RunJob) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(string(a.UID), string(b.UID))
	})
	out := make([]string, len(runs))
	for i, rj := range runs {
		out[i] = rj.Name
	}
	return out
}
