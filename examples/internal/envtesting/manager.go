package envtesting

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Manager is a controller-runtime manager a test starts: a new one is a new
// controller process, with no state of an earlier one.
type Manager struct {
	// Name says whose manager it is in failure messages ("the JobSet
	// controller"); empty: "the manager".
	Name string
	// Config is the user the manager acts as.
	Config *rest.Config
	// Options are the manager's; a nil Logger discards and an empty metrics
	// address is "0" (no metrics server), so that parallel tests do not share a
	// port.
	Options ctrl.Options
	// Setup adds the controllers to the manager before it starts.
	Setup func(manager.Manager) error
	// SyncTimeout bounds the wait for the caches; zero: DefaultTimeout.
	SyncTimeout time.Duration
}

// Start creates the manager, calls Setup, starts the manager and waits for its
// caches; it fails the test when any of that fails. stop cancels the manager,
// waits for it to return and reports an error it returned; calls after the first
// do nothing. The caller stops the manager (the test's cleanup may).
func (m Manager) Start(t testing.TB) (stop func()) {
	t.Helper()
	name := m.Name
	if name == "" {
		name = "the manager"
	}
	opts := m.Options
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Metrics.BindAddress == "" {
		opts.Metrics = metricsserver.Options{BindAddress: "0"}
	}
	mgr, err := ctrl.NewManager(m.Config, opts)
	if err != nil {
		t.Fatalf("%s: manager: %v", name, err)
	}
	if m.Setup != nil {
		if err := m.Setup(mgr); err != nil {
			t.Fatalf("%s: Setup: %v", name, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: manager: %v", name, err)
		}
	})
	timeout := m.SyncTimeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	syncCtx, cancelSync := context.WithTimeout(ctx, timeout)
	defer cancelSync()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		stop()
		t.Fatalf("%s: the caches did not sync within %v", name, timeout)
	}
	return stop
}

// Go runs fn on a goroutine of its own until the test ends: the test's cleanup
// cancels fn's context, waits for fn to return and reports an error it returned,
// naming it what. A kubelet, a command's run function, a watch.
func Go(t testing.TB, what string, fn func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s = %v after cancellation, want nil", what, err)
		}
	})
}
