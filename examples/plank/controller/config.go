package controller

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plainconc "github.com/jobkit/jobkit/plain/concurrency"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/singlepod/deadlines"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

// LabelRunUID is the label on every pod this controller creates; its value is
// the UID of the RunJob (a UID always fits in a label value, a name may not).
const LabelRunUID = "examples.jobkit.dev/run-uid"

const (
	// DefaultLockRetry is how soon a run whose lock is held by another worker is
	// tried again when Config.LockRetry is zero (plank's 1s).
	DefaultLockRetry = time.Second
	// DefaultWorkers is the number of concurrent reconciles when Config.Workers
	// is zero.
	DefaultWorkers = 4
	// DefaultAPIBackoffBase and DefaultAPIBackoffMax are the requeue delays after
	// API errors when Config.APIBackoff leaves them zero: the Job controller's.
	DefaultAPIBackoffBase = time.Second
	DefaultAPIBackoffMax  = time.Minute
)

// ErrInvalidConfig is matched by the error New returns for a bad Config.
var ErrInvalidConfig = errors.New("invalid plank config")

// Config configures a Reconciler. The zero value is usable: no global cap, no
// queues, plank's default timeouts, the real clock.
type Config struct {
	// MaxPending caps the pending runs of a namespace; 0 means no cap.
	MaxPending int
	// Queues maps a queue name to its capacity: 0 never starts its runs, a
	// negative capacity is unlimited. A run naming a queue missing here waits.
	Queues map[string]int
	// DefaultTimeouts apply where a run leaves a timeout unset; nil means
	// plank's defaults (plaindl.DefaultTimeouts). A zero field disables it.
	DefaultTimeouts *plaindl.Timeouts
	// RetryAfter is how long a run held back by a limit waits before it asks
	// again; 0 means concurrency.DefaultRetryAfter (10s). Runs are also woken
	// up when a run that held them back finishes.
	RetryAfter time.Duration
	// LockRetry is how long a run waits when another worker holds one of its
	// locks; 0 means DefaultLockRetry.
	LockRetry time.Duration
	// CacheSync bounds the waits for the cache to show a status write.
	CacheSync reconcile.CacheSyncOptions
	// Clock tells the time for timestamps and timeouts; nil means the real clock.
	Clock clock.PassiveClock
	// Workers is the number of RunJobs reconciled at once; 0 means
	// DefaultWorkers.
	Workers int
	// APIBackoff is the requeue delay of a RunJob whose sync failed on an API
	// error: Base, doubled at each failure in a row, at most Max; zero fields mean
	// the Job controller's 1s and 1m (DefaultAPIBackoffBase, DefaultAPIBackoffMax).
	APIBackoff plainbackoff.Policy
	// CreateErrors chooses how a failed pod create is judged: the zero value
	// adopts a pod that already exists and retries 404 and 429;
	// runplan.CreateErrorsPlank errors the run on every 4xx, as plank does.
	CreateErrors runplan.CreateErrorPolicy
	// ReporterFinalizers are finalizers that others (a reporter that uploads
	// the pod's logs, for example) put on the pods; the controller removes
	// them from a pod it replaces, whose result is never reported, so that
	// the pod can go and its replacement, with the same name, be created.
	ReporterFinalizers []string
}

func (c Config) validate() error {
	var errs field.ErrorList
	if c.MaxPending < 0 {
		errs = append(errs, field.Invalid(field.NewPath("MaxPending"), c.MaxPending, "must not be negative"))
	}
	if c.RetryAfter < 0 {
		errs = append(errs, field.Invalid(field.NewPath("RetryAfter"), c.RetryAfter.String(), "must not be negative"))
	}
	if c.LockRetry < 0 {
		errs = append(errs, field.Invalid(field.NewPath("LockRetry"), c.LockRetry.String(), "must not be negative"))
	}
	if c.Workers < 0 {
		errs = append(errs, field.Invalid(field.NewPath("Workers"), c.Workers, "must not be negative"))
	}
	if c.APIBackoff.Base < 0 {
		errs = append(errs, field.Invalid(field.NewPath("APIBackoff", "Base"), c.APIBackoff.Base.String(), "must not be negative"))
	}
	if c.APIBackoff.Max != 0 && c.APIBackoff.Max < max(c.APIBackoff.Base, 0) {
		errs = append(errs, field.Invalid(field.NewPath("APIBackoff", "Max"), c.APIBackoff.Max.String(), "must be at least APIBackoff.Base"))
	}
	for q := range c.Queues {
		if q == "" {
			errs = append(errs, field.Invalid(field.NewPath("Queues"), q, "queue name must not be empty"))
		}
	}
	if c.CreateErrors != runplan.CreateErrorsJobkit && c.CreateErrors != runplan.CreateErrorsPlank {
		errs = append(errs, field.NotSupported(field.NewPath("CreateErrors"), c.CreateErrors,
			[]runplan.CreateErrorPolicy{runplan.CreateErrorsJobkit, runplan.CreateErrorsPlank}))
	}
	for i, f := range c.ReporterFinalizers {
		if f == "" {
			errs = append(errs, field.Invalid(field.NewPath("ReporterFinalizers").Index(i), f, "must not be empty"))
		}
	}
	if c.DefaultTimeouts != nil {
		errs = append(errs, deadlines.ValidateTimeouts(*c.DefaultTimeouts, field.NewPath("DefaultTimeouts"))...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, errs.ToAggregate())
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.DefaultTimeouts == nil {
		t := plaindl.DefaultTimeouts()
		c.DefaultTimeouts = &t
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = plainconc.DefaultRetryAfter
	}
	if c.LockRetry == 0 {
		c.LockRetry = DefaultLockRetry
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.APIBackoff.Base == 0 {
		c.APIBackoff.Base = DefaultAPIBackoffBase
	}
	if c.APIBackoff.Max == 0 {
		c.APIBackoff.Max = max(DefaultAPIBackoffMax, c.APIBackoff.Base)
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	return c
}

// CacheOptions returns the manager's cache options: only pods labelled
// LabelRunUID are cached, and everything is restricted to namespace unless it
// is "" (all namespaces).
func CacheOptions(namespace string) cache.Options {
	hasRun, err := labels.NewRequirement(LabelRunUID, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant key: cannot fail
	}
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: labels.NewSelector().Add(*hasRun)},
	}}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	return opts
}
