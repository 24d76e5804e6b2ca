package clientgo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

const testName = "test.jobkit.dev/controller"

func newTestController(t testing.TB, objects ...runtime.Object) (*Controller, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset(objects...)
	c, err := New(cs, informers.NewSharedInformerFactory(cs, 0), reconcile.Config{Name: testName}, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, cs
}

func testJob(name string, uid types.UID, managedBy string, finished bool) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid},
		Spec: batchv1.JobSpec{
			ManagedBy: ptr.To(managedBy),
			Selector:  &metav1.LabelSelector{MatchLabels: map[string]string{"job": name}},
		},
	}
	if finished {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	}
	return j
}

func testPod(ns, name string, labels map[string]string, owner *batchv1.Job, finalizers ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: labels, Finalizers: finalizers,
	}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, batchv1.SchemeGroupVersion.WithKind("Job"))}
	}
	return p
}

func TestNew(t *testing.T) {
	cs := fake.NewClientset()
	tests := []struct {
		name     string
		cs       *fake.Clientset
		cfg      reconcile.Config
		wantName string
		wantErr  error
	}{
		{name: "default name", cs: cs, cfg: reconcile.Config{}, wantName: DefaultName},
		{name: "own name", cs: cs, cfg: reconcile.Config{Name: testName}, wantName: testName},
		{name: "bad config", cs: cs, cfg: reconcile.Config{Backoff: plainbackoff.Policy{Base: -time.Second}}, wantErr: reconcile.ErrInvalidConfig},
		{name: "no clientset", cfg: reconcile.Config{}, wantErr: errAnything},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c *Controller
			var err error
			if tt.cs == nil {
				c, err = New(nil, informers.NewSharedInformerFactory(cs, 0), tt.cfg, Options{})
			} else {
				c, err = New(tt.cs, informers.NewSharedInformerFactory(tt.cs, 0), tt.cfg, Options{})
			}
			if tt.wantErr != nil {
				if err == nil || (tt.wantErr != errAnything && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("New() error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			if c.Name() != tt.wantName {
				t.Errorf("New().Name() = %q, want %q", c.Name(), tt.wantName)
			}
		})
	}
}

var errAnything = errors.New("any error")

func TestNewSharesTheIndexOfAStartedFactory(t *testing.T) {
	cs := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(cs, 0)
	if _, err := New(cs, factory, reconcile.Config{Name: "a.example/one"}, Options{}); err != nil {
		t.Fatalf("first New: %v", err)
	}
	if _, err := New(cs, factory, reconcile.Config{Name: "a.example/two"}, Options{}); err != nil {
		t.Fatalf("second New on the same factory: %v", err)
	}
}

func TestRunArguments(t *testing.T) {
	c, _ := newTestController(t)
	if err := c.Run(t.Context(), 0); err == nil {
		t.Errorf("Run(workers 0) error = nil, want an error")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Run(ctx, 1); err == nil {
		t.Errorf("Run(cancelled context) error = nil, want caches not synced")
	}
	if err := c.Run(t.Context(), 1); err == nil {
		t.Errorf("second Run error = nil, want an error")
	}
}

func TestListPods(t *testing.T) {
	job := testJob("a", "uid-a", testName, false)
	other := testJob("b", "uid-b", testName, false)
	match := map[string]string{"job": "a"}
	pods := []*corev1.Pod{
		testPod("ns", "owned", match, job),
		testPod("ns", "owned-relabelled", map[string]string{"job": "x"}, job),
		testPod("ns", "other-jobs", match, other),
		testPod("ns", "orphan-match", match, nil),
		testPod("ns", "orphan-nomatch", map[string]string{"job": "x"}, nil),
		testPod("elsewhere", "orphan-other-ns", match, nil),
	}
	tests := []struct {
		name string
		job  *batchv1.Job
		want []string
	}{
		{name: "owned and matching orphans", job: job, want: []string{"orphan-match", "owned", "owned-relabelled"}},
		{name: "no selector: owned only", job: func() *batchv1.Job { j := job.DeepCopy(); j.Spec.Selector = nil; return j }(), want: []string{"owned", "owned-relabelled"}},
		{name: "empty selector: owned only", job: func() *batchv1.Job { j := job.DeepCopy(); j.Spec.Selector = &metav1.LabelSelector{}; return j }(), want: []string{"owned", "owned-relabelled"}},
	}
	c, _ := newTestController(t)
	for _, p := range pods {
		if err := c.pods.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.listPods(plan.JobWorkload(tt.job))
			if err != nil {
				t.Fatalf("listPods() error = %v", err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			slices.Sort(names)
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("listPods() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCleanOrphan(t *testing.T) {
	live := testJob("live", "uid-live", testName, false)
	done := testJob("done", "uid-done", testName, true)
	theirs := testJob("theirs", "uid-theirs", "example.com/other", true)
	gone := testJob("gone", "uid-gone", testName, false)
	replaced := testJob("live", "uid-old", testName, false) // same name as live, older UID
	tests := []struct {
		name       string
		pod        *corev1.Pod
		cached     []*batchv1.Job // in the informer cache
		inAPI      []*batchv1.Job // only in the API server (the cache lags)
		wantRemove bool
	}{
		{name: "no controller", pod: testPod("ns", "p", nil, nil, batchv1.JobTrackingFinalizer), wantRemove: true},
		{name: "live unfinished Job", pod: testPod("ns", "p", nil, live, batchv1.JobTrackingFinalizer), cached: []*batchv1.Job{live}},
		{name: "Job not cached yet but live", pod: testPod("ns", "p", nil, live, batchv1.JobTrackingFinalizer), inAPI: []*batchv1.Job{live}},
		{name: "finished Job", pod: testPod("ns", "p", nil, done, batchv1.JobTrackingFinalizer), cached: []*batchv1.Job{done}, wantRemove: true},
		{name: "Job of another controller", pod: testPod("ns", "p", nil, theirs, batchv1.JobTrackingFinalizer), cached: []*batchv1.Job{theirs}},
		{name: "Job gone", pod: testPod("ns", "p", nil, gone, batchv1.JobTrackingFinalizer), wantRemove: true},
		{name: "Job replaced under its name", pod: testPod("ns", "p", nil, replaced, batchv1.JobTrackingFinalizer), cached: []*batchv1.Job{live}, inAPI: []*batchv1.Job{live}, wantRemove: true},
		{name: "no finalizer", pod: testPod("ns", "p", nil, nil, "example.com/keep")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objects := []runtime.Object{tt.pod}
			for _, j := range tt.inAPI {
				objects = append(objects, j)
			}
			c, cs := newTestController(t, objects...)
			for _, j := range tt.cached {
				if err := c.jobInformer.GetIndexer().Add(j); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.pods.Add(tt.pod); err != nil {
				t.Fatal(err)
			}
			if err := c.cleanOrphan(t.Context(), "ns/p"); err != nil {
				t.Fatalf("cleanOrphan() error = %v", err)
			}
			got, err := cs.CoreV1().Pods("ns").Get(t.Context(), "p", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			removed := slices.Contains(tt.pod.Finalizers, batchv1.JobTrackingFinalizer) && !slices.Contains(got.Finalizers, batchv1.JobTrackingFinalizer)
			if removed != tt.wantRemove {
				t.Errorf("cleanOrphan(): tracking finalizer removed = %v, want %v (finalizers now %v)", removed, tt.wantRemove, got.Finalizers)
			}
			if slices.Contains(tt.pod.Finalizers, "example.com/keep") && !slices.Contains(got.Finalizers, "example.com/keep") {
				t.Errorf("cleanOrphan() removed another party's finalizer: %v", got.Finalizers)
			}
		})
	}
}

func TestCleanOrphanOfAPodGoneFromTheCache(t *testing.T) {
	c, cs := newTestController(t)
	if err := c.cleanOrphan(t.Context(), "ns/missing"); err != nil {
		t.Fatalf("cleanOrphan(missing pod) error = %v, want nil", err)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "patch" {
			t.Errorf("cleanOrphan(missing pod) sent %v", a)
		}
	}
}

func TestIndexByControllerUID(t *testing.T) {
	job := testJob("a", "uid-a", testName, false)
	tests := []struct {
		name string
		obj  any
		want []string
	}{
		{name: "controlled", obj: testPod("ns", "p", nil, job), want: []string{"uid-a"}},
		{name: "orphan", obj: testPod("ns", "p", nil, nil), want: []string{"orphan/ns"}},
		{name: "not a pod", obj: job, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := indexByControllerUID(tt.obj)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("indexByControllerUID() = %v, %v, want %v", got, err, tt.want)
			}
		})
	}
}

func TestCleanOrphanOfADeletedJobNeedsNoGet(t *testing.T) {
	gone := testJob("gone", "uid-gone", testName, false)
	pod := testPod("ns", "p", nil, gone, batchv1.JobTrackingFinalizer)
	c, cs := newTestController(t, pod)
	if err := c.pods.Add(pod); err != nil {
		t.Fatal(err)
	}
	c.onJob(reconcile.OwnerEvent{Old: plan.JobWorkload(gone)})
	if got := c.orphanQueue.Len(); got != 1 {
		t.Fatalf("orphan queue length after the Job's deletion = %d, want 1 (its pod)", got)
	}
	cs.ClearActions()
	if err := c.cleanOrphan(t.Context(), "ns/p"); err != nil {
		t.Fatal(err)
	}
	var verbs []string
	for _, a := range cs.Actions() {
		verbs = append(verbs, a.GetVerb()+" "+a.GetResource().Resource)
	}
	if diff := cmp.Diff([]string{"patch pods"}, verbs); diff != "" {
		t.Errorf("API calls of the orphan cleanup (-want +got):\n%s", diff)
	}
}

// The requeue delays after API errors are Options.APIBackoff's: base, doubling, at
// most max, for both queues; zero fields are the Job controller's 1s and 1m, and a
// maximum below the base is refused.
func TestAPIBackoff(t *testing.T) {
	tests := []struct {
		name    string
		backoff plainbackoff.Policy
		want    []time.Duration
		wantErr string
	}{
		{name: "default", want: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{name: "5ms to 20ms", backoff: plainbackoff.Policy{Base: 5 * time.Millisecond, Max: 20 * time.Millisecond},
			want: []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}},
		{name: "max below base", backoff: plainbackoff.Policy{Base: time.Second, Max: time.Millisecond}, wantErr: "Options.APIBackoff 1s to 1ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			c, err := New(cs, informers.NewSharedInformerFactory(cs, 0), reconcile.Config{Name: testName}, Options{APIBackoff: tt.backoff})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The limiter New built both queues with.
			lim := c.apiLimiter()
			for i, want := range tt.want {
				if got := lim.When("k"); got != want {
					t.Errorf("delay after failure %d = %v, want %v", i+1, got, want)
				}
			}
		})
	}
}
