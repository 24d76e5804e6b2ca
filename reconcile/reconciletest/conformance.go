package reconciletest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
)

// ConformanceFixture is what RunClientConformance needs besides the Client: a
// namespace to work in and direct (uncached) reads and Job creation.
type ConformanceFixture struct {
	// Client is the implementation under test.
	Client reconcile.Client
	// Namespace exists and may be written to. Objects are created with generated
	// names, so the namespace may be shared; the pods created are deleted at the end.
	Namespace string
	// CreateJob creates a Job (Name may be empty with GenerateName set) and returns it
	// as stored.
	CreateJob func(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error)
	// GetPod and GetJob read from the API server, not from a cache; a missing object
	// is a NotFound error.
	GetPod func(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	GetJob func(ctx context.Context, namespace, name string) (*batchv1.Job, error)
	// Eventually, when set, is how long to wait for a deletion to show in GetPod;
	// zero means it must show at once (true of a real API server too: a pod with no
	// node and no finalizer is deleted synchronously).
	Eventually time.Duration
}

// Conformance finalizers: a finalizer of another party, which patches must keep.
const otherFinalizer = "example.com/keep"

// staleUID is a UID no object has.
const staleUID = types.UID("0badc0de-0000-4000-8000-000000000000")

// RunClientConformance checks that f.Client behaves as reconcile.Reconciler expects
// of the API server: generated names; AlreadyExists and NotFound; DELETE with a stale
// UID precondition failing with Conflict and changing nothing; finalizers keeping a
// deleted pod until removed; the finalizer removal, adoption and release patches
// keeping what is not theirs, their UID precondition (reconcile.IsPodGone), a
// resourceVersion precondition in a patch (Conflict) and the stored resourceVersion in
// the pod a patch returns; GetPod showing the latest write at once (no cache) and
// NotFound; Job status updates with resourceVersion conflicts, NotFound and the API server's
// validation. Every Client implementation (the in-memory Cluster, adapters over
// client-go or controller-runtime against a real API server) should pass it.
func RunClientConformance(t *testing.T, f ConformanceFixture) {
	t.Helper()
	if f.Client == nil || f.CreateJob == nil || f.GetPod == nil || f.GetJob == nil || f.Namespace == "" {
		t.Fatalf("ConformanceFixture: Client, Namespace, CreateJob, GetPod and GetJob are required")
	}
	k := &conformance{f: f}

	t.Run("CreatePod/generateName", k.createGenerateName)
	t.Run("CreatePod/alreadyExists", k.createAlreadyExists)
	t.Run("DeletePod/notFound", k.deleteNotFound)
	t.Run("DeletePod/staleUID", k.deleteStaleUID)
	t.Run("DeletePod/finalizerKeepsPod", k.deleteWithFinalizer)
	t.Run("PatchPod/removeFinalizerKeepsOthers", k.removeFinalizer)
	t.Run("PatchPod/removeFinalizerStaleUID", k.removeFinalizerStaleUID)
	t.Run("PatchPod/staleResourceVersion", k.patchStaleResourceVersion)
	t.Run("PatchPod/notFound", k.patchNotFound)
	t.Run("PatchPod/adoptAndRelease", k.adoptRelease)
	t.Run("PatchPod/adoptStaleUID", k.adoptStaleUID)
	t.Run("GetPod/live", k.getLive)
	t.Run("GetPod/notFound", k.getNotFound)
	t.Run("UpdateJobStatus/conflict", k.statusConflict)
	t.Run("UpdateJobStatus/invalid", k.statusInvalid)
	t.Run("UpdateJobStatus/notFound", k.statusNotFound)
}

type conformance struct{ f ConformanceFixture }

// must stops the subtest when err is not nil.
func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", what, err)
	}
}

// check reports a failure when ok is false.
func check(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Errorf(format, args...)
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

func (k *conformance) pod(finalizers ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.f.Namespace, GenerateName: "conformance-", Finalizers: finalizers},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

// create creates a pod and registers its cleanup.
func (k *conformance) create(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	out, err := k.f.Client.CreatePod(t.Context(), pod)
	must(t, err, "CreatePod")
	if out == nil {
		t.Fatalf("CreatePod returned no pod and no error")
	}
	t.Cleanup(func() { k.cleanup(out) })
	return out
}

func (k *conformance) cleanup(pod *corev1.Pod) {
	ctx := context.Background()
	_, _ = k.f.Client.PatchPod(ctx, pod.Namespace, pod.Name, types.StrategicMergePatchType,
		[]byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["`+finalizers.Name+`","`+otherFinalizer+`"]}}`))
	_ = k.f.Client.DeletePod(ctx, pod.Namespace, pod.Name, pod.UID)
}

func (k *conformance) job(t *testing.T) *batchv1.Job {
	t.Helper()
	job := NewJob(k.f.Namespace, "", 1, 1)
	job.GenerateName = "conformance-"
	job.Spec.ManagedBy = ptr.To("jobkit.dev/conformance") // no real Job controller touches it
	job.Spec.Suspend = ptr.To(true)
	out, err := k.f.CreateJob(t.Context(), job)
	must(t, err, "CreateJob")
	return out
}

// gone waits (up to Eventually) for GetPod to report NotFound.
func (k *conformance) gone(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	deadline := time.Now().Add(k.f.Eventually)
	for {
		_, err := k.f.GetPod(t.Context(), pod.Namespace, pod.Name)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s/%s still readable after its deletion: GetPod error = %v, want NotFound", pod.Namespace, pod.Name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (k *conformance) createGenerateName(t *testing.T) {
	got := k.create(t, k.pod())
	check(t, strings.HasPrefix(got.Name, "conformance-") && len(got.Name) > len("conformance-"),
		"CreatePod(generateName conformance-).Name = %q, want conformance-<suffix>", got.Name)
	check(t, got.Namespace == k.f.Namespace, "CreatePod().Namespace = %q, want %q", got.Namespace, k.f.Namespace)
	check(t, got.UID != "", "CreatePod().UID is empty")
	check(t, got.ResourceVersion != "", "CreatePod().ResourceVersion is empty")
	check(t, !got.CreationTimestamp.IsZero(), "CreatePod().CreationTimestamp is zero")
	read, err := k.f.GetPod(t.Context(), got.Namespace, got.Name)
	must(t, err, "GetPod(created)")
	check(t, read.UID == got.UID, "GetPod(created).UID = %q, want %q", read.UID, got.UID)
}

func (k *conformance) createAlreadyExists(t *testing.T) {
	first := k.create(t, k.pod())
	again := k.pod()
	again.GenerateName, again.Name = "", first.Name
	_, err := k.f.Client.CreatePod(t.Context(), again)
	check(t, apierrors.IsAlreadyExists(err), "CreatePod(existing name) error = %v, want AlreadyExists", err)
}

func (k *conformance) deleteNotFound(t *testing.T) {
	err := k.f.Client.DeletePod(t.Context(), k.f.Namespace, "conformance-missing-pod", "")
	check(t, apierrors.IsNotFound(err), "DeletePod(missing) error = %v, want NotFound", err)
}

func (k *conformance) deleteStaleUID(t *testing.T) {
	pod := k.create(t, k.pod())
	err := k.f.Client.DeletePod(t.Context(), pod.Namespace, pod.Name, staleUID)
	check(t, apierrors.IsConflict(err), "DeletePod(stale UID) error = %v, want Conflict", err)
	read, err := k.f.GetPod(t.Context(), pod.Namespace, pod.Name)
	must(t, err, "GetPod after a DELETE with a stale UID (the pod must survive)")
	check(t, read.DeletionTimestamp == nil, "deletionTimestamp = %v after a DELETE with a stale UID, want none", read.DeletionTimestamp)

	must(t, k.f.Client.DeletePod(t.Context(), pod.Namespace, pod.Name, pod.UID), "DeletePod(right UID)")
	k.gone(t, pod)
}

func (k *conformance) deleteWithFinalizer(t *testing.T) {
	pod := k.create(t, k.pod(finalizers.Name))
	must(t, k.f.Client.DeletePod(t.Context(), pod.Namespace, pod.Name, pod.UID), "DeletePod")
	read, err := k.f.GetPod(t.Context(), pod.Namespace, pod.Name)
	must(t, err, "GetPod after DELETE of a pod with a finalizer (it must stay)")
	check(t, read.DeletionTimestamp != nil, "deletionTimestamp of a deleted pod with a finalizer is not set")

	patch := finalizers.RemovalPatch(read, finalizers.Name)
	_, err = k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, patch.Type, patch.Data)
	must(t, err, "removing the last finalizer of a deleted pod")
	k.gone(t, pod)
}

func (k *conformance) removeFinalizer(t *testing.T) {
	pod := k.create(t, k.pod(otherFinalizer, finalizers.Name))
	patch := finalizers.RemovalPatch(pod, finalizers.Name)
	got, err := k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, patch.Type, patch.Data)
	must(t, err, "PatchPod(finalizer removal)")
	want := []string{otherFinalizer}
	check(t, slices.Equal(got.Finalizers, want), "PatchPod(finalizer removal).Finalizers = %v, want %v", got.Finalizers, want)
	read, err := k.f.GetPod(t.Context(), pod.Namespace, pod.Name)
	must(t, err, "GetPod")
	check(t, slices.Equal(read.Finalizers, want), "stored finalizers = %v, want %v", read.Finalizers, want)

	_, err = k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, patch.Type, patch.Data)
	check(t, err == nil, "removing an absent finalizer: error = %v, want none", err)
}

func (k *conformance) removeFinalizerStaleUID(t *testing.T) {
	pod := k.create(t, k.pod(otherFinalizer, finalizers.Name))
	stale := pod.DeepCopy()
	stale.UID = staleUID
	patch := finalizers.RemovalPatch(stale, finalizers.Name)
	_, err := k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, patch.Type, patch.Data)
	check(t, reconcile.IsPodGone(err), "PatchPod(finalizer removal, stale UID) error = %v, want Invalid on metadata.uid (reconcile.IsPodGone)", err)
	read, err := k.f.GetPod(t.Context(), pod.Namespace, pod.Name)
	must(t, err, "GetPod")
	want := []string{otherFinalizer, finalizers.Name}
	check(t, slices.Equal(read.Finalizers, want), "finalizers = %v after a patch with a stale UID, want %v unchanged", read.Finalizers, want)
}

// The Reconciler removes the finalizer of a pod it scales down with the cached
// resourceVersion as a precondition, so that a pod that finished meanwhile is not
// stripped uncounted.
func (k *conformance) patchStaleResourceVersion(t *testing.T) {
	pod := k.create(t, k.pod(finalizers.Name))
	fresh, err := k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"changed":"yes"}}}`))
	must(t, err, "PatchPod(labels)")
	patch := func(rv string) []byte {
		return []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["` + finalizers.Name + `"],"uid":"` + string(pod.UID) + `","resourceVersion":"` + rv + `"}}`)
	}
	_, err = k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, types.StrategicMergePatchType, patch(pod.ResourceVersion))
	check(t, apierrors.IsConflict(err), "PatchPod(stale resourceVersion) error = %v, want Conflict", err)
	read, err := k.f.GetPod(t.Context(), pod.Namespace, pod.Name)
	must(t, err, "GetPod")
	check(t, owner.BatchJob.HasFinalizer(read), "finalizers = %v after a patch with a stale resourceVersion, want unchanged", read.Finalizers)

	got, err := k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, types.StrategicMergePatchType, patch(fresh.ResourceVersion))
	must(t, err, "PatchPod(current resourceVersion)")
	check(t, !owner.BatchJob.HasFinalizer(got), "finalizers = %v, want the tracking finalizer removed", got.Finalizers)
}

func (k *conformance) patchNotFound(t *testing.T) {
	patch := finalizers.RemovalPatch(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: staleUID}}, finalizers.Name)
	_, err := k.f.Client.PatchPod(t.Context(), k.f.Namespace, "conformance-missing-pod", patch.Type, patch.Data)
	check(t, apierrors.IsNotFound(err), "PatchPod(missing) error = %v, want NotFound", err)
	check(t, reconcile.IsPodGone(err), "IsPodGone(%v) = false, want true", err)
}

func (k *conformance) adoptRelease(t *testing.T) {
	job := k.job(t)
	orphan := k.pod(otherFinalizer)
	orphan.Labels = map[string]string{"app": "conformance"}
	pod := k.create(t, orphan)

	adopt := reconcile.AdoptPatch(owner.BatchJob, job, pod)
	got, err := k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, adopt.Type, adopt.Data)
	must(t, err, "PatchPod(adopt)")
	ref := metav1.GetControllerOf(got)
	if ref == nil {
		t.Fatalf("no controller reference after adoption: ownerReferences = %v", got.OwnerReferences)
	}
	check(t, ref.UID == job.UID && ref.Name == job.Name && ref.Kind == "Job" && ref.APIVersion == "batch/v1",
		"controller reference after adoption = %+v, want batch/v1 Job %s uid %s", *ref, job.Name, job.UID)
	check(t, ptr.Deref(ref.BlockOwnerDeletion, false), "blockOwnerDeletion of the adopted pod's controller reference is not true")
	want := []string{otherFinalizer, finalizers.Name}
	check(t, sameSet(got.Finalizers, want), "finalizers after adoption = %v, want %v", got.Finalizers, want)
	check(t, got.Labels["app"] == "conformance", "labels after adoption = %v, want app=conformance kept", got.Labels)
	// The Reconciler sends its next write to an adopted pod with the resourceVersion
	// the adoption returned: it must be the stored one.
	check(t, got.ResourceVersion != "" && got.ResourceVersion != pod.ResourceVersion,
		"resourceVersion returned by the adoption = %q, want the new stored version (was %q)", got.ResourceVersion, pod.ResourceVersion)
	read, err := k.f.GetPod(t.Context(), pod.Namespace, pod.Name)
	must(t, err, "GetPod after adoption")
	check(t, read.ResourceVersion == got.ResourceVersion, "resourceVersion returned by the adoption = %q, stored %q", got.ResourceVersion, read.ResourceVersion)

	// A release sent for an older version of the pod changes nothing.
	stale := reconcile.ReleasePatch(owner.BatchJob, job.UID, pod)
	_, err = k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, stale.Type, stale.Data)
	check(t, apierrors.IsConflict(err), "PatchPod(release, stale resourceVersion) error = %v, want Conflict", err)

	release := reconcile.ReleasePatch(owner.BatchJob, job.UID, got)
	got, err = k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, release.Type, release.Data)
	must(t, err, "PatchPod(release)")
	check(t, len(got.OwnerReferences) == 0, "owner references after release = %v, want none", got.OwnerReferences)
	want = []string{otherFinalizer}
	check(t, sameSet(got.Finalizers, want), "finalizers after release = %v, want %v (the tracking finalizer goes with the owner reference)", got.Finalizers, want)
}

func (k *conformance) adoptStaleUID(t *testing.T) {
	job := k.job(t)
	pod := k.create(t, k.pod())
	stale := pod.DeepCopy()
	stale.UID = staleUID
	adopt := reconcile.AdoptPatch(owner.BatchJob, job, stale)
	_, err := k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, adopt.Type, adopt.Data)
	check(t, reconcile.IsPodGone(err), "PatchPod(adopt, stale pod UID) error = %v, want Invalid on metadata.uid", err)
	read, err := k.f.GetPod(t.Context(), pod.Namespace, pod.Name)
	must(t, err, "GetPod")
	check(t, len(read.OwnerReferences) == 0, "owner references = %v after a rejected adoption, want none", read.OwnerReferences)
	check(t, !owner.BatchJob.HasFinalizer(read), "finalizers = %v after a rejected adoption, want no tracking finalizer", read.Finalizers)
}

// The Reconciler reads a pod back after a creation refused with AlreadyExists, to
// learn whether its controller is the owner: the read must show the latest write (a
// release), which a cached read may not.
func (k *conformance) getLive(t *testing.T) {
	job := k.job(t)
	orphan := k.pod()
	orphan.Labels = map[string]string{"app": "conformance"}
	pod := k.create(t, orphan)
	adopt := reconcile.AdoptPatch(owner.BatchJob, job, pod)
	adopted, err := k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, adopt.Type, adopt.Data)
	must(t, err, "PatchPod(adopt)")
	got, err := k.f.Client.GetPod(t.Context(), pod.Namespace, pod.Name)
	must(t, err, "GetPod(adopted)")
	check(t, got.UID == pod.UID, "GetPod().UID = %q, want %q", got.UID, pod.UID)
	ref := metav1.GetControllerOf(got)
	check(t, ref != nil && ref.UID == job.UID, "GetPod() right after the adoption: controller reference = %v, want the Job %s", ref, job.UID)
	release := reconcile.ReleasePatch(owner.BatchJob, job.UID, adopted)
	released, err := k.f.Client.PatchPod(t.Context(), pod.Namespace, pod.Name, release.Type, release.Data)
	must(t, err, "PatchPod(release)")
	got, err = k.f.Client.GetPod(t.Context(), pod.Namespace, pod.Name)
	must(t, err, "GetPod(released)")
	check(t, metav1.GetControllerOf(got) == nil, "GetPod() right after the release: controller reference = %v, want none", metav1.GetControllerOf(got))
	check(t, got.ResourceVersion == released.ResourceVersion, "GetPod().ResourceVersion = %q, want %q (the release's)", got.ResourceVersion, released.ResourceVersion)
}

func (k *conformance) getNotFound(t *testing.T) {
	_, err := k.f.Client.GetPod(t.Context(), k.f.Namespace, "conformance-missing-pod")
	check(t, apierrors.IsNotFound(err), "GetPod(missing) error = %v, want NotFound", err)
}

func (k *conformance) statusConflict(t *testing.T) {
	job := k.job(t)
	write := job.DeepCopy()
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	write.Status.Conditions = []batchv1.JobCondition{{
		Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended", Message: "Job suspended",
		LastProbeTime: now, LastTransitionTime: now,
	}}
	got, err := k.f.Client.UpdateJobStatus(t.Context(), write)
	must(t, err, "UpdateJobStatus")
	check(t, got.ResourceVersion != job.ResourceVersion, "resourceVersion unchanged (%s) after a status write", got.ResourceVersion)
	check(t, len(got.Status.Conditions) == 1, "conditions after the write = %v, want the Suspended condition", got.Status.Conditions)

	stale := job.DeepCopy() // carries the resourceVersion before the write
	stale.Status.Failed = 1
	_, err = k.f.Client.UpdateJobStatus(t.Context(), stale)
	check(t, apierrors.IsConflict(err), "UpdateJobStatus(stale resourceVersion) error = %v, want Conflict", err)
	read, err := k.f.GetJob(t.Context(), job.Namespace, job.Name)
	must(t, err, "GetJob")
	check(t, read.Status.Failed == 0, "status.failed = %d after a conflicting write, want 0", read.Status.Failed)
}

func (k *conformance) statusInvalid(t *testing.T) {
	job := k.job(t)
	write := job.DeepCopy()
	write.Status.Active = 0
	write.Status.Ready = ptr.To[int32](2) // ready may not exceed active
	_, err := k.f.Client.UpdateJobStatus(t.Context(), write)
	check(t, apierrors.IsInvalid(err), "UpdateJobStatus(ready > active) error = %v, want Invalid", err)
}

func (k *conformance) statusNotFound(t *testing.T) {
	job := NewJob(k.f.Namespace, "conformance-missing-job", 1, 1)
	job.ResourceVersion = "1"
	_, err := k.f.Client.UpdateJobStatus(t.Context(), job)
	check(t, apierrors.IsNotFound(err), "UpdateJobStatus(missing) error = %v, want NotFound", err)
}
