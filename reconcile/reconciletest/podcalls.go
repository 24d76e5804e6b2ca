package reconciletest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

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
	created, err := c.createPod(pod)
	if created != nil && c.onCreate != nil {
		c.onCreate(created)
	}
	if err != nil {
		return nil, err
	}
	return created, nil
}

// createPod is CreatePod under the lock: it returns a copy of the pod it wrote,
// also when the caller gets an error after the write.
func (c *Cluster) createPod(pod *corev1.Pod) (*corev1.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := Call{Op: OpCreatePod, Namespace: pod.Namespace, Name: pod.Name, GenerateName: pod.GenerateName, Pod: pod.DeepCopy()}
	out := c.decideLocked(call)
	c.delayLocked(out.Delay)
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
	return created.DeepCopy(), out.Err
}

func (c *Cluster) createPodLocked(in *corev1.Pod) (*corev1.Pod, error) {
	if in.Namespace == "" {
		return nil, apierrors.NewInvalid(podKind, in.Name, field.ErrorList{field.Required(field.NewPath("metadata", "namespace"), "")})
	}
	if c.terminating.Has(in.Namespace) {
		return nil, namespaceTerminatingError(in.Namespace)
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
	c.emitLocked(watch.Added, pod)
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
	c.delayLocked(out.Delay)
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
	g := defaultGracePeriod
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
	c.emitLocked(watch.Modified, pod)
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
	c.emitLocked(watch.Deleted, final)
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
	c.delayLocked(out.Delay)
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
	// Only metadata changes, so only metadata is merged: the spec and status of a
	// pod are most of its JSON, and a patch costs its round trip.
	orig, err := json.Marshal(&corev1.Pod{TypeMeta: cur.TypeMeta, ObjectMeta: cur.ObjectMeta})
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
