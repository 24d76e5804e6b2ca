package sim

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// relabelPatch gives a pod a controller-uid label that matches no Job's selector.
var relabelPatch = []byte(`{"metadata":{"labels":{"` + batchv1.ControllerUidLabel + `":"released-by-sim"}}}`)

// relabelOrphanPatch is relabelPatch by someone who also takes the pod from its
// owner: no controller reference, no finalizer (world.relabelOrphans).
var relabelOrphanPatch = []byte(`{"metadata":{"labels":{"` + batchv1.ControllerUidLabel + `":"released-by-sim"},"ownerReferences":null,"finalizers":null}}`)

// deleteOwner deletes the owner from the cluster at once; its pods stay until the
// garbage collector runs.
func (w *world) deleteOwner() {
	if w.model.deleted {
		return
	}
	var err error
	if w.tasks {
		err = w.taskStore.Delete(w.ns, w.name)
	} else {
		err = w.cluster.Jobs().Delete(w.ns, w.name)
	}
	if err == nil {
		w.clean = 0
	}
}

// addOrphan creates an orphan pod from the owner's template, as another actor
// would: the template's labels (so it matches a Job's generated selector), no
// controller reference and no finalizer; a completion index when a.Index is set;
// then the kubelet moves it to the phase a.N names.
func (w *world) addOrphan(a Action) {
	job := w.model.job
	if w.model.deleted || job == nil {
		return
	}
	w.orphans++
	tmpl := job.Spec.Template.DeepCopy()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   w.ns,
			Name:        fmt.Sprintf("%s-orphan-%d", w.name, w.orphans),
			Labels:      tmpl.Labels,
			Annotations: tmpl.Annotations,
		},
		Spec: tmpl.Spec,
	}
	if a.Index != nil {
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		ix := strconv.Itoa(*a.Index)
		pod.Labels[batchv1.JobCompletionIndexAnnotation] = ix
		pod.Annotations[batchv1.JobCompletionIndexAnnotation] = ix
	}
	if _, err := w.cluster.AddPod(pod); err != nil {
		return
	}
	k := w.cluster.Kubelet()
	if a.N >= OrphanRunning {
		_ = k.Run(w.ns, pod.Name)
	}
	switch a.N {
	case OrphanSucceeded:
		_ = k.Succeed(w.ns, pod.Name)
	case OrphanFailed:
		_ = k.Fail(w.ns, pod.Name, 1)
	}
	w.clean = 0
}

// pendingIndex finds the oldest queued event of pod ordinal n (the Job when n is
// 0); with deleted, only a Deleted event.
func (w *world) pendingIndex(n int, deleted bool) int {
	var name string
	if n > 0 {
		ps := w.pod(n)
		if ps == nil {
			return -1
		}
		name = ps.name
	}
	for i, ev := range w.cluster.Cache().Pending() {
		if deleted && ev.Type != watch.Deleted {
			continue
		}
		if n == 0 && ev.Owner != nil {
			return i
		}
		if n > 0 && ev.Pod != nil && ev.Pod.Name == name {
			return i
		}
	}
	return -1
}
