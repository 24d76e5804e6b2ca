package plan_test

import (
	"context"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/expectations"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// scenario is the multi-step rig of the scenarios: one batch/v1 Job in
// reconciletest's Cluster, synced by a reconcile.Reconciler through the Driver (the
// one rig of every simulation, issue 19), with a kubelet the scenario drives by hand.
// The API server has no faults and the cache catches up before each sync, so a
// scenario fails on a wrong plan, or on reconcile executing it wrongly, and not on
// the weather. The Cluster checks every status write as the API server would
// (jobstatus.ValidateUpdate); the scenario also checks, from the Cluster's writes,
// what the Job controller promises: counters never go back, a UID leaves
// uncountedTerminatedPods once and never comes back, no pod is created for an index
// that already succeeded, no index has two active pods, and every call succeeds and
// changes something (a finalizer removal sent twice would not).
type scenario struct {
	t   *testing.T
	ctx context.Context
	c   *reconciletest.Cluster
	d   *reconciletest.Driver
	exp *expectations.Expectations[string]

	// Kept from the Cluster's writes (OnWrite), which hold no lock of ours.
	status    batchv1.JobStatus   // as last written
	counted   sets.Set[types.UID] // UIDs that left uncountedTerminatedPods
	created   int                 // pods the controller created
	elasticOK bool                // succeeded may go down (completions lowered)

	syncs    int
	calls    int // entries of the call log checked
	lastPlan *plan.Plan
	lastRes  reconcile.Result
}

const (
	scenarioNS  = "ns"
	scenarioJob = "job"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// newScenario creates the Job of spec (restartPolicy Never and one container "main"
// unless the spec says otherwise) and its controller; cfg, when given, changes the
// Reconciler's configuration before it is created.
func newScenario(t *testing.T, spec batchv1.JobSpec, cfg ...func(*reconcile.Config)) *scenario {
	t.Helper()
	if spec.Template.Spec.RestartPolicy == "" {
		spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	if len(spec.Template.Spec.Containers) == 0 {
		spec.Template.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox"}}
	}
	c := reconciletest.NewCluster(reconciletest.Options{Clock: clocktesting.NewFakeClock(t0), Seed: 1})
	exp, err := expectations.New[string](expectations.Config{Clock: c.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	// Calls one at a time in plan order: one run, one sequence of pod names.
	rc := reconcile.Config{Name: batchv1.JobControllerName, Clock: c.Clock(), Expectations: exp, FinalizerRemovalParallelism: 1}
	for _, f := range cfg {
		f(&rc)
	}
	r, err := reconcile.New(rc, c, reconcile.JobStatusWriter(c))
	if err != nil {
		t.Fatal(err)
	}
	s := &scenario{t: t, ctx: t.Context(), c: c, d: reconciletest.NewDriver(c, r), exp: exp, counted: sets.New[types.UID]()}
	c.OnWrite(s.observe)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: scenarioNS, Name: scenarioJob}, Spec: spec}
	if _, err := c.Jobs().Create(job); err != nil {
		t.Fatal(err)
	}
	return s
}

// observe checks each write as the Cluster makes it. It runs under the Cluster's
// lock: it reports with Errorf, and sync stops the test.
func (s *scenario) observe(ev reconciletest.WatchEvent) {
	job, _ := ev.Owner.(*batchv1.Job)
	switch {
	case job != nil && ev.Type == watch.Modified:
		s.checkStatus(job.Status)
		s.status = *job.Status.DeepCopy()
	case job != nil:
		s.status = *job.Status.DeepCopy()
	case ev.Pod != nil && ev.Type == watch.Added:
		s.created++
		ix, err := indexes.PodIndex(owner.BatchJob, ev.Pod)
		if err != nil {
			return
		}
		if done, _ := plainindexes.Parse(s.status.CompletedIndexes, plainindexes.NoLimit); done.Has(ix) {
			s.t.Errorf("sync %d: pod %s created for index %d, which already succeeded", s.syncs, ev.Pod.Name, ix)
		}
	}
}

// checkStatus checks a status write against the one before it.
func (s *scenario) checkStatus(st batchv1.JobStatus) {
	old := s.status
	if !s.elasticOK && st.Succeeded < old.Succeeded {
		s.t.Errorf("sync %d: succeeded went back from %d to %d", s.syncs, old.Succeeded, st.Succeeded)
	}
	if st.Failed < old.Failed {
		s.t.Errorf("sync %d: failed went back from %d to %d", s.syncs, old.Failed, st.Failed)
	}
	now := sets.New[types.UID]()
	if u := st.UncountedTerminatedPods; u != nil {
		now.Insert(u.Succeeded...)
		now.Insert(u.Failed...)
	}
	if again := now.Intersection(s.counted); again.Len() > 0 {
		s.t.Errorf("sync %d: UIDs %v are uncounted again after being counted", s.syncs, sets.List(again))
	}
	if u := old.UncountedTerminatedPods; u != nil {
		for _, uid := range append(slices.Clone(u.Succeeded), u.Failed...) {
			if !now.Has(uid) {
				s.counted.Insert(uid)
			}
		}
	}
}

func (s *scenario) now() time.Time { return s.c.Clock().Now() }

func (s *scenario) advance(d time.Duration) { s.c.Clock().Step(d) }

// job returns the Job as stored.
func (s *scenario) job() *batchv1.Job {
	s.t.Helper()
	job, err := s.c.Jobs().Get(scenarioNS, scenarioJob)
	if err != nil {
		s.t.Fatal(err)
	}
	return job
}

// update changes the Job's spec as a user would.
func (s *scenario) update(mutate func(*batchv1.Job)) {
	s.t.Helper()
	if _, err := s.c.Jobs().Update(scenarioNS, scenarioJob, mutate); err != nil {
		s.t.Fatal(err)
	}
}

// sync delivers every watch event and syncs the Job once, through the Driver, and
// returns the plan the Reconciler executed.
func (s *scenario) sync() *plan.Plan {
	s.t.Helper()
	s.syncs++
	s.c.Cache().DeliverAll()
	key := reconcile.Key(scenarioNS, scenarioJob)
	if st := s.exp.Get(key); !st.Satisfied {
		s.t.Fatalf("sync %d: expectations unsatisfied with every event delivered: %+v", s.syncs, st)
	}
	synced, res, err := s.d.Sync(s.ctx, scenarioNS, scenarioJob)
	switch {
	case err != nil:
		s.t.Fatalf("sync %d: %v\nplan:\n%s", s.syncs, err, res.Plan)
	case !synced:
		s.t.Fatalf("sync %d: the Job is not in the cache", s.syncs)
	case res.Plan == nil:
		s.t.Fatalf("sync %d: no plan (%+v)", s.syncs, res.Report)
	case res.Retry != "":
		s.t.Fatalf("sync %d: retry with every call succeeding: %s\nplan:\n%s", s.syncs, res.Retry, res.Plan)
	}
	s.lastPlan, s.lastRes = res.Plan, res
	calls := s.c.Calls()
	for _, call := range calls[s.calls:] {
		if call.Err != nil || !call.Written {
			s.t.Errorf("sync %d: %s did not change the cluster (sent twice?)\nplan:\n%s", s.syncs, call, res.Plan)
		}
	}
	s.calls = len(calls)
	s.checkIndexes()
	if s.t.Failed() {
		s.t.FailNow()
	}
	return res.Plan
}

// checkIndexes checks that no index of an Indexed Job has two active pods.
func (s *scenario) checkIndexes() {
	s.t.Helper()
	job := s.job()
	if ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
		return
	}
	seen := map[int]string{}
	for _, pod := range s.active() {
		ix, err := indexes.PodIndex(owner.BatchJob, pod)
		if err != nil {
			continue
		}
		if other, dup := seen[ix]; dup {
			s.t.Errorf("sync %d: index %d has two active pods: %s and %s", s.syncs, ix, other, pod.Name)
		}
		seen[ix] = pod.Name
	}
}

// pods returns the stored pods in creation order.
func (s *scenario) pods() []*corev1.Pod { return s.c.ListPods(scenarioNS) }

// active returns the pods that are neither finished nor being deleted.
func (s *scenario) active() []*corev1.Pod {
	return slices.DeleteFunc(s.pods(), func(p *corev1.Pod) bool { return podutil.IsTerminal(p) || p.DeletionTimestamp != nil })
}

// terminating returns the pods being deleted that have not finished.
func (s *scenario) terminating() []*corev1.Pod {
	return slices.DeleteFunc(s.pods(), func(p *corev1.Pod) bool { return podutil.IsTerminal(p) || p.DeletionTimestamp == nil })
}

func (s *scenario) byIndex(ix int) *corev1.Pod {
	for _, p := range s.active() {
		if i, err := indexes.PodIndex(owner.BatchJob, p); err == nil && i == ix {
			return p
		}
	}
	s.t.Fatalf("no active pod of index %d", ix)
	return nil
}

// Kubelet actions, through the Cluster's Kubelet.

func (s *scenario) kubelet(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

// deletePod deletes pod as another actor would, with its grace period.
func (s *scenario) deletePod(pod *corev1.Pod) {
	s.t.Helper()
	s.kubelet(s.c.RemovePod(pod.Namespace, pod.Name, nil))
}

// start runs a Pending pod and makes it ready.
func (s *scenario) start(pod *corev1.Pod) {
	s.t.Helper()
	k := s.c.Kubelet()
	s.kubelet(k.Run(pod.Namespace, pod.Name))
	s.kubelet(k.SetReady(pod.Namespace, pod.Name, true))
}

func (s *scenario) succeed(pod *corev1.Pod) {
	s.t.Helper()
	s.kubelet(s.c.Kubelet().Succeed(pod.Namespace, pod.Name))
}

func (s *scenario) fail(pod *corev1.Pod, code int32) {
	s.t.Helper()
	s.kubelet(s.c.Kubelet().Fail(pod.Namespace, pod.Name, code))
}

// evict fails the pod with a DisruptionTarget condition.
func (s *scenario) evict(pod *corev1.Pod) {
	s.t.Helper()
	s.kubelet(s.c.Kubelet().Evict(pod.Namespace, pod.Name))
}

// restartContainer records a container restart (restartPolicy OnFailure), starting
// the pod first if it is Pending.
func (s *scenario) restartContainer(pod *corev1.Pod) {
	s.t.Helper()
	if pod.Status.Phase == corev1.PodPending {
		s.start(pod)
	}
	s.kubelet(s.c.Kubelet().RestartContainer(pod.Namespace, pod.Name))
}

// finishTerminating lets the kubelet end every terminating pod (it fails).
func (s *scenario) finishTerminating() {
	s.t.Helper()
	for _, p := range s.terminating() {
		s.kubelet(s.c.Kubelet().FinishTermination(p.Namespace, p.Name))
	}
}

// runAll starts every pending pod.
func (s *scenario) runAll() {
	s.t.Helper()
	for _, p := range s.active() {
		if p.Status.Phase == corev1.PodPending {
			s.start(p)
		}
	}
}

// untilFinished syncs, lets the kubelet act, and advances time (by the Result's
// RequeueAfter, one second without one), until the Job finishes.
func (s *scenario) untilFinished(maxSyncs int, kubelet func(s *scenario)) batchv1.JobConditionType {
	s.t.Helper()
	for range maxSyncs {
		s.sync()
		if t, done := jobstatus.Finished(&s.job().Status); done {
			return t
		}
		kubelet(s)
		s.finishTerminating()
		if d := s.lastRes.RequeueAfter; d > 0 {
			s.advance(d)
		} else {
			s.advance(time.Second)
		}
	}
	s.t.Fatalf("job did not finish within %d syncs; last plan:\n%s\nstatus: %+v", maxSyncs, s.lastPlan, s.job().Status)
	return ""
}

// assertDone checks the end state every finished Job must have.
func (s *scenario) assertDone(wantType batchv1.JobConditionType, wantReason string) {
	s.t.Helper()
	job := s.job()
	t, done := jobstatus.Finished(&job.Status)
	if !done || t != wantType {
		s.t.Fatalf("job finished with %q (done=%v), want %q", t, done, wantType)
	}
	cond := jobstatus.FindCondition(job.Status.Conditions, t)
	if cond.Reason != wantReason {
		s.t.Fatalf("condition %s reason = %q, want %q (message %q)", t, cond.Reason, wantReason, cond.Message)
	}
	// More syncs clean up the finalizers of whatever is left.
	for range 3 {
		s.sync()
	}
	for _, p := range s.pods() {
		if owner.BatchJob.HasFinalizer(p) {
			s.t.Fatalf("pod %s still carries the tracking finalizer after the job finished", p.Name)
		}
	}
	job = s.job()
	if u := job.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		s.t.Fatalf("uncounted pods left after finishing: %+v", u)
	}
	if job.Status.Active != 0 || ptr.Deref(job.Status.Terminating, 0) != 0 {
		s.t.Fatalf("finished job has active=%d terminating=%d", job.Status.Active, ptr.Deref(job.Status.Terminating, 0))
	}
}
