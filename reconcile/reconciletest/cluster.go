package reconciletest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
)

// DefaultStart is the time of the fake clock of a Cluster created without one.
var DefaultStart = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// DefaultGracePeriod is the termination grace period of pods whose spec leaves it
// unset, as the API server defaults it.
const DefaultGracePeriod int64 = 30

// Options configure a Cluster. The zero value is ready to use.
type Options struct {
	// Clock is the cluster's clock; nil means a new fake clock at DefaultStart. Share
	// it with the Reconciler (reconcile.Config.Clock) so that both see one time.
	Clock *clocktesting.FakeClock
	// Seed seeds the random suffixes of generated names. The same seed and the same
	// calls give the same names.
	Seed uint64
	// EventLatency is how long after a write its watch event becomes due for
	// delivery to the Cache (see Cache.DeliverDue); SetEventLatency changes it.
	EventLatency time.Duration
	// Owner is the kind of the cluster's Tasks, the custom resource it holds beside
	// batch/v1 Jobs (see Task); the zero value means owner.BatchJob: the cluster then
	// holds Jobs only and CreateTask fails. TaskKind is a ready-made custom kind.
	Owner owner.Kind
}

var (
	podsResource = schema.GroupResource{Resource: "pods"}
	jobsResource = schema.GroupResource{Group: batchv1.GroupName, Resource: "jobs"}
	jobKind      = schema.GroupKind{Group: batchv1.GroupName, Kind: "Job"}
	podKind      = schema.GroupKind{Kind: "Pod"}
)

// Cluster is an in-memory API server holding Jobs and Pods. It implements
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

	owner owner.Kind // the kind of tasks; owner.BatchJob when the cluster has none

	jobs  ownerStore[*batchv1.Job]
	tasks ownerStore[*Task]
	pods  map[types.NamespacedName]*corev1.Pod
	// order remembers the creation order of pods, by UID, also after they are gone.
	order map[types.UID]uint64

	terminating sets.Set[string]

	calls     []Call
	callSeq   int
	faults    []*faultState
	intercept Interceptor
	hooks     []func(WatchEvent)

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
		clk = clocktesting.NewFakeClock(DefaultStart)
	}
	c := &Cluster{
		clock:       clk,
		rng:         rand.New(rand.NewPCG(opts.Seed, 0x6a6f626b6974)),
		latency:     opts.EventLatency,
		owner:       kind,
		jobs:        jobStore(),
		pods:        map[types.NamespacedName]*corev1.Pod{},
		order:       map[types.UID]uint64{},
		terminating: sets.New[string](),
	}
	c.tasks = c.taskStore()
	c.cache = newCache(c)
	c.kubelet = &Kubelet{c: c}
	return c
}

// Owner returns the kind of the cluster's Tasks (Options.Owner), owner.BatchJob when
// it holds Jobs only.
func (c *Cluster) Owner() owner.Kind { return c.owner }

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

// emitLocked queues a watch event for the cache and tells the write hooks.
func (c *Cluster) emitLocked(typ watch.EventType, pod *corev1.Pod, job *batchv1.Job) {
	c.emitEventLocked(WatchEvent{Type: typ, Pod: pod, Job: job})
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

// CreatePod implements reconcile.Client: it stores a copy of pod with a name (from
// GenerateName when Name is empty), a UID, a resourceVersion, the creation time and
// phase Pending.
func (c *Cluster) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if pod == nil {
		return nil, apierrors.NewBadRequest("pod is nil")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	call := Call{Op: OpCreatePod, Namespace: pod.Namespace, Name: pod.Name, GenerateName: pod.GenerateName, Pod: pod.DeepCopy()}
	out := c.decideLocked(call)
	i := c.logLocked(call)
	if out.Err != nil && !out.AfterWrite {
		c.finishLocked(i, false, "", out.Err)
		return nil, out.Err
	}
	created, err := c.createPodLocked(pod)
	if err != nil {
		c.finishLocked(i, false, "", err)
		return nil, err
	}
	c.finishLocked(i, true, created.Name, out.Err)
	if out.Err != nil {
		return nil, out.Err
	}
	return created.DeepCopy(), nil
}

func (c *Cluster) createPodLocked(in *corev1.Pod) (*corev1.Pod, error) {
	if in.Namespace == "" {
		return nil, apierrors.NewInvalid(podKind, in.Name, field.ErrorList{field.Required(field.NewPath("metadata", "namespace"), "")})
	}
	if c.terminating.Has(in.Namespace) {
		return nil, NamespaceTerminatingError(in.Namespace)
	}
	pod := in.DeepCopy()
	if pod.Name == "" {
		if pod.GenerateName == "" {
			return nil, apierrors.NewInvalid(podKind, "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
		}
		pod.Name = uniqueName(c, pod.GenerateName, func(n string) bool { _, taken := c.pods[key(pod.Namespace, n)]; return taken })
	} else if _, taken := c.pods[key(pod.Namespace, pod.Name)]; taken {
		return nil, apierrors.NewAlreadyExists(podsResource, pod.Name)
	}
	pod.UID = c.nextUID()
	pod.ResourceVersion = c.nextRV()
	pod.CreationTimestamp = c.now()
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = nil, nil
	pod.Generation = 1
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	c.seq++
	c.order[pod.UID] = c.seq
	c.pods[key(pod.Namespace, pod.Name)] = pod
	c.emitLocked(watch.Added, pod, nil)
	return pod, nil
}

// DeletePod implements reconcile.Client. A pod that never ran (no node) or has
// finished is deleted at once, others gracefully: deletionTimestamp is set to now plus
// the grace period, and the Kubelet finishes the deletion. A pod with finalizers stays,
// with its deletionTimestamp, until they are removed.
func (c *Cluster) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	call := Call{Op: OpDeletePod, Namespace: namespace, Name: name, UID: uid}
	out := c.decideLocked(call)
	i := c.logLocked(call)
	if out.Err != nil && !out.AfterWrite {
		c.finishLocked(i, false, "", out.Err)
		return out.Err
	}
	err := c.deletePodLocked(namespace, name, uid, nil)
	c.finishLocked(i, err == nil, "", cmp.Or(out.Err, err))
	return cmp.Or(out.Err, err)
}

// deletePodLocked deletes a pod; grace overrides the pod's grace period when not nil.
func (c *Cluster) deletePodLocked(namespace, name string, uid types.UID, grace *int64) error {
	k := key(namespace, name)
	cur, ok := c.pods[k]
	if !ok {
		return apierrors.NewNotFound(podsResource, name)
	}
	if uid != "" && cur.UID != uid {
		return apierrors.NewConflict(podsResource, name,
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", uid, cur.UID))
	}
	if cur.DeletionTimestamp != nil {
		if grace == nil || (cur.DeletionGracePeriodSeconds != nil && *grace >= *cur.DeletionGracePeriodSeconds) {
			return nil // already being deleted
		}
	}
	g := DefaultGracePeriod
	if cur.Spec.TerminationGracePeriodSeconds != nil {
		g = *cur.Spec.TerminationGracePeriodSeconds
	}
	if grace != nil {
		g = *grace
	}
	if cur.Spec.NodeName == "" || isTerminal(cur) {
		g = 0
	}
	if g == 0 && len(cur.Finalizers) == 0 {
		c.removePodLocked(cur)
		return nil
	}
	pod := cur.DeepCopy()
	now := c.now()
	ts := metav1.NewTime(now.Add(time.Duration(g) * time.Second))
	pod.DeletionTimestamp = &ts
	pod.DeletionGracePeriodSeconds = &g
	c.storePodLocked(pod)
	return nil
}

// storePodLocked writes pod as a new version and removes it when its deletion is
// complete (grace period over and no finalizer left).
func (c *Cluster) storePodLocked(pod *corev1.Pod) {
	pod.ResourceVersion = c.nextRV()
	c.pods[key(pod.Namespace, pod.Name)] = pod
	c.emitLocked(watch.Modified, pod, nil)
	if deletionComplete(pod) {
		c.removePodLocked(pod)
	}
}

func deletionComplete(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil && len(pod.Finalizers) == 0 &&
		pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0
}

func (c *Cluster) removePodLocked(pod *corev1.Pod) {
	final := pod.DeepCopy()
	final.ResourceVersion = c.nextRV()
	delete(c.pods, key(pod.Namespace, pod.Name))
	c.emitLocked(watch.Deleted, final, nil)
}

// PatchPod implements reconcile.Client for strategic merge patches of a pod's
// metadata. Only labels, annotations, owner references and finalizers change; a patch
// that changes metadata.uid, name or namespace is rejected as Invalid (the UID works
// as a precondition), one that carries another resourceVersion gets a Conflict, and a
// pod being deleted cannot gain a finalizer. Other patch types are refused with 415.
func (c *Cluster) PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*corev1.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	call := Call{Op: OpPatchPod, Namespace: namespace, Name: name, PatchType: pt, Patch: slices.Clone(data)}
	out := c.decideLocked(call)
	i := c.logLocked(call)
	if out.Err != nil && !out.AfterWrite {
		c.finishLocked(i, false, "", out.Err)
		return nil, out.Err
	}
	pod, written, err := c.patchPodLocked(namespace, name, pt, data)
	c.finishLocked(i, written, "", cmp.Or(out.Err, err))
	if err := cmp.Or(out.Err, err); err != nil {
		return nil, err
	}
	return pod.DeepCopy(), nil
}

func (c *Cluster) patchPodLocked(namespace, name string, pt types.PatchType, data []byte) (*corev1.Pod, bool, error) {
	if pt != types.StrategicMergePatchType {
		return nil, false, apierrors.NewGenericServerResponse(415, "patch", podsResource, name,
			fmt.Sprintf("the in-memory cluster supports only %s patches, not %q", types.StrategicMergePatchType, pt), 0, false)
	}
	cur, ok := c.pods[key(namespace, name)]
	if !ok {
		return nil, false, apierrors.NewNotFound(podsResource, name)
	}
	orig, err := json.Marshal(cur)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, data, corev1.Pod{})
	if err != nil {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf("invalid strategic merge patch: %v", err))
	}
	var patched corev1.Pod
	if err := json.Unmarshal(merged, &patched); err != nil {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf("patched pod does not decode: %v", err))
	}
	meta := field.NewPath("metadata")
	var errs field.ErrorList
	if patched.UID != cur.UID {
		errs = append(errs, field.Invalid(meta.Child("uid"), patched.UID, "field is immutable"))
	}
	if patched.Name != cur.Name {
		errs = append(errs, field.Invalid(meta.Child("name"), patched.Name, "field is immutable"))
	}
	if patched.Namespace != cur.Namespace {
		errs = append(errs, field.Invalid(meta.Child("namespace"), patched.Namespace, "field is immutable"))
	}
	if cur.DeletionTimestamp != nil {
		old := sets.New(cur.Finalizers...)
		for _, f := range patched.Finalizers {
			if !old.Has(f) {
				errs = append(errs, field.Forbidden(meta.Child("finalizers"), "no new finalizers can be added if the object is being deleted"))
				break
			}
		}
	}
	if len(errs) > 0 {
		return nil, false, apierrors.NewInvalid(podKind, name, errs)
	}
	if patched.ResourceVersion != cur.ResourceVersion {
		return nil, false, apierrors.NewConflict(podsResource, name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	pod := cur.DeepCopy()
	pod.Labels, pod.Annotations = patched.Labels, patched.Annotations
	pod.OwnerReferences, pod.Finalizers = patched.OwnerReferences, patched.Finalizers
	if equality.Semantic.DeepEqual(pod.ObjectMeta, cur.ObjectMeta) {
		return cur, false, nil // a no-op patch writes nothing
	}
	c.storePodLocked(pod)
	return pod, true, nil
}

// UpdateJobStatus implements reconcile.Client: it replaces the stored Job's status
// with job.Status when job.ResourceVersion is current (or empty) and the update
// passes jobstatus.ValidateUpdate, the API server's rules; spec and metadata changes
// in job are ignored, as by the status subresource.
func (c *Cluster) UpdateJobStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if job == nil {
		return nil, apierrors.NewBadRequest("job is nil")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	call := Call{Op: OpUpdateJobStatus, Namespace: job.Namespace, Name: job.Name, Job: job.DeepCopy()}
	stored, err := statusCallLocked(c, call, func() (*batchv1.Job, error) { return c.jobs.updateStatusLocked(c, job) })
	if err != nil {
		return nil, err
	}
	return stored.DeepCopy(), nil
}

// statusCallLocked logs call, applies its injected outcome and, unless a fault
// comes before the write, writes.
func statusCallLocked[T any](c *Cluster, call Call, write func() (T, error)) (T, error) {
	var zero T
	out := c.decideLocked(call)
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
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
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
