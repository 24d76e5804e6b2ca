package scenarios

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/reconcile"
)

// StartFunc starts a controller managing the Jobs whose spec.managedBy is managedBy
// and returns a function that stops it and waits for it to exit.
type StartFunc func(ctx context.Context, cfg *rest.Config, managedBy string) (stop func(), err error)

// ReconcileConfig returns the reconcile.Config a StartFunc must use: managedBy as
// Name, a short pod failure backoff (100ms doubling to 1s) and a short pod event
// batch period, so that the suite runs in seconds.
func ReconcileConfig(managedBy string) reconcile.Config {
	return reconcile.Config{
		Name:                managedBy,
		Backoff:             plainbackoff.Policy{Base: 100 * time.Millisecond, Max: time.Second},
		PodEventBatchPeriod: 50 * time.Millisecond,
		MinBackoffRequeue:   100 * time.Millisecond,
	}
}

// Timeouts of the suite: how long a scenario waits for a state, and how long it
// watches for something that must not happen.
const (
	waitTimeout = 30 * time.Second
	quietPeriod = 1500 * time.Millisecond
	pollEvery   = 25 * time.Millisecond
)

// Run runs every scenario as a parallel subtest of t against the API server at cfg,
// each in its own namespace with its own controller (started with start, under a
// managedBy name of its own), and returns when all have finished.
func Run(t *testing.T, cfg *rest.Config, start StartFunc) {
	t.Helper()
	if cfg == nil || start == nil {
		t.Fatal("scenarios.Run: cfg and start are required")
	}
	t.Run("scenarios", func(t *testing.T) {
		for _, sc := range all {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				s := newScenario(t, cfg, start, sc.name)
				sc.run(s)
				s.checkStatusWrites()
			})
		}
	})
}

// scenario is the state of one scenario: its namespace, clients, kubelet and
// controller.
type scenario struct {
	t         *testing.T
	ctx       context.Context
	cs        kubernetes.Interface // the test's own client
	ns        string
	managedBy string
	kubelet   *kubelet

	start     StartFunc
	ctrlCfg   *rest.Config
	writes    *statusWrites
	patches   *podPatches
	stopMu    sync.Mutex
	stopCtrl  func()
	noControl bool
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func newScenario(t *testing.T, cfg *rest.Config, start StartFunc, name string) *scenario {
	slug := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(slug) > 40 {
		slug = slug[:40]
	}
	own := rest.CopyConfig(cfg)
	own.QPS, own.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(own)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	ns, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "s-" + slug[:min(len(slug), 20)] + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	s := &scenario{
		t: t, ctx: t.Context(), cs: cs, ns: ns.Name,
		managedBy: "scenarios.jobkit.dev/" + strings.TrimRight(slug, "-"),
		start:     start,
		writes:    &statusWrites{},
		patches:   &podPatches{},
	}
	s.ctrlCfg = rest.CopyConfig(cfg)
	s.ctrlCfg.QPS, s.ctrlCfg.Burst = 1000, 2000
	s.ctrlCfg.WrapTransport = transport.Wrappers(s.ctrlCfg.WrapTransport, s.writes.wrap, s.patches.wrap)

	kctx, cancel := context.WithCancel(context.Background())
	s.kubelet = newKubelet(cs, ns.Name)
	var wg sync.WaitGroup
	wg.Go(func() { s.kubelet.run(kctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	t.Cleanup(s.stopController) // runs before the kubelet stops
	s.startController()
	return s
}

// startController starts a controller (a new process state) for the scenario.
func (s *scenario) startController() {
	s.t.Helper()
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.stopCtrl != nil {
		s.t.Fatal("startController: a controller is already running")
	}
	stop, err := s.start(s.ctx, s.ctrlCfg, s.managedBy)
	if err != nil {
		s.t.Fatalf("start controller %s: %v", s.managedBy, err)
	}
	s.stopCtrl = stop
}

// stopController stops the running controller, if any, and waits for it.
func (s *scenario) stopController() {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.stopCtrl != nil {
		s.stopCtrl()
		s.stopCtrl = nil
	}
}

// checkStatusWrites fails the scenario if the API server rejected a status write.
func (s *scenario) checkStatusWrites() {
	s.t.Helper()
	accepted, rejected := s.writes.counts()
	for _, r := range rejected {
		s.t.Errorf("the API server rejected a Job status write: %s", r)
	}
	if accepted == 0 && !s.noControl {
		s.t.Errorf("no Job status write went through the transport given to the StartFunc; build the clients from the cfg it receives")
	}
}

// eventually polls cond until it holds or waitTimeout passes; cond returns a
// description of the state for the failure message.
func (s *scenario) eventually(what string, cond func() (bool, string)) {
	s.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) || s.ctx.Err() != nil {
			s.t.Fatalf("timed out after %v waiting for %s; last state:\n%s", waitTimeout, what, state)
		}
		time.Sleep(pollEvery)
	}
}

// consistently checks that cond holds for quietPeriod.
func (s *scenario) consistently(what string, cond func() (bool, string)) {
	s.t.Helper()
	deadline := time.Now().Add(quietPeriod)
	for time.Now().Before(deadline) {
		if ok, state := cond(); !ok {
			s.t.Fatalf("%s no longer holds; state:\n%s", what, state)
		}
		time.Sleep(pollEvery)
	}
}
