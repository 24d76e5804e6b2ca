package reconcile_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
)

// fuzzPod builds a pod from fuzz bits: which controller, finalizer, deletion, phase,
// resourceVersion and labels.
func fuzzPod(bits uint8, rv, label string, owner *batchv1.Job) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p", UID: "pod", ResourceVersion: rv, Labels: map[string]string{"l": label}}}
	switch bits & 3 {
	case 1:
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, batchv1.SchemeGroupVersion.WithKind("Job"))}
	case 2:
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs", Controller: new(bool)}}
		*p.OwnerReferences[0].Controller = true
	}
	if bits&4 != 0 {
		p.Finalizers = []string{finalizers.Name}
	}
	if bits&8 != 0 {
		p.DeletionTimestamp = &t0
	}
	if bits&16 != 0 {
		p.Status.Phase = corev1.PodSucceeded
	}
	return p
}

// FuzzMapPodEvent checks the invariants of the event mapping on arbitrary pods.
func FuzzMapPodEvent(f *testing.F) {
	f.Add(uint8(1), uint8(5), uint8(2), "1", "2", "a", "a")
	f.Add(uint8(0), uint8(5), uint8(13), "1", "1", "a", "b")
	f.Add(uint8(2), uint8(21), uint8(0), "7", "8", "", "x")
	f.Fuzz(func(t *testing.T, kind, oldBits, newBits uint8, oldRV, newRV, oldLabel, newLabel string) {
		oldPod := fuzzPod(oldBits, oldRV, oldLabel, jobA)
		newPod := fuzzPod(newBits, newRV, newLabel, jobB)
		ev := reconcile.PodEvent{Type: reconcile.PodEventType(kind % 4), Old: oldPod, New: newPod}
		m := reconcile.MapPodEvent(owner.BatchJob, ev, time.Second)
		if len(m.Jobs) > 2 {
			t.Fatalf("%d Jobs, want at most 2", len(m.Jobs))
		}
		if (len(m.Jobs) > 0 || m.Adoptable) != (m.Delay == time.Second) {
			t.Fatalf("Delay %v with %d Jobs, adoptable %v", m.Delay, len(m.Jobs), m.Adoptable)
		}
		for _, tg := range m.Jobs {
			if tg.Key != "ns/a" && tg.Key != "ns/b" {
				t.Fatalf("target %q is not a Job of the pod", tg.Key)
			}
			if tg.CreationObserved && (ev.Type != reconcile.PodAdded || tg.DeletionObserved) {
				t.Fatalf("creation observed on %s (deletion %v)", ev.Type, tg.DeletionObserved)
			}
			if ev.Type == reconcile.PodDeleted && !(tg.DeletionObserved && tg.FinalizerRemovalObserved) {
				t.Fatalf("a delete must observe the deletion and the finalizer removal: %+v", tg)
			}
		}
		if ev.Type == reconcile.PodUpdated && oldRV != "" && oldRV == newRV && (len(m.Jobs) > 0 || m.Adoptable || m.Orphan) {
			t.Fatalf("a resync must map to nothing: %+v", m)
		}
		if m.Adoptable && m.Orphan && (newPod == nil || !owner.BatchJob.HasFinalizer(newPod)) && (oldPod == nil || !owner.BatchJob.HasFinalizer(oldPod)) {
			t.Fatalf("orphan cleanup for a pod without the finalizer")
		}
	})
}

// FuzzAdoptReleasePatch applies the adoption then the release patch to pods with
// arbitrary finalizers and owners: what is not the Job's is kept, and the release
// takes the tracking finalizer with the controller reference.
func FuzzAdoptReleasePatch(f *testing.F) {
	f.Add("example.com/a,example.com/b", "cm-uid", "pod-uid")
	f.Add("", "", "x")
	f.Add(finalizers.Name, "job-uid", "pod")
	f.Fuzz(func(t *testing.T, fins, ownerUID, podUID string) {
		if !utf8.ValidString(fins) || !utf8.ValidString(ownerUID) || !utf8.ValidString(podUID) {
			t.Skip("API objects hold valid UTF-8 only")
		}
		var fs []string
		for _, s := range strings.Split(fins, ",") {
			if s != "" && !slices.Contains(fs, s) {
				fs = append(fs, s)
			}
		}
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pi", UID: "job-uid"}}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: types.UID(podUID), Finalizers: fs}}
		if ownerUID != "" && ownerUID != string(job.UID) {
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: types.UID(ownerUID)}}
		}
		apply := func(p *corev1.Pod, patch finalizers.Patch) *corev1.Pod {
			orig, err := json.Marshal(p)
			if err != nil {
				t.Skip()
			}
			out, err := strategicpatch.StrategicMergePatch(orig, patch.Data, corev1.Pod{})
			if err != nil {
				t.Fatalf("patch %s does not apply: %v", patch.Data, err)
			}
			var got corev1.Pod
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			return &got
		}
		adopted := apply(pod, reconcile.AdoptPatch(owner.BatchJob, job, pod))
		ref := metav1.GetControllerOf(adopted)
		if ref == nil || ref.UID != job.UID {
			t.Fatalf("adopted pod's controller = %v", ref)
		}
		if !owner.BatchJob.HasFinalizer(adopted) {
			t.Fatalf("adopted pod lacks the tracking finalizer: %v", adopted.Finalizers)
		}
		for _, f := range fs {
			if !slices.Contains(adopted.Finalizers, f) {
				t.Fatalf("adoption lost finalizer %q: %v", f, adopted.Finalizers)
			}
		}
		released := apply(adopted, reconcile.ReleasePatch(owner.BatchJob, job.UID, adopted))
		if metav1.GetControllerOf(released) != nil {
			t.Fatalf("released pod still has a controller: %v", released.OwnerReferences)
		}
		if len(released.OwnerReferences) != len(pod.OwnerReferences) {
			t.Fatalf("release changed the other owners: %v, want %v", released.OwnerReferences, pod.OwnerReferences)
		}
		others := slices.DeleteFunc(slices.Clone(adopted.Finalizers), func(f string) bool { return f == finalizers.Name })
		if !slices.Equal(released.Finalizers, others) {
			t.Fatalf("released pod's finalizers = %v, want %v (the tracking finalizer gone, the others kept)", released.Finalizers, others)
		}
	})
}
