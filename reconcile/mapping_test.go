package reconcile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

var (
	t0      = metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	jobA    = &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a", UID: "job-a"}}
	jobB    = &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b", UID: "job-b"}}
	jobKind = batchv1.SchemeGroupVersion.WithKind("Job")
)

// podOf builds a pod; opts change it.
func podOf(rv string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p", UID: "pod-uid", ResourceVersion: rv, Labels: map[string]string{"app": "x"}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func ownedBy(j *batchv1.Job) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(j, jobKind)} }
}

func withFinalizer(p *corev1.Pod) { p.Finalizers = []string{finalizers.Name} }
func deleting(p *corev1.Pod)      { p.DeletionTimestamp = &t0 }
func succeeded(p *corev1.Pod)     { p.Status.Phase = corev1.PodSucceeded }
func labelled(v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels = map[string]string{"app": v} }
}
func ownedByReplicaSet(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: ptr.To(true)}}
}

func TestMapPodEvent(t *testing.T) {
	const batch = time.Second
	target := func(j *batchv1.Job, mod func(*reconcile.JobTarget)) reconcile.JobTarget {
		tg := reconcile.JobTarget{Key: reconcile.Key(j.Namespace, j.Name), UID: j.UID, PodUID: "pod-uid"}
		mod(&tg)
		return tg
	}
	tests := []struct {
		name string
		ev   reconcile.PodEvent
		want reconcile.PodEventMapping
	}{
		{
			name: "add of an owned pod observes a creation",
			ev:   reconcile.PodEvent{Type: reconcile.PodAdded, New: podOf("1", ownedBy(jobA), withFinalizer)},
			want: reconcile.PodEventMapping{Delay: batch, Jobs: []reconcile.JobTarget{target(jobA, func(t *reconcile.JobTarget) { t.CreationObserved = true })}},
		},
		{
			name: "add of a pod being deleted observes a deletion, not a creation",
			ev:   reconcile.PodEvent{Type: reconcile.PodAdded, New: podOf("1", ownedBy(jobA), withFinalizer, deleting)},
			want: reconcile.PodEventMapping{Delay: batch, Jobs: []reconcile.JobTarget{target(jobA, func(t *reconcile.JobTarget) { t.DeletionObserved = true })}},
		},
		{
			name: "add of an owned pod without finalizer observes its removal too",
			ev:   reconcile.PodEvent{Type: reconcile.PodAdded, New: podOf("1", ownedBy(jobA))},
			want: reconcile.PodEventMapping{Delay: batch, Jobs: []reconcile.JobTarget{target(jobA, func(t *reconcile.JobTarget) {
				t.CreationObserved, t.FinalizerRemovalObserved = true, true
			})}},
		},
		{
			name: "add of a finished pod with the finalizer counts for the metric",
			ev:   reconcile.PodEvent{Type: reconcile.PodAdded, New: podOf("1", ownedBy(jobA), withFinalizer, succeeded)},
			want: reconcile.PodEventMapping{Delay: batch, TrackingFinalizer: "add",
				Jobs: []reconcile.JobTarget{target(jobA, func(t *reconcile.JobTarget) { t.CreationObserved = true })}},
		},
		{
			name: "add of an orphan with the finalizer: adoptable and orphan cleanup",
			ev:   reconcile.PodEvent{Type: reconcile.PodAdded, New: podOf("1", withFinalizer)},
			want: reconcile.PodEventMapping{Delay: batch, Adoptable: true, Orphan: true},
		},
		{
			name: "add of a pod of another controller: nothing",
			ev:   reconcile.PodEvent{Type: reconcile.PodAdded, New: podOf("1", ownedByReplicaSet, withFinalizer)},
			want: reconcile.PodEventMapping{},
		},
		{
			name: "update with the same resourceVersion is a resync: nothing",
			ev:   reconcile.PodEvent{Type: reconcile.PodUpdated, Old: podOf("5", ownedBy(jobA)), New: podOf("5", ownedBy(jobA), deleting)},
			want: reconcile.PodEventMapping{},
		},
		{
			name: "update to a deletionTimestamp observes the deletion",
			ev:   reconcile.PodEvent{Type: reconcile.PodUpdated, Old: podOf("5", ownedBy(jobA), withFinalizer), New: podOf("6", ownedBy(jobA), withFinalizer, deleting)},
			want: reconcile.PodEventMapping{Delay: batch, Jobs: []reconcile.JobTarget{target(jobA, func(t *reconcile.JobTarget) { t.DeletionObserved = true })}},
		},
		{
			name: "update losing the finalizer observes its removal",
			ev:   reconcile.PodEvent{Type: reconcile.PodUpdated, Old: podOf("5", ownedBy(jobA), withFinalizer, succeeded), New: podOf("6", ownedBy(jobA), succeeded)},
			want: reconcile.PodEventMapping{Delay: batch, TrackingFinalizer: "delete",
				Jobs: []reconcile.JobTarget{target(jobA, func(t *reconcile.JobTarget) { t.FinalizerRemovalObserved = true })}},
		},
		{
			name: "update with a new controller syncs the old one first, then the new one",
			ev:   reconcile.PodEvent{Type: reconcile.PodUpdated, Old: podOf("5", ownedBy(jobA), withFinalizer), New: podOf("6", ownedBy(jobB), withFinalizer)},
			want: reconcile.PodEventMapping{Delay: batch, Jobs: []reconcile.JobTarget{
				target(jobA, func(*reconcile.JobTarget) {}), target(jobB, func(*reconcile.JobTarget) {}),
			}},
		},
		{
			name: "release: the old controller is synced, the orphan is adoptable",
			ev:   reconcile.PodEvent{Type: reconcile.PodUpdated, Old: podOf("5", ownedBy(jobA), withFinalizer), New: podOf("6", withFinalizer)},
			want: reconcile.PodEventMapping{Delay: batch, Adoptable: true, Orphan: true, Jobs: []reconcile.JobTarget{target(jobA, func(*reconcile.JobTarget) {})}},
		},
		{
			name: "orphan whose labels changed is adoptable",
			ev:   reconcile.PodEvent{Type: reconcile.PodUpdated, Old: podOf("5"), New: podOf("6", labelled("y"))},
			want: reconcile.PodEventMapping{Delay: batch, Adoptable: true},
		},
		{
			name: "orphan with unchanged labels: nothing to adopt",
			ev:   reconcile.PodEvent{Type: reconcile.PodUpdated, Old: podOf("5"), New: podOf("6", succeeded)},
			want: reconcile.PodEventMapping{},
		},
		{
			name: "delete of an owned pod observes the deletion and the finalizer removal",
			ev:   reconcile.PodEvent{Type: reconcile.PodDeleted, Old: podOf("9", ownedBy(jobA), succeeded)},
			want: reconcile.PodEventMapping{Delay: batch, Jobs: []reconcile.JobTarget{target(jobA, func(t *reconcile.JobTarget) {
				t.DeletionObserved, t.FinalizerRemovalObserved = true, true
			})}},
		},
		{
			name: "delete from a stale tombstone of a finished pod with the finalizer",
			ev:   reconcile.PodEvent{Type: reconcile.PodDeleted, Old: podOf("9", ownedBy(jobA), succeeded, withFinalizer)},
			want: reconcile.PodEventMapping{Delay: batch, TrackingFinalizer: "delete", Jobs: []reconcile.JobTarget{target(jobA, func(t *reconcile.JobTarget) {
				t.DeletionObserved, t.FinalizerRemovalObserved = true, true
			})}},
		},
		{
			name: "delete of an orphan tombstone with the finalizer goes to the orphan cleanup",
			ev:   reconcile.PodEvent{Type: reconcile.PodDeleted, Old: podOf("9", withFinalizer)},
			want: reconcile.PodEventMapping{Orphan: true},
		},
		{name: "add without pod", ev: reconcile.PodEvent{Type: reconcile.PodAdded}},
		{name: "update without new pod", ev: reconcile.PodEvent{Type: reconcile.PodUpdated, Old: podOf("1")}},
		{name: "delete without pod", ev: reconcile.PodEvent{Type: reconcile.PodDeleted}},
		{name: "unknown type", ev: reconcile.PodEvent{New: podOf("1", ownedBy(jobA))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := reconcile.MapPodEvent(owner.BatchJob, tc.ev, batch)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("MapPodEvent(%s) (-want +got):\n%s", tc.ev.Type, diff)
			}
		})
	}
}

func TestMapPodEventDoesNotMutate(t *testing.T) {
	old, cur := podOf("1", ownedBy(jobA), withFinalizer), podOf("2", ownedBy(jobB), deleting)
	oldCopy, curCopy := old.DeepCopy(), cur.DeepCopy()
	reconcile.MapPodEvent(owner.BatchJob, reconcile.PodEvent{Type: reconcile.PodUpdated, Old: old, New: cur}, time.Second)
	assert.Equal(t, oldCopy, old)
	assert.Equal(t, curCopy, cur)
}

func TestObservePodEvent(t *testing.T) {
	finished := jobA.DeepCopy()
	finished.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	replaced := jobA.DeepCopy()
	replaced.UID = "job-a-2"
	lookupOf := func(j *batchv1.Job) reconcile.OwnerLookup {
		return func(namespace, name string) *finalizers.OrphanOwner {
			if j != nil && namespace == j.Namespace && name == j.Name {
				return finalizers.JobOwner(j)
			}
			return nil
		}
	}
	tests := []struct {
		name          string
		lookup        reconcile.OwnerLookup
		pod           *corev1.Pod
		wantSync      []string
		wantOrphan    bool
		wantSatisfied bool
	}{
		{name: "live Job: observed and synced", lookup: lookupOf(jobA), pod: podOf("1", ownedBy(jobA), withFinalizer), wantSync: []string{"ns/a"}, wantSatisfied: true},
		{name: "nil lookup trusts the UID last synced", pod: podOf("1", ownedBy(jobA), withFinalizer), wantSync: []string{"ns/a"}, wantSatisfied: true},
		{name: "Job gone: orphan cleanup, not observed", lookup: lookupOf(nil), pod: podOf("1", ownedBy(jobA), withFinalizer), wantOrphan: true},
		{name: "Job replaced under the same name: not its pod", lookup: lookupOf(replaced), pod: podOf("1", ownedBy(jobA), withFinalizer), wantOrphan: true},
		{name: "Job finished: orphan cleanup, not synced", lookup: lookupOf(finished), pod: podOf("1", ownedBy(jobA), withFinalizer), wantOrphan: true, wantSatisfied: true},
		{name: "Job gone, pod without finalizer: nothing", lookup: lookupOf(nil), pod: podOf("1", ownedBy(jobA))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			_, _ = e.r.Sync(t.Context(), plan.JobWorkload(jobA), listOf(nil)) // remembers jobA's UID
			exp := e.cfg.Expectations
			exp.Delete("ns/a")
			require.NoError(t, exp.RaiseCreations("ns/a", 1))
			got := e.r.ObservePodEvent(reconcile.PodEvent{Type: reconcile.PodAdded, New: tc.pod}, tc.lookup)
			assert.Equal(t, tc.wantSync, got.Sync, "Sync")
			assert.Equal(t, tc.wantOrphan, got.OrphanCleanup, "OrphanCleanup")
			assert.Equal(t, tc.wantSatisfied, exp.Satisfied("ns/a"), "creation observed")
			if len(got.Sync) > 0 {
				assert.Equal(t, time.Second, got.Delay)
			} else {
				assert.Zero(t, got.Delay)
			}
		})
	}
}

// ObservePodEvent applies the rules of ObservePodEvent to owners of another kind,
// from the owner's facts; references to batch Jobs are not that controller's.
func TestObservePodEventOf(t *testing.T) {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	tj := &metav1.ObjectMeta{Namespace: ns, Name: "a", UID: "tj-a"}
	ownedByTJ := func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{kind.NewControllerRef(tj)}
		p.Finalizers = []string{kind.Finalizer}
	}
	lookupOf := func(own *finalizers.OrphanOwner) reconcile.OwnerLookup {
		return func(namespace, name string) *finalizers.OrphanOwner {
			if own != nil && namespace == ns && name == "a" {
				return own
			}
			return nil
		}
	}
	tests := []struct {
		name          string
		lookup        reconcile.OwnerLookup
		pod           *corev1.Pod
		wantSync      []string
		wantOrphan    bool
		wantSatisfied bool
	}{
		{name: "live owner: observed and synced", lookup: lookupOf(&finalizers.OrphanOwner{UID: "tj-a"}), pod: podOf("1", ownedByTJ), wantSync: []string{"ns/a"}, wantSatisfied: true},
		{name: "nil lookup trusts the UID last synced", pod: podOf("1", ownedByTJ), wantSync: []string{"ns/a"}, wantSatisfied: true},
		{name: "owner gone: orphan cleanup, not observed", lookup: lookupOf(nil), pod: podOf("1", ownedByTJ), wantOrphan: true},
		{name: "owner replaced under the same name: not its pod", lookup: lookupOf(&finalizers.OrphanOwner{UID: "tj-a-2"}), pod: podOf("1", ownedByTJ), wantOrphan: true},
		{name: "owner finished: orphan cleanup, not synced", lookup: lookupOf(&finalizers.OrphanOwner{UID: "tj-a", Finished: true}), pod: podOf("1", ownedByTJ), wantOrphan: true, wantSatisfied: true},
		{name: "a batch Job's pod is not this controller's", lookup: lookupOf(&finalizers.OrphanOwner{UID: "job-a"}), pod: podOf("1", ownedBy(jobA), withFinalizer)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *reconcile.Config) { c.Owner = kind })
			exp := e.cfg.Expectations
			require.NoError(t, exp.RaiseCreations("ns/a", 1))
			got := e.r.ObservePodEvent(reconcile.PodEvent{Type: reconcile.PodAdded, New: tc.pod}, tc.lookup)
			assert.Equal(t, tc.wantSync, got.Sync, "Sync")
			assert.Equal(t, tc.wantOrphan, got.OrphanCleanup, "OrphanCleanup")
			assert.Equal(t, tc.wantSatisfied, exp.Satisfied("ns/a"), "creation observed")
		})
	}
}

func TestObservePodEventClearsFinalizerAndDeletion(t *testing.T) {
	e := newEnv(t)
	fr, exp := e.cfg.FinalizerRemovals, e.cfg.Expectations
	require.NoError(t, fr.Expect("ns/a", "pod-uid"))
	require.NoError(t, exp.RaiseDeletions("ns/a", "pod-uid"))
	e.r.ObservePodEvent(reconcile.PodEvent{Type: reconcile.PodUpdated,
		Old: podOf("1", ownedBy(jobA), withFinalizer, succeeded), New: podOf("2", ownedBy(jobA), succeeded)}, nil)
	assert.False(t, fr.Has("ns/a", "pod-uid"), "finalizer removal observed")
	assert.False(t, exp.Satisfied("ns/a"), "deletion still awaited")
	e.r.ObservePodEvent(reconcile.PodEvent{Type: reconcile.PodDeleted, Old: podOf("3", ownedBy(jobA), succeeded)}, nil)
	assert.True(t, exp.Satisfied("ns/a"), "deletion observed")
	assert.Equal(t, 1, e.metrics.Get("terminated_pods_tracking_finalizer_total{delete}"))
}

func TestObserveOwnerEvent(t *testing.T) {
	const batch = time.Second
	a := plan.JobWorkload(jobA)
	with := func(mod func(w *plan.Workload)) *plan.Workload {
		w := *a
		mod(&w)
		return &w
	}
	gen2 := with(func(w *plan.Workload) { w.Generation = a.Generation + 1 })
	statusOnly := with(func(w *plan.Workload) { w.Status.Active = 3 })
	done := with(func(w *plan.Workload) {
		w.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	})
	doneAgain := with(func(w *plan.Workload) {
		w.Status = *done.Status.DeepCopy()
		w.Status.Failed = 1
	})
	recreated := with(func(w *plan.Workload) { w.UID = "job-a-2" })
	tests := []struct {
		name       string
		ev         reconcile.OwnerEvent
		want       reconcile.OwnerEventResult
		wantForget bool
	}{
		{name: "add syncs at once", ev: reconcile.OwnerEvent{New: a}, want: reconcile.OwnerEventResult{Key: "ns/a", Sync: true}},
		{name: "spec change syncs at once", ev: reconcile.OwnerEvent{Old: a, New: gen2}, want: reconcile.OwnerEventResult{Key: "ns/a", Sync: true}},
		{name: "status change is batched", ev: reconcile.OwnerEvent{Old: a, New: statusOnly}, want: reconcile.OwnerEventResult{Key: "ns/a", Sync: true, Delay: batch}},
		{name: "no-op update is batched", ev: reconcile.OwnerEvent{Old: a, New: a}, want: reconcile.OwnerEventResult{Key: "ns/a", Sync: true, Delay: batch}},
		{name: "finishing cleans the orphans of the owner", ev: reconcile.OwnerEvent{Old: a, New: done},
			want: reconcile.OwnerEventResult{Key: "ns/a", Sync: true, Delay: batch, OrphanCleanup: done}},
		{name: "finished before: no second cleanup", ev: reconcile.OwnerEvent{Old: done, New: doneAgain},
			want: reconcile.OwnerEventResult{Key: "ns/a", Sync: true, Delay: batch}},
		{name: "new UID: forget, sync at once, clean the old owner's orphans", ev: reconcile.OwnerEvent{Old: a, New: recreated},
			want: reconcile.OwnerEventResult{Key: "ns/a", Sync: true, OrphanCleanup: a, Gone: true}, wantForget: true},
		{name: "deletion forgets and cleans, no sync", ev: reconcile.OwnerEvent{Old: a},
			want: reconcile.OwnerEventResult{Key: "ns/a", OrphanCleanup: a, Gone: true}, wantForget: true},
		{name: "nil old: an addition", ev: reconcile.OwnerEvent{New: statusOnly}, want: reconcile.OwnerEventResult{Key: "ns/a", Sync: true}},
		{name: "nil old and new: nothing", ev: reconcile.OwnerEvent{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			exp := e.cfg.Expectations
			require.NoError(t, exp.RaiseCreations("ns/a", 2))
			got := e.r.ObserveOwnerEvent(tc.ev)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ObserveOwnerEvent (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantForget, !exp.Get("ns/a").Exists, "expectations of ns/a dropped")
		})
	}
}

// A late deletion of the old owner does not wipe the state of the owner recreated
// under the name and already synced.
func TestObserveOwnerEventForgetsByUID(t *testing.T) {
	e := newEnv(t)
	cur := e.create(t, job("a", 1, 1))
	_, err := e.sync(t, "a")
	require.NoError(t, err)
	exp := e.cfg.Expectations
	require.True(t, exp.Get("ns/a").Exists, "the sync raised the creations")
	old := plan.JobWorkload(cur)
	old.UID = "an-earlier-owner"
	e.r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: old})
	assert.True(t, exp.Get("ns/a").Exists, "the state of the live owner stays")
	e.r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: plan.JobWorkload(cur)})
	assert.False(t, exp.Get("ns/a").Exists, "the state of the deleted owner goes")
}

func TestCleanOrphan(t *testing.T) {
	e := newEnv(t)
	live := e.create(t, job("live", 1, 1))
	orphan, err := e.c.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "o-", Finalizers: []string{finalizers.Name, "example.com/keep"}}})
	require.NoError(t, err)
	owned, err := e.c.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "w-", Finalizers: []string{finalizers.Name},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(live, jobKind)}}})
	require.NoError(t, err)

	d, err := e.r.CleanOrphan(t.Context(), orphan, nil)
	require.NoError(t, err)
	assert.Equal(t, finalizers.ReasonNoController, d.Reason)
	got, err := e.c.GetPod(t.Context(), ns, orphan.Name)
	require.NoError(t, err)
	assert.Equal(t, []string{"example.com/keep"}, got.Finalizers)

	d, err = e.r.CleanOrphan(t.Context(), owned, finalizers.JobOwner(live))
	require.NoError(t, err)
	assert.False(t, d.Remove, "a live Job's pod keeps its finalizer")
	assert.Equal(t, 1, e.count(patch), "no call for a pod that keeps its finalizer")

	d, err = e.r.CleanOrphan(t.Context(), owned, nil)
	require.NoError(t, err)
	assert.Equal(t, finalizers.ReasonJobGone, d.Reason)

	gone := owned.DeepCopy()
	gone.Name, gone.UID = "missing", types.UID("missing-uid")
	_, err = e.r.CleanOrphan(t.Context(), gone, nil)
	assert.NoError(t, err, "a pod already gone is cleaned")

	e.c.InjectFault(reconcileFault(patch))
	_, err = e.r.CleanOrphan(t.Context(), orphan.DeepCopy(), nil)
	assert.Error(t, err)
	d, err = e.r.CleanOrphan(t.Context(), nil, nil)
	assert.NoError(t, err)
	assert.False(t, d.Remove)
}

// CleanOrphan confirms a missing owner through Config.ReadOwner itself.
func TestCleanOrphanConfirmsWithReadOwner(t *testing.T) {
	readErr := errors.New("API server unavailable")
	tests := []struct {
		name string
		// live is created in the cluster (nil: the owner does not exist there);
		// finished marks it finished.
		live, finished bool
		// own is what the cache shows (nil: nothing); other UID: another owner.
		own        func(live *batchv1.Job) *finalizers.OrphanOwner
		failRead   bool
		wantReason string
		wantRemove bool
		wantReads  int
		wantErr    error
	}{
		{name: "owner present and managed by us: pod kept", live: true, own: none, wantReason: finalizers.ReasonJobActive, wantReads: 1},
		{name: "owner replaced in the cache only: the live owner keeps its pod", live: true,
			own: func(*batchv1.Job) *finalizers.OrphanOwner {
				return &finalizers.OrphanOwner{UID: "another", ManagedBy: testName}
			},
			wantReason: finalizers.ReasonJobActive, wantReads: 1},
		{name: "owner present and finished: finalizer removed", live: true, finished: true, own: none,
			wantReason: finalizers.ReasonJobFinished, wantRemove: true, wantReads: 1},
		{name: "owner gone (NotFound): finalizer removed", own: none, wantReason: finalizers.ReasonJobGone, wantRemove: true, wantReads: 1},
		{name: "owner read fails: nothing removed, error", own: none, failRead: true, wantReads: 1, wantErr: readErr},
		{name: "owner known gone: no read", live: true,
			own:        func(*batchv1.Job) *finalizers.OrphanOwner { return &finalizers.OrphanOwner{Gone: true} },
			wantReason: finalizers.ReasonJobGone, wantRemove: true},
		{name: "owner in the cache: no read", live: true, own: finalizers.JobOwner, wantReason: finalizers.ReasonJobActive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reads := 0
			var cluster *reconciletest.Cluster
			e := newEnv(t, func(cfg *reconcile.Config) {
				cfg.ReadOwner = func(ctx context.Context, namespace, name string) (*plan.Workload, error) {
					reads++
					if tc.failRead {
						return nil, readErr
					}
					return reconcile.ObjectOwnerReader(getJob(cluster), reconcile.JobType.Workload)(ctx, namespace, name)
				}
			})
			cluster = e.c
			j := job("owner", 1, 1)
			j.UID = "owner-uid"
			if tc.finished {
				j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			}
			if tc.live {
				j = e.create(t, j)
			}
			pod, err := e.c.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "w-", Finalizers: []string{finalizers.Name},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(j, jobKind)}}})
			require.NoError(t, err)
			before := e.count(patch)

			d, err := e.r.CleanOrphan(t.Context(), pod, tc.own(j))
			assert.Equal(t, tc.wantReads, reads, "live reads")
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				assert.False(t, d.Remove)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.wantReason, d.Reason)
				assert.Equal(t, tc.wantRemove, d.Remove)
			}
			got, err := e.c.GetPod(t.Context(), ns, pod.Name)
			require.NoError(t, err)
			assert.Equal(t, !tc.wantRemove, owner.BatchJob.HasFinalizer(got), "finalizer kept")
			wantPatches := 0
			if tc.wantRemove {
				wantPatches = 1
			}
			assert.Equal(t, wantPatches, e.count(patch)-before, "patches")
		})
	}
}

func none(*batchv1.Job) *finalizers.OrphanOwner { return nil }

func TestPodEventTypeString(t *testing.T) {
	assert.Equal(t, "add", reconcile.PodAdded.String())
	assert.Equal(t, "update", reconcile.PodUpdated.String())
	assert.Equal(t, "delete", reconcile.PodDeleted.String())
	assert.Equal(t, "unknown", reconcile.PodEventType(0).String())
}
