package scenarios

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/reconcile"
)

// StartFunc starts a controller managing the Jobs whose spec.managedBy is managedBy
// and returns a function that stops it and waits for it to exit.
type StartFunc func(ctx context.Context, cfg *rest.Config, managedBy string) (stop func(), err error)

// ReconcileConfig returns the reconcile.Config a StartFunc must use: managedBy as
// Name, a short pod failure backoff (100ms doubling to 1s) and a short pod event
// batch period, so that the suite runs in seconds.
func ReconcileConfig(managedBy string) reconcile.Config {
	return reconcile.Config{
		Name:                managedBy,
		Backoff:             backoff.Policy{Base: 100 * time.Millisecond, Max: time.Second},
		PodEventBatchPeriod: 50 * time.Millisecond,
		MinBackoffRequeue:   100 * time.Millisecond,
	}
}

// Timeouts of the suite: how long a scenario waits for a state, and how long it
// watches for something that must not happen.
const (
	waitTimeout = 30 * time.Second
	quietPeriod = 1500 * time.Millisecond
	pollEvery   = 25 * time.Millisecond
)

// Run runs every scenario as a parallel subtest of t against the API server at cfg,
// each in its own namespace with its own controller (started with start, under a
// managedBy name of its own), and returns when all have finished.
func Run(t *testing.T, cfg *rest.Config, start StartFunc) {
	t.Helper()
	if cfg == nil || start == nil {
		t.Fatal("scenarios.Run: cfg and start are required")
	}
	t.Run("scenarios", func(t *testing.T) {
		for _, sc := range all {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				s := newScenario(t, cfg, start, sc.name)
				sc.run(s)
				s.checkStatusWrites()
			})
		}
	})
}

// scenario is the state of one scenario: its namespace, clients, kubelet and
// controller.
type scenario struct {
	t         *testing.T
	ctx       context.Context
	cs        kubernetes.Interface // the test's own client
	ns        string
	managedBy string
	kubelet   *kubelet

	start     StartFunc
	ctrlCfg   *rest.Config
	writes    *statusWrites
	patches   *podPatches
	stopMu    sync.Mutex
	stopCtrl  func()
	noControl bool
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func newScenario(t *testing.T, cfg *rest.Config, start StartFunc, name string) *scenario {
	slug := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(slug) > 40 {
		slug = slug[:40]
	}
	own := rest.CopyConfig(cfg)
	own.QPS, own.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(own)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	ns, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "s-" + slug[:min(len(slug), 20)] + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	s := &scenario{
		t: t, ctx: t.Context(), cs: cs, ns: ns.Name,
		managedBy: "scenarios.jobkit.dev/" + strings.TrimRight(slug, "-"),
		start:     start,
		writes:    &statusWrites{},
		patches:   &podPatches{},
	}
	s.ctrlCfg = rest.CopyConfig(cfg)
	s.ctrlCfg.QPS, s.ctrlCfg.Burst = 1000, 2000
	s.ctrlCfg.WrapTransport = transport.Wrappers(s.ctrlCfg.WrapTransport, s.writes.wrap, s.patches.wrap)

	kctx, cancel := context.WithCancel(context.Background())
	s.kubelet = newKubelet(cs, ns.Name)
	var wg sync.WaitGroup
	wg.Go(func() { s.kubelet.run(kctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	t.Cleanup(s.stopController) // runs before the kubelet stops
	s.startController()
	return s
}

// startController starts a controller (a new process state) for the scenario.
func (s *scenario) startController() {
	s.t.Helper()
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.stopCtrl != nil {
		s.t.Fatal("startController: a controller is already running")
	}
	stop, err := s.start(s.ctx, s.ctrlCfg, s.managedBy)
	if err != nil {
		s.t.Fatalf("start controller %s: %v", s.managedBy, err)
	}
	s.stopCtrl = stop
}

// stopController stops the running controller, if any, and waits for it.
func (s *scenario) stopController() {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.stopCtrl != nil {
		s.stopCtrl()
		s.stopCtrl = nil
	}
}

// checkStatusWrites fails the scenario if the API server rejected a status write.
func (s *scenario) checkStatusWrites() {
	s.t.Helper()
	accepted, rejected := s.writes.counts()
	for _, r := range rejected {
		s.t.Errorf("the API server rejected a Job status write: %s", r)
	}
	if accepted == 0 && !s.noControl {
		s.t.Errorf("no Job status write went through the transport given to the StartFunc; build the clients from the cfg it receives")
	}
}

// --- Jobs ---

// newJob returns a Job named name managed by the scenario's controller, with
// restartPolicy Never and one container.
func (s *scenario) newJob(name string, completions, parallelism *int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name},
		Spec: batchv1.JobSpec{
			ManagedBy:   ptr.To(s.managedBy),
			Completions: completions,
			Parallelism: parallelism,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			}},
		},
	}
}

func (s *scenario) createJob(job *batchv1.Job) *batchv1.Job {
	s.t.Helper()
	out, err := s.cs.BatchV1().Jobs(s.ns).Create(s.ctx, job, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("create Job %s: %v", job.Name, err)
	}
	return out
}

func (s *scenario) getJob(name string) *batchv1.Job {
	s.t.Helper()
	job, err := s.cs.BatchV1().Jobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get Job %s: %v", name, err)
	}
	return job
}

// updateJob changes the spec of the Job name, retrying on conflicts.
func (s *scenario) updateJob(name string, mutate func(*batchv1.Job)) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		job, err := s.cs.BatchV1().Jobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(job)
		_, err = s.cs.BatchV1().Jobs(s.ns).Update(s.ctx, job, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("update Job %s: %v", name, err)
	}
}

// deleteJob deletes the Job name with propagationPolicy Background: envtest runs no
// garbage collector, so its pods stay.
func (s *scenario) deleteJob(name string) {
	s.t.Helper()
	err := s.cs.BatchV1().Jobs(s.ns).Delete(s.ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if err != nil {
		s.t.Fatalf("delete Job %s: %v", name, err)
	}
	s.eventually("Job "+name+" deleted", func() (bool, string) {
		_, err := s.cs.BatchV1().Jobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// waitJob waits until the Job name satisfies cond and returns it.
func (s *scenario) waitJob(name, what string, cond func(*batchv1.Job) bool) *batchv1.Job {
	s.t.Helper()
	var job *batchv1.Job
	s.eventually("Job "+name+": "+what, func() (bool, string) {
		j, err := s.cs.BatchV1().Jobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		job = j
		return cond(j), describeJob(j) + "\n" + s.describePods(name)
	})
	return job
}

// waitFinished waits for the Job's terminal condition (Complete or Failed).
func (s *scenario) waitFinished(name string) *batchv1.Job {
	s.t.Helper()
	return s.waitJob(name, "finished", func(j *batchv1.Job) bool {
		return hasCondition(j, batchv1.JobComplete) || hasCondition(j, batchv1.JobFailed)
	})
}

// eventually polls cond until it holds or waitTimeout passes; cond returns a
// description of the state for the failure message.
func (s *scenario) eventually(what string, cond func() (bool, string)) {
	s.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) || s.ctx.Err() != nil {
			s.t.Fatalf("timed out after %v waiting for %s; last state:\n%s", waitTimeout, what, state)
		}
		time.Sleep(pollEvery)
	}
}

// consistently checks that cond holds for quietPeriod.
func (s *scenario) consistently(what string, cond func() (bool, string)) {
	s.t.Helper()
	deadline := time.Now().Add(quietPeriod)
	for time.Now().Before(deadline) {
		if ok, state := cond(); !ok {
			s.t.Fatalf("%s no longer holds; state:\n%s", what, state)
		}
		time.Sleep(pollEvery)
	}
}

func hasCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	return conditionOf(job, t) != nil
}

// conditionOf returns the condition t of job when it is True.
func conditionOf(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

func describeJob(j *batchv1.Job) string {
	st := j.Status
	var conds []string
	for _, c := range st.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	unc := "none"
	if u := st.UncountedTerminatedPods; u != nil {
		unc = fmt.Sprintf("succeeded=%d failed=%d", len(u.Succeeded), len(u.Failed))
	}
	return fmt.Sprintf("job %s: active=%d ready=%d terminating=%d succeeded=%d failed=%d completedIndexes=%q failedIndexes=%v uncounted[%s] startTime=%v conditions=%v",
		j.Name, st.Active, ptr.Deref(st.Ready, -1), ptr.Deref(st.Terminating, -1), st.Succeeded, st.Failed,
		st.CompletedIndexes, ptr.Deref(st.FailedIndexes, "<nil>"), unc, st.StartTime != nil, conds)
}

// finalStatus is the part of a finished Job's status the scenarios compare exactly.
type finalStatus struct {
	Active, Ready, Terminating, Succeeded, Failed int32
	CompletedIndexes                              string
	FailedIndexes                                 *string
	Conditions                                    []string // "Type=Status/Reason"
}

func statusOf(j *batchv1.Job) finalStatus {
	f := finalStatus{
		Active: j.Status.Active, Ready: ptr.Deref(j.Status.Ready, -1), Terminating: ptr.Deref(j.Status.Terminating, -1),
		Succeeded: j.Status.Succeeded, Failed: j.Status.Failed,
		CompletedIndexes: j.Status.CompletedIndexes, FailedIndexes: j.Status.FailedIndexes,
	}
	for _, c := range j.Status.Conditions {
		f.Conditions = append(f.Conditions, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return f
}

// --- Pods ---

// podsOf lists the pods of the Job name (by the job-name label), oldest first.
func (s *scenario) podsOf(name string) []*corev1.Pod {
	s.t.Helper()
	list, err := s.cs.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + name})
	if err != nil {
		s.t.Fatalf("list pods: %v", err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return pods
}

// waitPods waits until the pods of the Job name satisfy cond and returns them.
func (s *scenario) waitPods(name, what string, cond func([]*corev1.Pod) bool) []*corev1.Pod {
	s.t.Helper()
	var pods []*corev1.Pod
	s.eventually("pods of "+name+": "+what, func() (bool, string) {
		pods = s.podsOf(name)
		return cond(pods), s.describePods(name)
	})
	return pods
}

// waitRunning waits until exactly n pods of the Job name are running and not being
// deleted, and returns them.
func (s *scenario) waitRunning(name string, n int) []*corev1.Pod {
	s.t.Helper()
	var running []*corev1.Pod
	s.waitPods(name, fmt.Sprintf("%d running", n), func(pods []*corev1.Pod) bool {
		running = filter(pods, isRunning)
		return len(running) == n && len(filter(pods, isPending)) == 0
	})
	return running
}

func (s *scenario) describePods(name string) string {
	list, err := s.cs.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + name})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range list.Items {
		fmt.Fprintf(&b, "  pod %s index=%s phase=%s deleting=%v finalizers=%v owner=%v\n", p.Name,
			p.Labels[batchv1.JobCompletionIndexAnnotation], p.Status.Phase, p.DeletionTimestamp != nil, p.Finalizers, ownerUID(&p))
	}
	return b.String()
}

func filter(pods []*corev1.Pod, keep func(*corev1.Pod) bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

func isRunning(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
}

func isPending(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil
}

func hasFinalizer(p *corev1.Pod) bool {
	return slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer)
}

func indexOf(p *corev1.Pod) string { return p.Labels[batchv1.JobCompletionIndexAnnotation] }

func ownerUID(p *corev1.Pod) types.UID {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.UID
	}
	return ""
}

// podWithIndex returns the running pod of index i among pods.
func podWithIndex(pods []*corev1.Pod, i string) *corev1.Pod {
	for _, p := range pods {
		if indexOf(p) == i && isRunning(p) {
			return p
		}
	}
	return nil
}

// finish ends the running pod with o, through the kubelet.
func (s *scenario) finish(pod *corev1.Pod, o outcome) {
	s.t.Helper()
	if pod == nil {
		s.t.Fatal("finish: no such pod")
	}
	if err := s.kubelet.finish(s.ctx, pod, o); err != nil {
		s.t.Fatalf("kubelet: end pod %s: %v", pod.Name, err)
	}
}

// succeedAll makes every running pod succeed from now on.
func (s *scenario) succeedAll() {
	s.kubelet.setPolicy(func(*corev1.Pod) outcome { return succeed })
}
