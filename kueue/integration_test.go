package kueue_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	kueueconstants "sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/controllerruntime/testenv"
	"github.com/jobkit/jobkit/kueue"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// restConfig is the API server of the package's integration tests, started once by
// TestMain with the Task CRD (testdata) and Kueue's CRDs installed; webhooks is
// where its webhook configuration sends the creations of Tasks in the
// namespaces labelled webhookLabel.
var (
	restConfig *rest.Config
	webhooks   *envtest.WebhookInstallOptions
)

// webhookLabel (value "on") marks the namespaces whose Tasks go through the
// defaulting webhook of kueue.Setup.
const webhookLabel = "test.jobkit.dev/webhook"

// taskWebhook sends the creations of Tasks in the namespaces labelled
// webhookLabel to the path where kueue.Setup serves its defaulting webhook.
func taskWebhook() *admissionregistrationv1.MutatingWebhookConfiguration {
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "tasks.test.jobkit.dev"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "suspend.tasks.test.jobkit.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "default", Name: "unused", Path: ptr.To("/mutate-test-jobkit-dev-v1-task")}},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"test.jobkit.dev"}, APIVersions: []string{"v1"}, Resources: []string{"tasks"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{webhookLabel: "on"}},
			SideEffects:             &none,
			FailurePolicy:           &fail,
			AdmissionReviewVersions: []string{"v1"},
		}}}
}

// kueueCRDs returns the directory of Kueue's CRDs in the module cache: the
// module's config/components/crd/bases, v1beta2 stored, no conversion webhook.
func kueueCRDs() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m sigs.k8s.io/kueue: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "components", "crd", "bases"), nil
}

func TestMain(m *testing.M) {
	crlog.SetLogger(logr.FromSlogHandler(slog.DiscardHandler))
	crds, err := kueueCRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration environment:", err)
		os.Exit(1)
	}
	dir, err := testenv.Assets()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration environment:", err)
		os.Exit(1)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: dir, CRDDirectoryPaths: []string{"testdata", crds}, ErrorIfCRDPathMissing: true,
		ControlPlaneStartTimeout: testenv.StartTimeout, ControlPlaneStopTimeout: testenv.StartTimeout,
		WebhookInstallOptions: envtest.WebhookInstallOptions{MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{taskWebhook()}}}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration environment: starting kube-apiserver and etcd:", err)
		os.Exit(1)
	}
	restConfig, webhooks = cfg, &env.WebhookInstallOptions
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the integration environment:", err)
	}
	os.Exit(code)
}

// taskKind is the owner kind of reconciletest.Task as the test CRD serves it.
var taskKind = owner.Kind{Group: "test.jobkit.dev", Version: "v1", Kind: "Task", Finalizer: "test.jobkit.dev/tracking"}

// controllerName is the spec.managedBy of the Tasks jobkit's controller runs.
const controllerName = "test.jobkit.dev/task-controller"

// taskType is the Task's one description: jobkit's controller and the Kueue
// integration both take it.
var taskType = reconcile.Type[*reconciletest.Task]{
	New:          func() *reconciletest.Task { return &reconciletest.Task{} },
	Workload:     func(t *reconciletest.Task) (*plan.Workload, error) { return t.Workload(), nil },
	SetStatus:    func(t *reconciletest.Task, s batchv1.JobStatus) { t.Status = s },
	ManagedBy:    func(t *reconciletest.Task) *string { return t.Spec.ManagedBy },
	SetSuspend:   func(t *reconciletest.Task, suspend bool) { t.Spec.Suspend = &suspend },
	SetManagedBy: func(t *reconciletest.Task, managedBy *string) { t.Spec.ManagedBy = managedBy },
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

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueueapi.AddToScheme, configapi.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	gv := taskKind.GroupVersionKind().GroupVersion()
	s.AddKnownTypeWithName(gv.WithKind("Task"), &reconciletest.Task{})
	s.AddKnownTypeWithName(gv.WithKind("TaskList"), &taskList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}

// options are what a test adds to its control plane.
type options struct {
	// podsReady is Kueue's waitForPodsReady, and the integration's.
	podsReady *configapi.WaitForPodsReady
	// batchJobs adds Kueue's built-in integration of batch/v1 Jobs and
	// jobkit's Job controller (jobControllerName) for them.
	batchJobs bool
	// duos adds jobkit's controller of Duos, owners of roles, and their
	// Kueue integration.
	duos bool
	// gangs adds jobkit's controller of Gangs, groups of child Jobs, with
	// jobkit's Job controller for their children, and their Kueue
	// integration.
	gangs bool
	// webhook serves kueue.Setup's defaulting webhook, and labels the
	// namespace so that its Tasks' creations go through it.
	webhook bool
	// config, when set, is the API server of the test's control plane
	// (restConfig otherwise), and namespace the name of its namespace
	// (generated otherwise).
	config    *rest.Config
	namespace string
	// check, when set, is the admission check of the ClusterQueue.
	check string
	// also, when set, adds more to the manager before it starts.
	also func(context.Context, manager.Manager) error
}

type option func(*options)

func withPodsReady(c *configapi.WaitForPodsReady) option { return func(o *options) { o.podsReady = c } }

// cluster is one test's control plane: Kueue's controllers and scheduler,
// jobkit's Task controller and its Kueue integration in one manager, a client,
// a namespace with a LocalQueue "lq" of a ClusterQueue of the test's own, and a
// kubelet.
type cluster struct {
	c         client.Client
	namespace string
	cq        string
	kubelet   *kubelet
}

// start runs a manager until the test ends, with the queues of cpu CPUs of
// the flavour named after the test, whose node label is pool=<flavour>.
func start(t *testing.T, cpu string, opts ...option) *cluster {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := testScheme(t)
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	mopts := manager.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: crconfig.Controller{SkipNameValidation: ptr.To(true)}}
	if o.webhook {
		mopts.WebhookServer = webhook.NewServer(webhook.Options{
			Host: webhooks.LocalServingHost, Port: webhooks.LocalServingPort, CertDir: webhooks.LocalServingCertDir})
	}
	cfgAPI := restConfig
	if o.config != nil {
		cfgAPI = o.config
	}
	mgr, err := manager.New(cfgAPI, mopts)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &configapi.Configuration{}
	cfg.WaitForPodsReady = o.podsReady
	s.Default(cfg)
	cache := schdcache.New(mgr.GetClient())
	requeuer := qcache.NewRequeuer()
	expect := preemptexpectations.New()
	queues := qcache.NewManager(mgr.GetClient(), cache, requeuer, qcache.WithPreemptionExpectations(expect))
	if err := mgr.Add(requeuer); err != nil {
		t.Fatal(err)
	}
	if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	if name, err := core.SetupControllers(mgr, queues, cache, cfg, nil, expect, nil); err != nil {
		t.Fatalf("Kueue's controller %s: %v", name, err)
	}
	//lint:ignore SA1019 Kueue's scheduler records through the core/v1 recorder.
	rec := mgr.GetEventRecorderFor(kueueconstants.AdmissionName)
	sched := scheduler.New(queues, cache, mgr.GetClient(), rec, scheduler.WithPreemptionExpectations(expect))
	if err := mgr.Add(sched); err != nil {
		t.Fatal(err)
	}
	if _, err := jkcr.Setup(mgr, jkcr.Options[*reconciletest.Task]{Type: taskType,
		Config: reconcile.Config{Name: controllerName, Owner: taskKind}, SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	if err := kueue.Setup(ctx, mgr, taskType, kueue.Options{Webhook: o.webhook, Configuration: cfg, ControllerName: controllerName}); err != nil {
		t.Fatal(err)
	}
	if o.batchJobs {
		setupBatchJobs(ctx, t, mgr, cache)
	}
	if o.duos {
		setupDuos(ctx, t, mgr)
	}
	if o.also != nil {
		if err := o.also(ctx, mgr); err != nil {
			t.Fatal(err)
		}
	}
	if o.gangs {
		setupGangs(ctx, t, mgr, o.batchJobs)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	c, err := client.New(cfgAPI, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	cl := &cluster{c: c, cq: strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kueue-", Name: o.namespace}}
	if o.webhook {
		ns.Labels = map[string]string{webhookLabel: "on"}
	}
	cl.create(t, ns)
	cl.namespace = ns.Name
	cl.create(t, &kueueapi.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: cl.cq},
		Spec: kueueapi.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": cl.cq}}})
	cq := &kueueapi.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cl.cq}, Spec: kueueapi.ClusterQueueSpec{
		Preemption:        &kueueapi.ClusterQueuePreemption{WithinClusterQueue: kueueapi.PreemptionPolicyLowerPriority},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns.Name}},
		ResourceGroups: []kueueapi.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueueapi.FlavorQuotas{{Name: kueueapi.ResourceFlavorReference(cl.cq),
				Resources: []kueueapi.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(cpu)}}}}}},
	}}
	if o.check != "" {
		cq.Spec.AdmissionChecksStrategy = &kueueapi.AdmissionChecksStrategy{AdmissionChecks: []kueueapi.AdmissionCheckStrategyRule{
			{Name: kueueapi.AdmissionCheckReference(o.check)}}}
	}
	cl.create(t, cq)
	cl.create(t, &kueueapi.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "lq"},
		Spec: kueueapi.LocalQueueSpec{ClusterQueue: kueueapi.ClusterQueueReference(cl.cq)}})
	cl.kubelet = runKubelet(ctx, c, ns.Name)
	return cl
}

func (cl *cluster) create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := cl.c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// task returns a queued Task of pods pods of one CPU each, suspended as a
// queued owner is created without Kueue's webhook.
func (cl *cluster) task(name string, pods int32) *reconciletest.Task {
	return &reconciletest.Task{
		ObjectMeta: metav1.ObjectMeta{Namespace: cl.namespace, Name: name, Labels: map[string]string{constants.QueueLabel: "lq"}},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(pods), Completions: ptr.To(pods), Suspend: ptr.To(true), ManagedBy: ptr.To(controllerName),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}},
		},
	}
}

func (cl *cluster) get(t *testing.T, name string) *reconciletest.Task {
	t.Helper()
	var task reconciletest.Task
	if err := cl.c.Get(context.Background(), client.ObjectKey{Namespace: cl.namespace, Name: name}, &task); err != nil {
		t.Fatalf("reading Task %s: %v", name, err)
	}
	return &task
}

// getOrNil returns the Task name, nil while there is none.
func (cl *cluster) getOrNil(t *testing.T, name string) *reconciletest.Task {
	t.Helper()
	var task reconciletest.Task
	if err := cl.c.Get(context.Background(), client.ObjectKey{Namespace: cl.namespace, Name: name}, &task); err != nil {
		if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		return nil
	}
	return &task
}

// workload returns the Workload Kueue made for the Task name, nil while there
// is none.
func (cl *cluster) workload(t *testing.T, name string) *kueueapi.Workload {
	t.Helper()
	return cl.workloadOf(t, taskKind.Kind, name)
}

// workloadOf returns the Workload Kueue made for the owner of kind and name,
// nil while there is none.
func (cl *cluster) workloadOf(t *testing.T, kind, name string) *kueueapi.Workload {
	t.Helper()
	var wls kueueapi.WorkloadList
	if err := cl.c.List(context.Background(), &wls, client.InNamespace(cl.namespace)); err != nil {
		t.Fatal(err)
	}
	for i := range wls.Items {
		for _, ref := range wls.Items[i].OwnerReferences {
			if ref.Kind == kind && ref.Name == name {
				return &wls.Items[i]
			}
		}
	}
	return nil
}

func conditionTrue(wl *kueueapi.Workload, typ string) bool {
	return wl != nil && apimeta.IsStatusConditionTrue(wl.Status.Conditions, typ)
}

// usage returns the CPU the ClusterQueue holds reserved, in milli-CPUs.
func (cl *cluster) usage(t *testing.T) int64 {
	t.Helper()
	var cq kueueapi.ClusterQueue
	if err := cl.c.Get(context.Background(), client.ObjectKey{Name: cl.cq}, &cq); err != nil {
		t.Fatal(err)
	}
	var m int64
	for _, f := range cq.Status.FlavorsReservation {
		for _, r := range f.Resources {
			m += r.Total.MilliValue()
		}
	}
	return m
}

// pods returns how many pods of the Task name exist, terminating or not.
func (cl *cluster) pods(t *testing.T, name string) int {
	t.Helper()
	var pods corev1.PodList
	if err := cl.c.List(context.Background(), &pods, client.InNamespace(cl.namespace)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range pods.Items {
		if ref := metav1.GetControllerOf(&pods.Items[i]); ref != nil && ref.Name == name {
			n++
		}
	}
	return n
}

// eventually polls cond every 100 ms for up to a minute and fails the test with
// what when it never holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kubelet runs the pods of one namespace through the API: a pending pod is
// Running and Ready; a running pod succeeds while its owner has successes
// left in done.
type kubelet struct {
	mu sync.Mutex
	// done holds, by owner name, how many more of its running pods succeed.
	done map[string]int
	// notReady holds the owners whose pods run but never become ready.
	notReady map[string]bool
	// started records the node selector of every pod started, by owner name.
	started map[string][]map[string]string
}

// stall makes the pods of owner run without ever becoming ready.
func (k *kubelet) stall(owner string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.notReady[owner] = true
}

// finish lets every pod of owner succeed once running.
func (k *kubelet) finish(owner string) { k.succeed(owner, math.MaxInt32) }

// succeed lets n more running pods of owner succeed.
func (k *kubelet) succeed(owner string, n int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.done[owner] = min(k.done[owner]+n, math.MaxInt32)
}

// selectors returns the node selectors of the pods of owner started so far.
func (k *kubelet) selectors(owner string) []map[string]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.started[owner]
}

func runKubelet(ctx context.Context, c client.Client, namespace string) *kubelet {
	k := &kubelet{done: map[string]int{}, notReady: map[string]bool{}, started: map[string][]map[string]string{}}
	go func() {
		for ctx.Err() == nil {
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(namespace)); err == nil {
				for i := range pods.Items {
					k.step(ctx, c, &pods.Items[i])
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return k
}

func (k *kubelet) step(ctx context.Context, c client.Client, pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		return
	}
	now := metav1.Now()
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return
	}
	switch pod.Status.Phase {
	case corev1.PodPending, "":
		k.mu.Lock()
		ready := corev1.ConditionTrue
		if k.notReady[ref.Name] {
			ready = corev1.ConditionFalse
		}
		k.mu.Unlock()
		pod.Status.Phase, pod.Status.StartTime = corev1.PodRunning, &now
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: now}}
		if err := c.Status().Update(ctx, pod); err == nil {
			k.mu.Lock()
			k.started[ref.Name] = append(k.started[ref.Name], pod.Spec.NodeSelector)
			k.mu.Unlock()
		}
		return
	case corev1.PodRunning:
		k.mu.Lock()
		done := k.done[ref.Name] > 0
		if done {
			k.done[ref.Name]--
		}
		k.mu.Unlock()
		if !done {
			return
		}
		pod.Status.Phase = corev1.PodSucceeded
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now}}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, StartedAt: now, FinishedAt: now}}}}
	default:
		return
	}
	_ = c.Status().Update(ctx, pod)
}

func complete(task *reconciletest.Task) bool {
	for _, c := range task.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
