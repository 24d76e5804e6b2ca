// Package clientflags holds the command-line flags that bound how fast the example
// controllers talk to the API server: --kube-api-qps and --kube-api-burst, with
// kube-controller-manager's defaults (20 and 30), where client-go's own (5 and 10)
// would make a Job of 5,000 pods, over 10,000 writes, take half an hour; and
// --kube-api-max-in-flight, the requests sent at once (clientgo.LimitInFlight).
package clientflags

import (
	"flag"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/jobkit/jobkit/examples/clientgo"
)

// Defaults of kube-controller-manager's --kube-api-qps and --kube-api-burst.
const (
	DefaultQPS   = 20
	DefaultBurst = 30
)

// RateLimits are the client-side rate limits of the API client: QPS requests per
// second on average, bursts of up to Burst, at most MaxInFlight requests other
// than watches at once (0: no limit).
type RateLimits struct {
	QPS         float64
	Burst       int
	MaxInFlight int
}

// Register adds --kube-api-qps and --kube-api-burst to fs, with the defaults, and
// returns where they are parsed to.
func Register(fs *flag.FlagSet) *RateLimits {
	r := &RateLimits{}
	fs.Float64Var(&r.QPS, "kube-api-qps", DefaultQPS, "average requests per second to the API server (client-side limit; kube-controller-manager's default)")
	fs.IntVar(&r.Burst, "kube-api-burst", DefaultBurst, "requests allowed at once above --kube-api-qps (kube-controller-manager's default)")
	fs.IntVar(&r.MaxInFlight, "kube-api-max-in-flight", clientgo.DefaultMaxInFlight, "requests other than watches in flight at once (0: no limit); more than kube-apiserver's HTTP/2 streams per connection (100 by default) make the client open a new TLS connection for each extra request")
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
	case r.MaxInFlight < 0:
		return fmt.Errorf("--kube-api-max-in-flight=%d: must not be negative (0: no limit)", r.MaxInFlight)
	}
	return nil
}

// Apply sets the limits on cfg, which it MODIFIES; cfg must not have a RateLimiter
// of its own (client-go then ignores QPS and Burst). MaxInFlight wraps cfg's
// transport (clientgo.LimitInFlight): every client built from cfg, or from a copy
// of it, has a limit of its own.
func (r RateLimits) Apply(cfg *rest.Config) {
	cfg.QPS = float32(r.QPS)
	cfg.Burst = r.Burst
	if r.MaxInFlight > 0 {
		cfg.Wrap(clientgo.LimitInFlight(r.MaxInFlight))
	}
}
