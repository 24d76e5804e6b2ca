package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/plan"
)

func TestCaughtUp(t *testing.T) {
	tests := []struct {
		name    string
		w       lastWrite
		version string
		want    bool
	}{
		{name: "numeric: older", w: lastWrite{version: "120", older: []string{"100"}}, version: "100", want: false},
		{name: "numeric: between", w: lastWrite{version: "120", older: []string{"100"}}, version: "119", want: false},
		{name: "numeric: equal", w: lastWrite{version: "120", older: []string{"100"}}, version: "120", want: true},
		{name: "numeric: newer", w: lastWrite{version: "120", older: []string{"100"}}, version: "9000", want: true},
		{name: "numeric compare, not lexical", w: lastWrite{version: "10", older: []string{"9"}}, version: "9", want: false},
		{name: "opaque: a version seen before the write", w: lastWrite{version: "b", older: []string{"a"}}, version: "a", want: false},
		{name: "opaque: an intermediate version", w: lastWrite{version: "c", older: []string{"a", "b"}}, version: "b", want: false},
		{name: "opaque: the written version", w: lastWrite{version: "c", older: []string{"a", "b"}}, version: "c", want: true},
		{name: "opaque: an unknown version", w: lastWrite{version: "c", older: []string{"a"}}, version: "zz", want: true},
		{name: "mixed: falls back to equality", w: lastWrite{version: "c", older: []string{"7"}}, version: "7", want: false},
		{name: "empty cached version", w: lastWrite{version: "5", older: []string{"4"}}, version: "", want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, caughtUp(tc.w, tc.version), "caughtUp(%+v, %q)", tc.w, tc.version)
		})
	}
}

func TestRecordWrite(t *testing.T) {
	jobAt := func(rv string) *plan.Workload {
		return plan.JobWorkload(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}})
	}
	r := &Reconciler{keys: map[string]*keyState{}}
	b, c, y := jobAt("b"), jobAt("c"), jobAt("y")
	r.recordWrite("k", "a", b.ResourceVersion, written{job: b})
	r.recordWrite("k", "b", c.ResourceVersion, written{job: c}) // a second write in the same sync
	assert.Equal(t, &lastWrite{version: "c", older: []string{"a", "b"}, owner: written{job: c}}, writeOf(r, "k"))
	for _, v := range []string{"a", "b"} {
		isStale, last := r.stale("k", v)
		assert.True(t, isStale, "stale(k, %q)", v)
		assert.Same(t, c, last.job, "the Job of the last write, for a sync from a stale cache")
	}
	isStale, last := r.stale("k", "c")
	assert.False(t, isStale)
	assert.Equal(t, written{}, last)
	assert.Nil(t, writeOf(r, "k"), "forgotten once caught up")
	r.recordWrite("k", "x", y.ResourceVersion, written{job: y}) // a new sequence
	assert.Equal(t, &lastWrite{version: "y", older: []string{"x"}, owner: written{job: y}}, writeOf(r, "k"))
	r.recordWrite("k", "y", y.ResourceVersion, written{job: y}) // a write that changed nothing
	assert.Equal(t, &lastWrite{version: "y", older: []string{"x"}, owner: written{job: y}}, writeOf(r, "k"))
	r.recordWrite("j", "y", y.ResourceVersion, written{job: y})
	assert.Nil(t, writeOf(r, "j"), "nothing to wait for")
}

// writeOf is the last status write r remembers under key, or nil.
func writeOf(r *Reconciler, key string) *lastWrite {
	if s := r.keys[key]; s != nil {
		return s.write
	}
	return nil
}

func TestUncertainRemovalSupersededBy(t *testing.T) {
	tests := []struct {
		name string
		u    uncertainRemoval
		seen string
		want bool
	}{
		{name: "the version the patch was sent for proves nothing", u: uncertainRemoval{version: "7", cached: "7"}, seen: "7", want: false},
		{name: "a newer version with the finalizer: not applied", u: uncertainRemoval{version: "7", cached: "7"}, seen: "9", want: true},
		{name: "adopted in the same sync: the pre-adoption version proves nothing", u: uncertainRemoval{version: "7", cached: "5"}, seen: "5", want: false},
		{name: "adopted: a version between proves nothing", u: uncertainRemoval{version: "7", cached: "5"}, seen: "6", want: false},
		{name: "adopted: a newer version", u: uncertainRemoval{version: "7", cached: "5"}, seen: "8", want: true},
		{name: "numeric compare, not lexical", u: uncertainRemoval{version: "10", cached: "10"}, seen: "9", want: false},
		{name: "opaque: another version", u: uncertainRemoval{version: "b", cached: "b"}, seen: "c", want: true},
		{name: "opaque: the cached version of an adopted pod", u: uncertainRemoval{version: "b", cached: "a"}, seen: "a", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.u.supersededBy(tc.seen), "%+v.supersededBy(%q)", tc.u, tc.seen)
		})
	}
}

func TestOnlyClaimChanged(t *testing.T) {
	base := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u", ResourceVersion: "5", Labels: map[string]string{"app": "a"}},
		Spec:       corev1.PodSpec{NodeName: "n"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	with := func(f func(*corev1.Pod)) *corev1.Pod {
		p := base.DeepCopy()
		p.ResourceVersion = "6"
		f(p)
		return p
	}
	tests := []struct {
		name  string
		after *corev1.Pod
		want  bool
	}{
		{name: "adoption: owner reference, finalizer, managed fields", want: true, after: with(func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{UID: "job", Controller: ptr.To(true)}}
			p.Finalizers = []string{"batch.kubernetes.io/job-tracking"}
			p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "jobkit"}}
		})},
		{name: "finished meanwhile", after: with(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })},
		{name: "relabelled meanwhile", after: with(func(p *corev1.Pod) { p.Labels = map[string]string{"app": "b"} })},
		{name: "being deleted", after: with(func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.Now()) })},
		{name: "bound meanwhile", after: with(func(p *corev1.Pod) { p.Spec.NodeName = "m" })},
		{name: "annotated meanwhile", after: with(func(p *corev1.Pod) { p.Annotations = map[string]string{"k": "v"} })},
		{name: "adoption answered whole, the cache trimmed (TrimPod)", want: true, after: with(func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{UID: "job", Controller: ptr.To(true)}}
			p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}}
			p.Spec.DNSPolicy, p.Spec.SchedulerName = corev1.DNSClusterFirst, "default-scheduler"
			p.Spec.Volumes = []corev1.Volume{{Name: "data"}}
			p.Status.PodIP, p.Status.QOSClass = "10.0.0.1", corev1.PodQOSBestEffort
		})},
		{name: "a container restarted meanwhile", after: with(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", RestartCount: 1}}
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, after := base.DeepCopy(), tc.after.DeepCopy()
			assert.Equal(t, tc.want, onlyClaimChanged(base, tc.after), "onlyClaimChanged")
			assert.Equal(t, before, base, "onlyClaimChanged modified its input")
			assert.Equal(t, after, tc.after, "onlyClaimChanged modified the answer")
		})
	}
}

// TestKeyStateForgotten checks that the record of a key goes as one: all of it when
// the key is forgotten, none of it otherwise.
func TestKeyStateForgotten(t *testing.T) {
	const key = "ns/j"
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	wrote := plan.JobWorkload(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "2"}})
	full := &keyState{
		uid:              "a",
		hasUID:           true,
		write:            &lastWrite{version: "2", older: []string{"1"}, owner: written{job: wrote}},
		uncertain:        map[types.UID]uncertainRemoval{"p": {version: "7", cached: "6", at: at}},
		batch:            4,
		uncertainCreates: []time.Time{at},
	}
	tests := []struct {
		name             string
		act              func(r *Reconciler)
		want             *keyState
		wantExpectations bool
	}{
		{name: "same UID keeps everything", act: func(r *Reconciler) { r.noteUID(key, "a") }, want: full, wantExpectations: true},
		{name: "new UID starts a new record", act: func(r *Reconciler) { r.noteUID(key, "b") }, want: &keyState{uid: "b", hasUID: true}},
		{name: "delete of another UID keeps everything", act: func(r *Reconciler) { r.forgetUID(key, "old") }, want: full, wantExpectations: true},
		{name: "delete of this UID forgets", act: func(r *Reconciler) { r.forgetUID(key, "a") }},
		{name: "delete without UID forgets", act: func(r *Reconciler) { r.forgetUID(key, "") }},
		{name: "Forget", act: func(r *Reconciler) { r.Forget(key) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Config{Name: "test"}.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			r := &Reconciler{cfg: cfg, keys: map[string]*keyState{}}
			r.noteUID(key, "a")
			r.recordWrite(key, "1", wrote.ResourceVersion, written{job: wrote})
			r.noteUncertain(key, "p", uncertainRemoval{version: "7", cached: "6", at: at})
			r.noteUncertainCreate(key, at)
			r.setBatchSize(key, 4)
			_ = cfg.Expectations.RaiseCreations(key, 1)

			tc.act(r)
			assert.Equal(t, tc.want, r.keys[key], "record of %s", key)
			assert.Equal(t, tc.wantExpectations, cfg.Expectations.Get(key).Exists, "expectations of %s kept", key)
		})
	}
}

// TestFactsOf checks the plan.FactCache of a key: none unless ImmutablePods, one
// per key kept between syncs, dropped with the key's state.
func TestFactsOf(t *testing.T) {
	off, err := New(Config{Name: "test"}, nil, nil)
	assert.NoError(t, err)
	assert.Nil(t, off.factsOf("ns/a"), "without ImmutablePods")

	r, err := New(Config{Name: "test", ImmutablePods: true}, nil, nil)
	assert.NoError(t, err)
	a := r.factsOf("ns/a")
	assert.NotNil(t, a)
	assert.Same(t, a, r.factsOf("ns/a"), "the same key's, kept")
	assert.NotSame(t, a, r.factsOf("ns/b"), "another key's")
	r.Forget("ns/a")
	assert.NotSame(t, a, r.factsOf("ns/a"), "after Forget, a new one")
}
