package cmdflags

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// APIServerBackoff is how WaitForAPIServer retries: 1 s doubling to 30 s, with 10%
// jitter, for as long as the context lasts (Steps is not used).
var APIServerBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Cap: 30 * time.Second}

// WaitForAPIServer returns once the API server of cfg answers /version, retrying
// with APIServerBackoff and logging each failed attempt, so that a controller
// started before its API server (a control plane coming up, a cluster being
// restored) waits instead of exiting. It returns ctx's error when ctx ends first.
func WaitForAPIServer(ctx context.Context, cfg *rest.Config, log logr.Logger) error {
	return waitFor(ctx, cfg, APIServerBackoff, log)
}

func waitFor(ctx context.Context, cfg *rest.Config, b wait.Backoff, log logr.Logger) error {
	c := rest.CopyConfig(cfg)
	// One attempt must not outlast the backoff: an unreachable address should be
	// retried, not waited on for the client's default timeout.
	if c.Timeout == 0 || c.Timeout > 10*time.Second {
		c.Timeout = 10 * time.Second
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return fmt.Errorf("a client for %s: %w", cfg.Host, err)
	}
	delay := b.Duration
	for attempt := 1; ; attempt++ {
		v, err := dc.ServerVersion()
		if err == nil {
			if attempt > 1 {
				log.Info("The API server answers", "host", cfg.Host, "version", v.GitVersion, "attempts", attempt)
			}
			return nil
		}
		log.Info("Waiting for the API server", "host", cfg.Host, "attempt", attempt, "err", err.Error())
		t := time.NewTimer(wait.Jitter(delay, b.Jitter))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for the API server at %s: %w", cfg.Host, ctx.Err())
		case <-t.C:
		}
		if delay = time.Duration(float64(delay) * b.Factor); delay > b.Cap {
			delay = b.Cap
		}
	}
}

// Connect loads the client configuration (RESTConfig) and waits for its API server
// (WaitForAPIServer).
func (f Flags) Connect(ctx context.Context, userAgent string, log logr.Logger) (*rest.Config, error) {
	cfg, err := f.RESTConfig(userAgent)
	if err != nil {
		return nil, err
	}
	if err := WaitForAPIServer(ctx, cfg, log); err != nil {
		return nil, err
	}
	return cfg, nil
}
