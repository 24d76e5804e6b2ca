package reconcile

// Read-your-writes: waiting until an informer cache shows a write the controller
// just made, so that the next decision (a concurrency count, a "has this job
// started?") is not taken on data older than the controller's own action.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

const (
	// DefaultCacheSyncInterval is how often WaitForCacheSync reads the cache when
	// CacheSyncOptions.Interval is zero. Reading an informer cache is a map lookup,
	// and a watch event normally arrives within milliseconds of the write.
	DefaultCacheSyncInterval = 10 * time.Millisecond
	// DefaultCacheSyncTimeout bounds WaitForCacheSync when CacheSyncOptions.Timeout
	// is zero. A cache that is seconds behind points to a broken watch; the caller
	// should requeue rather than hold a worker.
	DefaultCacheSyncTimeout = 5 * time.Second
)

// ErrCacheNotSynced is matched (errors.Is) by the *CacheSyncError that
// WaitForCacheSync returns when the cache did not catch up in time.
var ErrCacheNotSynced = errors.New("cache did not catch up with a write")

// CacheVersionReader reads the resourceVersion of one object from the caller's
// cache (an informer's lister, a controller-runtime cache client). An error for
// which apierrors.IsNotFound holds means the cache does not hold the object (yet):
// WaitForCacheSync keeps waiting. Any other error stops the wait.
type CacheVersionReader func(ctx context.Context) (resourceVersion string, err error)

// CacheSyncOptions configure WaitForCacheSync. The zero value reads the cache every
// DefaultCacheSyncInterval for up to DefaultCacheSyncTimeout on the real clock.
type CacheSyncOptions struct {
	// Interval is the time between two reads of the cache: 0 means
	// DefaultCacheSyncInterval, negative is rejected.
	Interval time.Duration
	// Timeout bounds the whole wait, measured on Clock from the first read: 0
	// means DefaultCacheSyncTimeout, negative is rejected. The context may end the
	// wait earlier.
	Timeout time.Duration
	// Clock measures the timeout and drives the polling timer; nil means the real
	// clock. A fake clock (k8s.io/utils/clock/testing) lets a test step through
	// the wait without sleeping.
	Clock clock.Clock
}

// CacheSyncError reports a cache that did not show a write in time. It matches
// ErrCacheNotSynced, and also the context's error when the context ended the wait.
type CacheSyncError struct {
	// Object names the object, as given to WaitForCacheSync.
	Object string
	// Written is the resourceVersion the write returned.
	Written string
	// Seen is the resourceVersion the cache held at the last read; "" when the
	// cache did not hold the object at all (Found is false).
	Seen string
	// Found reports whether the last read found the object in the cache.
	Found bool
	// Waited is how long the wait lasted, on the options' clock.
	Waited time.Duration
	// Err is the context's error when the context ended the wait, else nil.
	Err error
}

// Error names the object and both resourceVersions.
func (e *CacheSyncError) Error() string {
	seen := "the cache has resourceVersion " + strconv.Quote(e.Seen)
	if !e.Found {
		seen = "the cache does not hold the object"
	}
	msg := fmt.Sprintf("cache did not catch up with %s after %v: wrote resourceVersion %q, %s",
		e.Object, e.Waited, e.Written, seen)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrCacheNotSynced and, when the context ended the wait, its error.
func (e *CacheSyncError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrCacheNotSynced, e.Err}
	}
	return []error{ErrCacheNotSynced}
}

// ResourceVersionCaughtUp reports whether a cache holding resourceVersion seen
// reflects a write that returned resourceVersion written. When both parse as
// unsigned integers (etcd revisions, as every kube-apiserver returns), seen must be
// at least written: a later write by someone else also shows ours. Otherwise
// resourceVersions are opaque strings and only equality can be trusted, so a cache
// that already shows a later write by someone else is not recognised as caught up.
// An empty written is never caught up.
func ResourceVersionCaughtUp(seen, written string) bool {
	if written == "" {
		return false
	}
	if c, ok := compareResourceVersions(seen, written); ok {
		return c >= 0
	}
	return seen == written
}

// compareResourceVersions compares two resourceVersions as unsigned integers (etcd
// revisions are) and returns -1, 0 or +1 as a is older than, equal to or newer than
// b. ok is false when either does not parse: resourceVersions are opaque strings to
// clients, and only the caller knows what to trust then.
func compareResourceVersions(a, b string) (c int, ok bool) {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return 0, false
	}
	return cmp.Compare(x, y), true
}

// WaitForCacheSync reads the object named object from the cache through read until
// its resourceVersion has caught up with written, the resourceVersion returned by
// the write the caller just made (see ResourceVersionCaughtUp). Call it after a
// state transition, before the next decision reads the cache: a controller that
// just recorded a job as started must not count it as still waiting in the next
// reconcile.
//
// The first read is immediate; then the cache is read every opts.Interval until
// opts.Timeout has passed on opts.Clock or ctx ends. A read that reports NotFound
// (a cache that has not seen a newly created object yet) keeps the wait going; any
// other read error ends it and is returned wrapped, naming the object.
//
// It returns nil once the cache has caught up, a *CacheSyncError matching
// ErrCacheNotSynced (naming the object, the version written and the version last
// seen) when it did not in time, and an error matching ErrInvalidArgument for a nil
// read, an empty written or a negative interval or timeout.
//
// Polling uses a wait.Timer built by wait.DelayFunc.Timer on opts.Clock: the
// ready-made loops of k8s.io/apimachinery/pkg/util/wait (PollUntilContextTimeout,
// DelayFunc.Until) run on the real clock only, and the clock matters for tests.
// The last delay is shortened so that the timeout is honoured to the interval.
// WaitForCacheSync is safe for concurrent use if read is.
func WaitForCacheSync(ctx context.Context, object, written string, read CacheVersionReader, opts CacheSyncOptions) error {
	switch {
	case read == nil:
		return fmt.Errorf("%w: WaitForCacheSync(%s): nil CacheVersionReader", ErrInvalidArgument, object)
	case written == "":
		return fmt.Errorf("%w: WaitForCacheSync(%s): empty written resourceVersion", ErrInvalidArgument, object)
	case opts.Interval < 0:
		return fmt.Errorf("%w: CacheSyncOptions.Interval %v: must not be negative", ErrInvalidArgument, opts.Interval)
	case opts.Timeout < 0:
		return fmt.Errorf("%w: CacheSyncOptions.Timeout %v: must not be negative", ErrInvalidArgument, opts.Timeout)
	}
	interval, timeout, clk := opts.Interval, opts.Timeout, opts.Clock
	if interval == 0 {
		interval = DefaultCacheSyncInterval
	}
	if timeout == 0 {
		timeout = DefaultCacheSyncTimeout
	}
	if clk == nil {
		clk = clock.RealClock{}
	}

	start := clk.Now()
	timer := wait.DelayFunc(func() time.Duration {
		return max(min(interval, timeout-clk.Since(start)), 0)
	}).Timer(clk)
	defer timer.Stop()

	failure := &CacheSyncError{Object: object, Written: written}
	for {
		rv, err := read(ctx)
		switch {
		case apierrors.IsNotFound(err):
			failure.Seen, failure.Found = "", false
		case err != nil:
			return fmt.Errorf("reading %s from the cache while waiting for resourceVersion %q: %w", object, written, err)
		default:
			if ResourceVersionCaughtUp(rv, written) {
				return nil
			}
			failure.Seen, failure.Found = rv, true
		}
		if waited := clk.Since(start); waited >= timeout {
			failure.Waited = waited
			return failure
		}
		timer.Next() // no-op before the first C(); re-arms the timer afterwards
		select {
		case <-ctx.Done():
			failure.Waited, failure.Err = clk.Since(start), ctx.Err()
			return failure
		case <-timer.C():
		}
	}
}
