package controller_test

// The integration tests run the JobSet controller against a real kube-apiserver
// and etcd (envtest) with the CRD installed, as a user holding only
// config/rbac/role.yaml, and jobkit's own Job controller
// (examples/controllerruntime) running the child Jobs, which carry its
// managedBy: no kube-controller-manager runs. envtest has no scheduler, kubelet
// or garbage collector either: the test kubelet of internal/scenarios runs the
// pods, and the suite's collector (collect) plays the garbage collector's part
// in foreground deletions.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/jobset/controller"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

var (
	adminConfig *rest.Config // the Job controller's and the tests'
	userConfig  *rest.Config // the JobSet controller's: config/rbac/role.yaml only
	scheme      *runtime.Scheme
	k8s         client.Client
	clientset   kubernetes.Interface
)

// waitTimeout bounds every wait for the controllers.
const waitTimeout = 60 * time.Second

// poll is how the tests wait for the controllers: up to waitTimeout, and for
// the default quiet period where a state must hold.
var poll = envtesting.Poll{Timeout: waitTimeout}

const controllerUser = "jobset-controller"

func TestMain(m *testing.M) {
	opts := envtesting.Options{CRDs: []string{filepath.Join("..", "config", "crd")}, AddToScheme: v1alpha2.AddToScheme, QPS: 1000, Burst: 2000}
	os.Exit(envtesting.Main(m, opts, func(e *envtesting.Env) (err error) {
		adminConfig, scheme, k8s, clientset = e.Config, e.Scheme, e.Client, e.Clientset
		// The JobSet controller runs as controllerUser, bound to the ClusterRole of
		// config/rbac/role.yaml only.
		userConfig, err = e.UserWithRole(filepath.Join("..", "config", "rbac", "role.yaml"), controllerUser)
		return err
	}))
}

// env is one test's world: a namespace, a test kubelet, the suite's garbage
// collector, jobkit's Job controller and a JobSet controller, each under a
// managedBy name of the test's own, with their API writes counted, and the
// history of the namespace's Jobs.
type env struct {
	t              *testing.T
	ns             string
	jobSetManager  string // the JobSets' spec.managedBy
	jobManager     string // the children's spec.managedBy
	kubelet        *scenarios.Kubelet
	jobSetWrites   *apiWrites
	jobWrites      *apiWrites
	startedKubelet atomic.Bool
	inPlace        bool // the JobSet controller's Options.InPlaceRestart

	mu      sync.Mutex
	policy  func(*corev1.Pod) scenarios.Outcome
	history []jobEvent

	stopJobSet func()
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup
}

// jobEvent is one watch event of a Job of the namespace.
type jobEvent struct {
	typ                       watch.EventType
	name                      string
	uid                       types.UID
	role                      string
	attempt, jobAttempt       string
	ready, succeeded, deleted bool
}

// newEnv starts a test's world; with holdKubelet the kubelet starts only at
// startKubelet (the pods stay Pending, and never ready, until then).
func newEnv(t *testing.T, holdKubelet bool) *env {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "js-"}}
	if err := k8s.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	e := &env{
		t: t, ns: ns.Name,
		jobSetManager: "tests.jobset.examples.jobkit.dev/" + ns.Name,
		jobManager:    "tests.jobkit.dev/" + ns.Name,
		kubelet:       scenarios.NewKubelet(clientset, ns.Name),
		jobSetWrites:  newAPIWrites(),
		jobWrites:     newAPIWrites(),
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.kubelet.SetPolicy(func(p *corev1.Pod) scenarios.Outcome {
		e.mu.Lock()
		policy := e.policy
		e.mu.Unlock()
		if policy == nil {
			return scenarios.Outcome{}
		}
		return policy(p)
	})
	w, err := clientset.BatchV1().Jobs(ns.Name).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watching Jobs: %v", err)
	}
	e.wg.Go(func() { e.record(w) })
	e.wg.Go(func() { e.collect() })
	if !holdKubelet {
		e.startKubelet()
	}
	jobs, err := controllerruntime.Start(e.ctx, wrapped(adminConfig, e.jobWrites), controllerruntime.ManagerOptions{SkipNameValidation: true},
		scenarios.ReconcileConfig(e.jobManager), controllerruntime.Options{SkipNameValidation: true})
	if err != nil {
		t.Fatalf("starting the Job controller: %v", err)
	}
	e.startJobSetController(e.jobSetWrites)
	t.Cleanup(func() {
		e.stopJobSetController()
		if err := jobs.Stop(); err != nil {
			t.Errorf("the Job controller: %v", err)
		}
		w.Stop()
		e.cancel()
		e.wg.Wait()
	})
	return e
}

func (e *env) startKubelet() {
	if e.startedKubelet.CompareAndSwap(false, true) {
		e.wg.Go(func() { e.kubelet.Run(e.ctx) })
	}
}

// setPolicy sets how the kubelet ends each running pod (asked again while it
// returns the zero Outcome).
func (e *env) setPolicy(p func(*corev1.Pod) scenarios.Outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.policy = p
}

// startJobSetController starts a JobSet controller with fresh state (a new
// process) on a manager of its own, writing through writes.
func (e *env) startJobSetController(writes *apiWrites) {
	e.t.Helper()
	e.stopJobSet = envtesting.Manager{
		Name:    "the JobSet controller",
		Config:  wrapped(userConfig, writes),
		Options: ctrl.Options{Scheme: scheme},
		Setup: func(mgr manager.Manager) error {
			_, err := controller.Setup(mgr, controller.Options{
				ManagedBy: e.jobSetManager, ChildManagedBy: e.jobManager, SkipNameValidation: true, InPlaceRestart: e.inPlace,
			})
			return err
		},
		SyncTimeout: waitTimeout,
	}.Start(e.t)
}

func (e *env) stopJobSetController() {
	if e.stopJobSet != nil {
		e.stopJobSet()
		e.stopJobSet = nil
	}
}

// record keeps the history of the namespace's Jobs.
func (e *env) record(w watch.Interface) {
	for ev := range w.ResultChan() {
		job, ok := ev.Object.(*batchv1.Job)
		if !ok {
			continue
		}
		e.mu.Lock()
		e.history = append(e.history, jobEvent{
			typ: ev.Type, name: job.Name, uid: job.UID, role: job.Labels[plaingroup.LabelRoleName],
			attempt: job.Labels[plaingroup.LabelRestartAttempt], jobAttempt: job.Labels[plaingroup.LabelJobRestartAttempt],
			ready: ptr.Deref(job.Status.Ready, 0) > 0, succeeded: job.Status.Succeeded > 0, deleted: job.DeletionTimestamp != nil,
		})
		e.mu.Unlock()
	}
}

func (e *env) events() []jobEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.history)
}

// collect plays the garbage collector in foreground deletions, which envtest
// lacks: an object with the foregroundDeletion finalizer has its dependents
// (the pods of a Job; the Jobs and Services of a JobSet) deleted, and loses the
// finalizer once they are gone. The pods' own ends are the kubelet's and the
// Job controller's (it removes their tracking finalizers as they finish).
func (e *env) collect() {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-tick.C:
		}
		var pods corev1.PodList
		var jobs batchv1.JobList
		var services corev1.ServiceList
		var jobSets v1alpha2.JobSetList
		if errors.Join(k8s.List(e.ctx, &pods, client.InNamespace(e.ns)), k8s.List(e.ctx, &jobs, client.InNamespace(e.ns)),
			k8s.List(e.ctx, &services, client.InNamespace(e.ns)), k8s.List(e.ctx, &jobSets, client.InNamespace(e.ns))) != nil {
			continue
		}
		var objects []client.Object
		for i := range pods.Items {
			objects = append(objects, &pods.Items[i])
		}
		for i := range jobs.Items {
			objects = append(objects, &jobs.Items[i])
		}
		for i := range services.Items {
			objects = append(objects, &services.Items[i])
		}
		for i := range jobSets.Items {
			objects = append(objects, &jobSets.Items[i])
		}
		for _, o := range objects {
			if o.GetDeletionTimestamp() == nil || !slices.Contains(o.GetFinalizers(), metav1.FinalizerDeleteDependents) {
				continue
			}
			left := 0
			for _, d := range objects {
				if ref := metav1.GetControllerOfNoCopy(d); ref == nil || ref.UID != o.GetUID() {
					continue
				}
				left++
				if d.GetDeletionTimestamp() != nil {
					continue
				}
				if _, pod := d.(*corev1.Pod); pod {
					_ = k8s.Delete(e.ctx, d)
				} else {
					_ = k8s.Delete(e.ctx, d, client.PropagationPolicy(metav1.DeletePropagationForeground))
				}
			}
			if left == 0 {
				patch := client.MergeFromWithOptions(o.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
				o.SetFinalizers(slices.DeleteFunc(o.GetFinalizers(), func(f string) bool { return f == metav1.FinalizerDeleteDependents }))
				_ = k8s.Patch(e.ctx, o, patch)
			}
		}
	}
}

// apiWrites counts the API writes that go through a transport it wraps, by verb
// and resource ("create jobs", "update jobsets/status"), the API server's
// answer 2xx; crash, when set, is called after each and makes every later
// write fail when it returns true (a controller that died there).
type apiWrites struct {
	mu      sync.Mutex
	counts  map[string]int
	crash   func(verb, resource string, body []byte) bool
	crashed atomic.Bool
}

func newAPIWrites() *apiWrites { return &apiWrites{counts: map[string]int{}} }

var errCrashed = errors.New("the controller crashed (test)")

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func wrapped(cfg *rest.Config, w *apiWrites) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			verb := map[string]string{http.MethodPost: "create", http.MethodPut: "update", http.MethodPatch: "patch", http.MethodDelete: "delete"}[req.Method]
			if verb == "" {
				return rt.RoundTrip(req)
			}
			if w.crashed.Load() {
				return nil, errCrashed
			}
			var body []byte
			if req.GetBody != nil {
				if rc, err := req.GetBody(); err == nil {
					body, _ = io.ReadAll(rc)
				}
			}
			resp, err := rt.RoundTrip(req)
			if err != nil || resp.StatusCode < 200 || resp.StatusCode >= 300 {
				return resp, err
			}
			resource := resourceOf(req.URL.Path)
			w.mu.Lock()
			w.counts[verb+" "+resource]++
			crash := w.crash
			w.mu.Unlock()
			if crash != nil && crash(verb, resource, body) {
				w.crashed.Store(true)
			}
			return resp, nil
		})
	}
	return cfg
}

// resourceOf returns the resource of a namespaced API path, with its
// subresource: /apis/g/v/namespaces/ns/jobsets/name/status gives
// "jobsets/status".
func resourceOf(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	i := slices.Index(segs, "namespaces")
	switch {
	case i < 0 || len(segs) < i+3:
		return path
	case len(segs) >= i+5:
		return segs[i+2] + "/" + segs[i+4]
	}
	return segs[i+2]
}

// summary renders the counts, sorted, and their total.
func (w *apiWrites) summary() (string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.counts))
	total := 0
	for k, n := range w.counts {
		keys = append(keys, k)
		total += n
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, w.counts[k])
	}
	return strings.TrimSpace(b.String()), total
}

// statusRestarts reads status.restarts from the body of a JobSet status write.
func statusRestarts(body []byte) int32 {
	var js v1alpha2.JobSet
	if json.NewDecoder(bytes.NewReader(body)).Decode(&js) != nil {
		return -1
	}
	return js.Status.Restarts
}

// role returns a ReplicatedJob of replicas Indexed children of pods pods each,
// which fail at the first failed pod (backoffLimit 0).
func role(name string, replicas, pods int32) v1alpha2.ReplicatedJob {
	return v1alpha2.ReplicatedJob{
		Name: name, Replicas: replicas,
		Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Completions:    ptr.To(pods), Parallelism: ptr.To(pods), BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: name, Image: "registry.example/train:1"}},
			}},
		}},
	}
}

// jobSet returns a JobSet of the test's controller.
func (e *env) jobSet(name string, roles ...v1alpha2.ReplicatedJob) *v1alpha2.JobSet {
	return &v1alpha2.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       v1alpha2.JobSetSpec{ReplicatedJobs: roles, ManagedBy: ptr.To(e.jobSetManager)},
	}
}

func (e *env) create(js *v1alpha2.JobSet) {
	e.t.Helper()
	if err := k8s.Create(e.t.Context(), js); err != nil {
		e.t.Fatalf("creating JobSet %s: %v", js.Name, err)
	}
}

func (e *env) get(name string) *v1alpha2.JobSet {
	e.t.Helper()
	js := &v1alpha2.JobSet{}
	if err := k8s.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, js); err != nil {
		e.t.Fatalf("getting JobSet %s: %v", name, err)
	}
	return js
}

// jobs lists the namespace's Jobs by name.
func (e *env) jobs() map[string]*batchv1.Job {
	e.t.Helper()
	var list batchv1.JobList
	if err := k8s.List(e.t.Context(), &list, client.InNamespace(e.ns)); err != nil {
		e.t.Fatalf("listing Jobs: %v", err)
	}
	out := map[string]*batchv1.Job{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// waitFinished waits for the JobSet's terminal state and returns it.
func (e *env) waitFinished(name string) *v1alpha2.JobSet {
	e.t.Helper()
	var js *v1alpha2.JobSet
	poll.Eventually(e.t, "JobSet "+name+" finished", func() (bool, string) {
		js = e.get(name)
		return js.Status.TerminalState != "", fmt.Sprintf("status %+v", js.Status)
	})
	return js
}

// condition returns the JobSet's condition of type t, or nil.
func condition(js *v1alpha2.JobSet, t string) *metav1.Condition {
	for i := range js.Status.Conditions {
		if js.Status.Conditions[i].Type == t {
			return &js.Status.Conditions[i]
		}
	}
	return nil
}

// podRole, podIndex and podAttempt read a pod's JobSet labels.
func podRole(p *corev1.Pod) string    { return p.Labels[plaingroup.LabelRoleName] }
func podIndex(p *corev1.Pod) string   { return p.Labels[plaingroup.LabelJobIndex] }
func podAttempt(p *corev1.Pod) string { return p.Labels[plaingroup.LabelRestartAttempt] }
