package reconciletest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// defaultStart is the time of the fake clock of a Cluster created without one.
var defaultStart = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// defaultGracePeriod is the termination grace period of pods whose spec leaves it
// unset, as the API server defaults it.
const defaultGracePeriod int64 = 30

// Options configure a Cluster. The zero value is ready to use.
type Options struct {
	// Clock is the cluster's clock; nil means a new fake clock at 2026-01-01T00:00:00Z. Share
	// it with the Reconciler (reconcile.Config.Clock) so that both see one time.
	Clock *clocktesting.FakeClock
	// Seed seeds the random suffixes of generated names. The same seed and the same
	// calls give the same names.
	Seed uint64
	// EventLatency is how long after a write its watch event becomes due for
	// delivery to the Cache (see Cache.DeliverDue); SetEventLatency changes it.
	EventLatency time.Duration
	// Owner is the kind of the owners the cluster's controller under test
	// serves, beside the batch/v1 Jobs every Cluster holds (Cluster.Jobs); the
	// zero value means owner.BatchJob. NewStore sets it to the kind of the
	// Store's owners; a Cluster of another kind without a Store holds no owner
	// of that kind (CollectGarbage deletes their pods).
	Owner owner.Kind
}

var (
	podsResource = schema.GroupResource{Resource: "pods"}
	jobsResource = schema.GroupResource{Group: batchv1.GroupName, Resource: "jobs"}
	jobKind      = schema.GroupKind{Group: batchv1.GroupName, Kind: "Job"}
	podKind      = schema.GroupKind{Kind: "Pod"}
)

// Cluster is an in-memory API server holding Pods and owners: its Jobs (Jobs), and
// the owners of its Options.Owner in the Store NewStore made. It implements
// reconcile.Client, records every call through it in a call log, lets tests inject
// faults into those calls, feeds a Cache through a queue of watch events delivered
// when the test says, and drives pods through a simulated Kubelet. See the package
// documentation for what it simulates and what it does not.
//
// All methods are safe for concurrent use. Stored objects are never modified in
// place: every write stores a new copy, so objects handed out by the Cache stay
// valid snapshots.
type Cluster struct {
	mu      sync.Mutex
	clock   *clocktesting.FakeClock
	rng     *rand.Rand
	rv      uint64
	uidSeq  uint64
	seq     uint64 // creation order of pods
	latency time.Duration

	owner owner.Kind // Options.Owner, owner.BatchJob when unset
	jobs  *Store[*batchv1.Job]
	// custom is the Store of the owners of kind owner (NewStore), nil when the
	// cluster has none.
	custom ownerSource
	pods   map[types.NamespacedName]*corev1.Pod
	// order remembers the creation order of pods, by UID, also after they are gone.
	order map[types.UID]uint64

	terminating sets.Set[string]

	calls     []Call
	callSeq   int
	faults    []*faultState
	intercept func(Call) Outcome
	hooks     []func(WatchEvent)
	// readDelay is how long GetPod takes (RunLatency's L); onCreate, when set, sees
	// every pod a CreatePod wrote, outside the lock (RunLatency's kubelet).
	readDelay time.Duration
	onCreate  func(*corev1.Pod)

	cache   *Cache
	kubelet *Kubelet
}

var (
	_ reconcile.Client       = (*Cluster)(nil)
	_ reconcile.StatusWriter = (*Cluster)(nil)
)

// NewCluster returns an empty cluster. It panics when opts.Owner is set but invalid
// (owner.Kind.Validate): a test's mistake, caught at once.
func NewCluster(opts Options) *Cluster {
	kind := opts.Owner
	if kind == (owner.Kind{}) {
		kind = owner.BatchJob
	}
	if err := kind.Validate(); err != nil {
		panic(fmt.Sprintf("reconciletest: Options.Owner: %v", err))
	}
	clk := opts.Clock
	if clk == nil {
		clk = clocktesting.NewFakeClock(defaultStart)
	}
	c := &Cluster{
		clock:       clk,
		rng:         rand.New(rand.NewPCG(opts.Seed, 0x6a6f626b6974)),
		latency:     opts.EventLatency,
		owner:       kind,
		pods:        map[types.NamespacedName]*corev1.Pod{},
		order:       map[types.UID]uint64{},
		terminating: sets.New[string](),
	}
	c.jobs = newStore(c, owner.BatchJob, reconcile.JobType)
	c.cache = newCache(c)
	c.kubelet = &Kubelet{c: c}
	return c
}

// Owner returns the kind of owners the cluster serves (Options.Owner),
// owner.BatchJob when unset.
func (c *Cluster) Owner() owner.Kind { return c.owner }

// Jobs returns the Store of the cluster's batch/v1 Jobs (reconcile.JobType).
// Every Cluster holds Jobs, whatever its Options.Owner: the children of a
// group are Jobs.
func (c *Cluster) Jobs() *Store[*batchv1.Job] { return c.jobs }

// owners returns the Store of the owners the cluster serves: its Jobs, or the
// Store of its Options.Owner (nil when it has none).
func (c *Cluster) owners() ownerSource {
	if c.owner == owner.BatchJob {
		return c.jobs
	}
	return c.custom
}

// stores returns the cluster's Stores: its Jobs, then its Options.Owner's.
func (c *Cluster) stores() []ownerSource {
	if c.custom == nil {
		return []ownerSource{c.jobs}
	}
	return []ownerSource{c.jobs, c.custom}
}

// Clock returns the cluster's fake clock.
func (c *Cluster) Clock() *clocktesting.FakeClock { return c.clock }

// Cache returns the informer-like view of the cluster.
func (c *Cluster) Cache() *Cache { return c.cache }

// Kubelet returns the simulated kubelet.
func (c *Cluster) Kubelet() *Kubelet { return c.kubelet }

// SetEventLatency sets how long after a write its watch event becomes due. Events
// already queued keep their due time.
func (c *Cluster) SetEventLatency(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.latency = d
}

// OnWrite registers fn to be called with every watch event as it is written, in
// order, before any delivery to the Cache (a simulator builds its reference model
// from them). fn runs under the Cluster's lock and must not call the Cluster.
func (c *Cluster) OnWrite(fn func(WatchEvent)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks = append(c.hooks, fn)
}

// Calls returns a copy of the call log.
func (c *Cluster) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// ResetCalls empties the call log (the numbering goes on).
func (c *Cluster) ResetCalls() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = nil
}

// now returns the clock's time at API precision (whole seconds), as timestamps
// written by the API server are.
func (c *Cluster) now() metav1.Time {
	return metav1.NewTime(c.clock.Now().Truncate(time.Second))
}

func (c *Cluster) nextRV() string {
	c.rv++
	return strconv.FormatUint(c.rv, 10)
}

func (c *Cluster) nextUID() types.UID {
	c.uidSeq++
	return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", c.uidSeq))
}

const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func (c *Cluster) generateName(prefix string) string {
	b := make([]byte, 5)
	for i := range b {
		b[i] = nameAlphabet[c.rng.IntN(len(nameAlphabet))]
	}
	return prefix + string(b)
}

// emitLocked queues a pod's watch event for the cache and tells the write hooks.
func (c *Cluster) emitLocked(typ watch.EventType, pod *corev1.Pod) {
	c.emitEventLocked(WatchEvent{Type: typ, Pod: pod})
}

// emitEventLocked stamps ev with the time and due time, queues it for the cache and
// tells the write hooks.
func (c *Cluster) emitEventLocked(ev WatchEvent) {
	now := c.clock.Now()
	ev.Time, ev.DueAt = now, now.Add(c.latency)
	c.cache.queueLocked(ev)
	for _, h := range c.hooks {
		h(ev)
	}
}

// logLocked appends call to the log and returns its index.
func (c *Cluster) logLocked(call Call) int {
	c.callSeq++
	call.Seq = c.callSeq
	call.Time = c.clock.Now()
	c.calls = append(c.calls, call)
	return len(c.calls) - 1
}

func (c *Cluster) finishLocked(i int, written bool, name string, err error) {
	if i < len(c.calls) {
		c.calls[i].Written = written
		c.calls[i].Err = err
		if name != "" {
			c.calls[i].Name = name
		}
	}
}

// UpdateJobStatus implements reconcile.Client: it replaces the stored Job's status
// with job.Status when job's UID and resourceVersion are current (or empty) and the
// update passes jobstatus.ValidateUpdate, the API server's rules; spec and metadata
// changes in job are ignored, as by the status subresource. Its call log operation
// is OpUpdateJobStatus.
func (c *Cluster) UpdateJobStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	if job == nil {
		return nil, apierrors.NewBadRequest("job is nil")
	}
	call := Call{Op: OpUpdateJobStatus, Namespace: job.Namespace, Name: job.Name, Job: job.DeepCopy()}
	return c.jobs.writeStatus(ctx, call, job.UID, job.ResourceVersion, func(cur, next *batchv1.Job) error {
		job.Status.DeepCopyInto(&next.Status)
		if errs := jobstatus.ValidateUpdate(cur, next); len(errs) > 0 {
			return apierrors.NewInvalid(jobKind, job.Name, errs)
		}
		return nil
	})
}

// WriteStatus implements reconcile.StatusWriter for every owner the cluster
// holds: a Workload whose Object is a *batchv1.Job is written through
// UpdateJobStatus (and converted with plan.JobWorkload), any other through the
// Store of the cluster's Options.Owner (Store.WriteStatus). The Workload's UID
// and ResourceVersion are the preconditions.
func (c *Cluster) WriteStatus(ctx context.Context, w *plan.Workload, status batchv1.JobStatus) (*plan.Workload, error) {
	if w == nil {
		return nil, apierrors.NewBadRequest("workload is nil")
	}
	if obj, ok := w.Object.(*batchv1.Job); ok {
		j := obj.DeepCopy()
		j.UID, j.ResourceVersion, j.Status = w.UID, w.ResourceVersion, status
		out, err := c.UpdateJobStatus(ctx, j)
		if err != nil {
			return nil, err
		}
		return plan.JobWorkload(out), nil
	}
	if c.custom == nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reconciletest: WriteStatus: Workload.Object is a %T, not a *batchv1.Job, and the cluster has no Store of owners of another kind", w.Object))
	}
	return c.custom.WriteStatus(ctx, w, status)
}

// statusCallLocked logs call, applies its injected outcome and, unless a fault
// comes before the write, writes.
func statusCallLocked[T any](c *Cluster, call Call, write func() (T, error)) (T, error) {
	var zero T
	out := c.decideLocked(call)
	c.delayLocked(out.Delay)
	i := c.logLocked(call)
	if out.Err != nil && !out.AfterWrite {
		c.finishLocked(i, false, "", out.Err)
		return zero, out.Err
	}
	stored, err := write()
	c.finishLocked(i, err == nil, "", cmp.Or(out.Err, err))
	if err := cmp.Or(out.Err, err); err != nil {
		return zero, err
	}
	return stored, nil
}

// uniqueName draws names from prefix until one is not taken.
func uniqueName(c *Cluster, prefix string, taken func(string) bool) string {
	for {
		if n := c.generateName(prefix); !taken(n) {
			return n
		}
	}
}

// checkPreconditions checks the UID and resourceVersion of a status update (in)
// against the stored object (cur): a Conflict when either is set and differs.
func checkPreconditions(res schema.GroupResource, in, cur metav1.Object) error {
	if in.GetUID() != "" && in.GetUID() != cur.GetUID() {
		return apierrors.NewConflict(res, in.GetName(),
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", in.GetUID(), cur.GetUID()))
	}
	if rv := in.GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
		return apierrors.NewConflict(res, in.GetName(), errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	return nil
}

func key(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

func isTerminal(pod *corev1.Pod) bool {
	return podutil.IsTerminal(pod)
}

// sortedPodsLocked returns the stored pods of namespace (all when empty) in creation
// order.
func (c *Cluster) sortedPodsLocked(namespace string) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(c.pods))
	for k, p := range c.pods {
		if namespace == "" || k.Namespace == namespace {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return cmp.Compare(c.order[a.UID], c.order[b.UID]) })
	return out
}
