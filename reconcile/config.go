package reconcile

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/clock"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/expectations"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
)

// Defaults of Config, as in the upstream Job controller where it has one.
const (
	// DefaultPodEventBatchPeriod is how long pod events are batched before a sync
	// (upstream's syncJobBatchPeriod).
	DefaultPodEventBatchPeriod = time.Second
	// defaultFinalizerRemovalParallelism bounds the API calls one sync runs at once:
	// as upstream, every call of a group (the finalizer removals, the deletions, a
	// slow-start batch of creations) runs at once, within the per-sync caps of 500.
	defaultFinalizerRemovalParallelism = 500
	// maxFinalizerRemovalParallelism is the largest parallelism Config accepts.
	maxFinalizerRemovalParallelism = 500
	// DefaultUncertainCreationTimeout is how long a NonIndexed Job keeps expecting
	// the pod of a creation whose outcome is unknown (a timeout).
	DefaultUncertainCreationTimeout = 30 * time.Second
	// DefaultStaleCacheRequeue is how soon a Job whose cache has not caught up with
	// this reconciler's last status write is synced again.
	DefaultStaleCacheRequeue = 100 * time.Millisecond
	// DefaultConflictRequeue is how soon a sync that stopped early to look again (a
	// status conflict, a pod that changed since the plan) is retried.
	DefaultConflictRequeue = 100 * time.Millisecond
	// defaultPodEventBatchPods is Config.PodEventBatchPods's default: the owner's
	// pods per PodEventBatchPeriod of batching.
	defaultPodEventBatchPods = 5000
	// maxBatchPeriodFactor bounds the grown batch period, in PodEventBatchPeriods.
	maxBatchPeriodFactor = 10
)

// ErrInvalidConfig is wrapped by the errors New returns for a bad Config.
var ErrInvalidConfig = errors.New("invalid reconcile config")

// Config configures a Reconciler. The zero value means upstream's values, except
// Name, which is required; WithDefaults fills them in.
type Config struct {
	// Name is the name this controller answers to in spec.managedBy. Required: a
	// controller built on jobkit must name itself, so that it never takes a Job that
	// belongs to kube-controller-manager by accident. Only batchv1.JobControllerName
	// ("kubernetes.io/job-controller") also takes Jobs whose managedBy is unset.
	Name string

	// Owner is the kind of object that owns the pods, with its tracking finalizer:
	// the controller reference of created and adopted pods, the pod events that
	// concern an owner, and which pods are tracked are this kind's. The zero value
	// means owner.BatchJob (batch/v1 Jobs, batch.kubernetes.io/job-tracking); a
	// controller of another kind of owner names its own finalizer. Ownership is by
	// controller-reference UID. The orphan cleanup takes the owner's facts
	// (CleanOrphan, with finalizers.DecideOrphan rules) or a batch/v1 Job presenting it.
	Owner owner.Kind

	// Backoff is the pod failure backoff; zero means 10s doubling to 10m.
	Backoff plainbackoff.Policy
	// PodEventBatchPeriod is the delay MapPodEvent and ObservePodEvent give pod
	// events, so that a burst of them makes one sync; zero means 1s.
	PodEventBatchPeriod time.Duration
	// PodEventBatchPods makes the batch period grow with the owner: an owner
	// whose last sync listed n pods waits PodEventBatchPeriod × n /
	// PodEventBatchPods, when that is longer, and at most 10 × PodEventBatchPeriod,
	// after a pod event that observes no creation or deletion (a pod that started,
	// finished or lost its finalizer) and after an update of its own status or
	// metadata. A sync of a large owner costs time in proportion to its pods and
	// writes its status once, whatever the number of events it folds in; upstream's
	// Job controller, whose syncs of 20,000 pods take seconds, batches as much by
	// being slow. Events that observe a creation or a deletion, adoptable pods and
	// spec changes keep PodEventBatchPeriod: the sync they wake has pods to create
	// or delete; a finished or failed pod of a large owner that is to be replaced
	// (completions above parallelism, a retry) is replaced up to the grown period
	// later. Zero means 5,000 (a Job of 20,000 pods batches for 4s at the 1s
	// default); a negative value keeps the period fixed, as upstream.
	PodEventBatchPods int
	// MaxCreatesPerSync, MaxDeletesPerSync and MaxUncounted cap a sync's pod
	// creations, pod deletions and status.uncountedTerminatedPods entries; zero means
	// 500 each.
	MaxCreatesPerSync, MaxDeletesPerSync, MaxUncounted int
	// MinBackoffRequeue is the shortest requeue for a pod-failure backoff wait; zero
	// means one second, as upstream.
	MinBackoffRequeue time.Duration
	// ExpectationsTTL is how long creations and deletions wait to be observed before
	// a Job is synced anyway; zero means 5m. It applies to the Expectations store New
	// creates, not to one given in Expectations. The TTL of the Expectations in use
	// also bounds how long a scale-down finalizer removal whose outcome is unknown (a
	// timeout) stays pending.
	ExpectationsTTL time.Duration
	// UncertainCreationTimeout is how long a Job keeps expecting the pod of a
	// creation whose outcome is unknown (a timeout, a lost answer) before it creates
	// again; zero means 30s. A pod the API server stored shows up in the cache within
	// the informer's lag, far less on a healthy cluster, so waiting longer (upstream
	// waits for the 5-minute expectations TTL) only stalls the Job when the pod was
	// not stored. It applies to pods named by the API server (NonIndexed Jobs), where
	// a pod whose event comes later still is one pod more than parallelism for a
	// while, which the next syncs remove. The pods of an Indexed Job are named by the
	// plan: the pod of such a creation is read back under its name and, when it was
	// not stored, sent again at once; when it was, its event is waited for at most
	// this long (it may have come before the creation was expected). A name refused
	// with AlreadyExists whose pod could not be read back (PodClient.GetPod failed)
	// is given up after this long. It also bounds how long SyncChildJobs waits for
	// the cache to show a child Job it created or deleted.
	UncertainCreationTimeout time.Duration
	// FinalizerRemovalParallelism bounds the API calls one sync runs at once: the
	// finalizer removals, the deletions and each slow-start batch of creations. Zero
	// means 500, every call of a group at once (each group is capped at 500 per sync);
	// it must not exceed 500. Set less to spare a slow or rate-limited API server.
	// Above 1, a batch of creations may run beside the finalizer removals of the
	// same sync (nothing deleted, no condition changed), so a sync has at most
	// twice this many calls in flight. 1 makes every sync issue its calls one at
	// a time in plan order, which makes a run reproducible.
	FinalizerRemovalParallelism int
	// StaleCacheRequeue is the RequeueAfter of a sync skipped because the cached Job
	// is older than this reconciler's last status write and the Job it wrote is not
	// known (a defensive case: a sync normally uses the Job it wrote); zero means
	// 100ms.
	StaleCacheRequeue time.Duration
	// ConflictRequeue is the longest RequeueAfter of a sync that stopped early to
	// look again (Report.Retry: a status write met a conflict, a pod changed or
	// vanished since the plan); zero means 100ms. Such a sync returns no error: the
	// next one, from a cache that has caught up, decides again.
	ConflictRequeue time.Duration

	// ReadOwner, when set, reads an owner from the API server itself (not a cache).
	// A sync that is about to adopt orphan pods calls it first, as the Job
	// controller of Kubernetes 1.37 reads the Job again before adopting: the pods
	// are adopted only when the owner still exists with the UID the sync saw and is
	// not being deleted. Otherwise the sync stops before any write (Report.Retry)
	// and the pods stay orphans. Without it, a sync from a cache that has not seen
	// the owner's deletion yet adopts orphans for a deleted owner, and the garbage
	// collector then deletes them. The example controllers set it to an uncached
	// GET. Nil means no read.
	ReadOwner OwnerReader

	// ImmutablePods says that the pods the PodLister of Sync returns are never
	// changed in place: a new version of a pod is a new object, as an informer's
	// cache holds them (client-go's indexer hands out the objects it stores; so
	// does reconciletest's Cache). The Reconciler then keeps a plan.FactCache per
	// owner key, and a sync reads only the pods that are new objects since the
	// owner's last sync: at 100,000 pods of an informer, a plan costs about half
	// (docs/performance.md). Leave it false when the lister returns copies (a
	// controller-runtime cache's List copies each pod: no pod would be known
	// again; controllerruntime.Setup lists its pod informer's store instead and
	// sets it) or pods that someone changes in place. It serves Sync; SyncRoles
	// reads every pod at each sync.
	ImmutablePods bool

	// Clock gives the time of each sync and of the expectations New creates; nil
	// means the real clock.
	Clock clock.PassiveClock
	// Logger receives structured logs; the zero Logger discards them.
	Logger logr.Logger
	// Metrics receives the job_controller_* metrics; nil means none.
	Metrics Metrics
	// Events records events on Jobs; nil means none. client-go's
	// record.EventRecorder satisfies it.
	Events EventRecorder

	// Expectations, FinalizerRemovals and BackoffStore hold the Reconciler's state
	// per Job key ("namespace/name"). Nil means New creates them. Give them to share
	// state between reconcilers, to inspect it in tests, or to drop it (a new store
	// models a controller restart).
	Expectations      *expectations.Expectations[string]
	FinalizerRemovals *expectations.FinalizerRemovals[string]
	BackoffStore      *backoff.Store[string]
}

// WithDefaults returns a copy of cfg with every default filled in, as New uses it:
// Owner owner.BatchJob, the durations and limits listed on their fields, a real
// Clock, no Metrics and no Events (do-nothing implementations), and new
// Expectations, FinalizerRemovals and BackoffStore when they are nil. It fails as
// New does, with an error wrapping ErrInvalidConfig that names every bad field.
//
// A caller that needs a value in use, such as the Clock or the stores to inspect in
// a test, calls it before New and keeps the result: New, given a Config filled in,
// keeps its stores, so the caller and the Reconciler share them.
func (cfg Config) WithDefaults() (Config, error) {
	var errs []error
	bad := func(field string, value any, why string) {
		errs = append(errs, fmt.Errorf("%w: %s: %v: %s", ErrInvalidConfig, field, value, why))
	}
	if cfg.Name == "" {
		bad("Name", `""`, "required: the name this controller answers to in spec.managedBy (for example \"example.com/job-controller\", or \""+batchv1.JobControllerName+"\" to also take Jobs without managedBy)")
	} else if len(cfg.Name) > 63 {
		bad("Name", fmt.Sprintf("%q", cfg.Name), "must be at most 63 characters (the limit of spec.managedBy)")
	}
	nonNegDur := func(field string, d time.Duration) {
		if d < 0 {
			bad(field, d, "must not be negative (zero means the default)")
		}
	}
	nonNegInt := func(field string, n int) {
		if n < 0 {
			bad(field, n, "must not be negative (zero means the default)")
		}
	}
	if cfg.Owner == (owner.Kind{}) {
		cfg.Owner = owner.BatchJob
	} else if err := cfg.Owner.Validate(); err != nil {
		bad("Owner", cfg.Owner, err.Error())
	}
	nonNegDur("Backoff.Base", cfg.Backoff.Base)
	nonNegDur("Backoff.Max", cfg.Backoff.Max)
	nonNegDur("PodEventBatchPeriod", cfg.PodEventBatchPeriod)
	nonNegDur("ExpectationsTTL", cfg.ExpectationsTTL)
	nonNegDur("UncertainCreationTimeout", cfg.UncertainCreationTimeout)
	nonNegDur("StaleCacheRequeue", cfg.StaleCacheRequeue)
	nonNegDur("ConflictRequeue", cfg.ConflictRequeue)
	nonNegInt("MaxCreatesPerSync", cfg.MaxCreatesPerSync)
	nonNegInt("MaxDeletesPerSync", cfg.MaxDeletesPerSync)
	nonNegInt("MaxUncounted", cfg.MaxUncounted)
	nonNegInt("FinalizerRemovalParallelism", cfg.FinalizerRemovalParallelism)
	if cfg.FinalizerRemovalParallelism > maxFinalizerRemovalParallelism {
		bad("FinalizerRemovalParallelism", cfg.FinalizerRemovalParallelism, fmt.Sprintf("must be at most %d", maxFinalizerRemovalParallelism))
	}
	if len(errs) > 0 {
		return cfg, errors.Join(errs...)
	}
	if cfg.PodEventBatchPeriod == 0 {
		cfg.PodEventBatchPeriod = DefaultPodEventBatchPeriod
	}
	if cfg.PodEventBatchPods == 0 {
		cfg.PodEventBatchPods = defaultPodEventBatchPods
	}
	if cfg.FinalizerRemovalParallelism == 0 {
		cfg.FinalizerRemovalParallelism = defaultFinalizerRemovalParallelism
	}
	if cfg.UncertainCreationTimeout == 0 {
		cfg.UncertainCreationTimeout = DefaultUncertainCreationTimeout
	}
	if cfg.StaleCacheRequeue == 0 {
		cfg.StaleCacheRequeue = DefaultStaleCacheRequeue
	}
	if cfg.ConflictRequeue == 0 {
		cfg.ConflictRequeue = DefaultConflictRequeue
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NoMetrics{}
	}
	if cfg.Events == nil {
		cfg.Events = noEvents{}
	}
	if cfg.Expectations == nil {
		e, err := expectations.New[string](expectations.Config{Clock: cfg.Clock, TTL: cfg.ExpectationsTTL})
		if err != nil {
			return cfg, fmt.Errorf("%w: ExpectationsTTL: %w", ErrInvalidConfig, err)
		}
		cfg.Expectations = e
	}
	if cfg.FinalizerRemovals == nil {
		cfg.FinalizerRemovals = expectations.NewFinalizerRemovals[string]()
	}
	if cfg.BackoffStore == nil {
		cfg.BackoffStore = &backoff.Store[string]{}
	}
	return cfg, nil
}

// planOptions are the plan's options; own is the owner's backoff (Workload.Backoff),
// which replaces Config.Backoff when not zero.
func (cfg *Config) planOptions(own plainbackoff.Policy) plan.Options {
	pol := cfg.Backoff
	if own != (plainbackoff.Policy{}) {
		pol = own
	}
	return plan.Options{
		MaxCreatesPerSync: cfg.MaxCreatesPerSync,
		MaxDeletesPerSync: cfg.MaxDeletesPerSync,
		MaxUncounted:      cfg.MaxUncounted,
		Backoff:           pol,
		MinRequeue:        cfg.MinBackoffRequeue,
	}
}
