package reconcile

import (
	"encoding/json"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
)

type patchMeta struct {
	Metadata patchObjectMeta `json:"metadata"`
}

type patchObjectMeta struct {
	OwnerReferences  []any     `json:"ownerReferences,omitempty"`
	UID              types.UID `json:"uid,omitempty"`
	Finalizers       []string  `json:"finalizers,omitempty"`
	DeleteFinalizers []string  `json:"$deleteFromPrimitiveList/finalizers,omitempty"`
	ResourceVersion  string    `json:"resourceVersion,omitempty"`
}

// AdoptPatch returns the strategic merge patch that makes obj, an owner of kind, the
// controller of pod and adds kind's tracking finalizer, keeping the pod's other owner references and
// finalizers:
//
//	{"metadata":{"ownerReferences":[{...,"controller":true,"blockOwnerDeletion":true,"uid":"<owner>"}],
//	 "uid":"<pod>","finalizers":["batch.kubernetes.io/job-tracking"]}}
//
// The pod's UID is a precondition, as in finalizers.RemovalPatch: a pod recreated
// under the same name is not adopted (the API server answers 422 Invalid). The API
// server also refuses to add a finalizer to a pod that is being deleted, so terminating
// pods are not adopted (plan.Compute never asks for that).
//
// When pod has a resourceVersion, the patch carries it as a second precondition: the
// adoption applies only to the version the plan saw as an orphan, and fails with a
// Conflict if the pod changed since. Upstream sends none; here it keeps a sync from a
// stale cache (one that still shows the pod as the orphan it was before an earlier
// sync adopted it, counted it and removed its finalizer) from putting the tracking
// finalizer back on a pod already counted, which the next sync would count again.
// The Reconciler stops the sync on that Conflict, as for a release.
//
// The pod the API server returns carries the resourceVersion of the adoption; the
// Reconciler sends the later writes of the same sync to that pod (a finalizer
// removal) with it, so that its own adoption does not turn them into Conflicts.
func AdoptPatch(kind owner.Kind, obj metav1.Object, pod *corev1.Pod) finalizers.Patch {
	ref := kind.NewControllerRef(obj)
	p := patchMeta{Metadata: patchObjectMeta{
		OwnerReferences: []any{ref},
		UID:             pod.UID,
		Finalizers:      []string{kind.Finalizer},
		ResourceVersion: pod.ResourceVersion,
	}}
	return finalizers.Patch{Type: types.StrategicMergePatchType, Data: mustJSON(p)}
}

// ReleasePatch returns the strategic merge patch that releases pod from the owner of
// kind with UID uid: it removes that owner reference and kind's tracking finalizer
// in one write, keeping every other owner reference and finalizer:
//
//	{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"<job>"}],"uid":"<pod>",
//	 "$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"],"resourceVersion":"<rv>"}}
//
// The Job controller of Kubernetes 1.37 releases a pod the same way (its controller
// reference manager is built with the tracking finalizer, and its release patch
// deletes both), so the orphan cleanup has nothing left to do for a released pod.
//
// Preconditions: the pod's UID, as in finalizers.RemovalPatch (NotFound or Invalid on
// metadata.uid mean the pod is gone), and, when pod has one, its resourceVersion: the
// patch is applied only to the version the plan decided on (owned by the Job, labels
// no longer matching), and fails with a Conflict if the pod changed since. Upstream
// sends no resourceVersion; here it keeps a release sent from a stale cache (the pod
// was released already and another Job has adopted it since) from stripping the other
// Job's finalizer.
//
// Crash safety. A released pod is no longer the Job's: the plan neither counts it nor
// records it, whether or not it finished, and a pod recorded earlier in
// uncountedTerminatedPods is counted from that list by the next status write, once,
// since its UID leaves the list in that write. The patch is one write, so the API
// server applies all of it or nothing; there is no state in between (released with
// the finalizer, or stripped while still owned) for a crash to expose:
//
//   - accepted: the pod has neither the owner reference nor the finalizer; the sync
//     goes on and settles a recorded UID in its status write;
//   - refused (a Conflict, a server error): nothing changed; the Reconciler stops the
//     sync before any status write, and the next sync decides again from what the
//     cache then shows;
//   - timed out, or the answer lost: the sync stops as well; the pod is then either
//     released (no longer listed for the Job: a recorded UID is counted once) or
//     untouched (released again by the next sync). A cache that still shows the
//     version before an applied release gets the pod released again, with that
//     version: a Conflict, which requeues the sync without a status write until the
//     cache catches up; never a count.
//
// The pod is therefore never counted twice, and no completion recorded for the Job
// is lost.
func ReleasePatch(kind owner.Kind, uid types.UID, pod *corev1.Pod) finalizers.Patch {
	p := patchMeta{Metadata: patchObjectMeta{
		OwnerReferences:  []any{map[string]any{"$patch": "delete", "uid": uid}},
		UID:              pod.UID,
		DeleteFinalizers: []string{kind.Finalizer},
		ResourceVersion:  pod.ResourceVersion,
	}}
	return finalizers.Patch{Type: types.StrategicMergePatchType, Data: mustJSON(p)}
}

// unchangedRemovalPatch is finalizers.RemovalPatch with version, the pod's
// resourceVersion, as a second precondition: the API server answers Conflict if the
// pod changed since the plan saw it. A scale-down uses it, so that a pod which
// finished after the plan chose it keeps its finalizer and gets counted instead of
// being stripped. version is the cached one, or the one an adoption in the same sync
// returned (see execution.writeVersion); empty means no such precondition.
func unchangedRemovalPatch(pod *corev1.Pod, version, finalizer string) finalizers.Patch {
	if version == "" {
		return finalizers.RemovalPatch(pod, finalizer)
	}
	p := struct {
		Metadata struct {
			Delete          []string  `json:"$deleteFromPrimitiveList/finalizers"`
			UID             types.UID `json:"uid,omitempty"`
			ResourceVersion string    `json:"resourceVersion"`
		} `json:"metadata"`
	}{}
	p.Metadata.Delete = []string{finalizer}
	p.Metadata.UID = pod.UID
	p.Metadata.ResourceVersion = version
	return finalizers.Patch{Type: types.StrategicMergePatchType, Data: mustJSON(p)}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // the values are plain strings and booleans
		panic(err)
	}
	return b
}

// IsPodGone reports whether err, returned by a PatchPod that carried the pod's UID as
// a precondition, proves that the pod it was meant for is gone: NotFound, or Invalid
// on metadata.uid (a new pod took the name). A finalizer removal that fails this way
// counts as done. Any other error (a Conflict included) proves nothing.
func IsPodGone(err error) bool {
	if err == nil {
		return false
	}
	if apierrors.IsNotFound(err) {
		return true
	}
	if apierrors.IsInvalid(err) {
		var st apierrors.APIStatus
		if errors.As(err, &st) && st.Status().Details != nil {
			for _, c := range st.Status().Details.Causes {
				if c.Field == "metadata.uid" {
					return true
				}
			}
		}
	}
	return false
}

// isDeleteGone reports whether a DELETE with a UID precondition failed because the pod
// is gone: NotFound, or Conflict when another pod took the name.
func isDeleteGone(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsConflict(err)
}
