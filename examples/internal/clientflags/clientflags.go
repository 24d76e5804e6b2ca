// Package clientflags holds the command-line flags that bound how fast the example
// controllers talk to the API server: --kube-api-qps and --kube-api-burst, with
// kube-controller-manager's defaults (20 and 30), where client-go's own (5 and 10)
// would make a Job of 5,000 pods, over 10,000 writes, take half an hour.
package clientflags

import (
	"flag"
	"fmt"

	"k8s.io/client-go/rest"
)

// Defaults of kube-controller-manager's --kube-api-qps and --kube-api-burst.
const (
	DefaultQPS   = 20
	DefaultBurst = 30
)

// RateLimits are the client-side rate limits of the API client: QPS requests per
// second on average, bursts of up to Burst.
type RateLimits struct {
	QPS   float64
	Burst int
}

// Register adds --kube-api-qps and --kube-api-burst to fs, with the defaults, and
// returns where they are parsed to.
func Register(fs *flag.FlagSet) *RateLimits {
	r := &RateLimits{}
	fs.Float64Var(&r.QPS, "kube-api-qps", DefaultQPS, "average requests per second to the API server (client-side limit; kube-controller-manager's default)")
	fs.IntVar(&r.Burst, "kube-api-burst", DefaultBurst, "requests allowed at once above --kube-api-qps (kube-controller-manager's default)")
	return r
}

// Validate reports a limit that would stop every request or is not a number of
// requests, naming the flag and its value.
func (r RateLimits) Validate() error {
	switch {
	case !(r.QPS > 0):
		return fmt.Errorf("--kube-api-qps=%v: must be positive", r.QPS)
	case r.Burst < 1:
		return fmt.Errorf("--kube-api-burst=%d: must be at least 1", r.Burst)
	case float64(r.Burst) < r.QPS:
		return fmt.Errorf("--kube-api-burst=%d: must be at least --kube-api-qps (%v)", r.Burst, r.QPS)
	}
	return nil
}

// Apply sets the limits on cfg, which it MODIFIES; cfg must not have a RateLimiter
// of its own (client-go then ignores QPS and Burst).
func (r RateLimits) Apply(cfg *rest.Config) {
	cfg.QPS = float32(r.QPS)
	cfg.Burst = r.Burst
}
