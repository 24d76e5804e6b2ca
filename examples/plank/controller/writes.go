package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

// record writes s on rj. With holdCompletion a Complete is left for later
// (the pod is deleted first).
func (r *Reconciler) record(ctx context.Context, rj *v1alpha1.RunJob, s runplan.Status, holdCompletion bool) error {
	now := metav1.NewTime(r.cfg.Clock.Now())
	return r.writeStatus(ctx, rj, func(st *v1alpha1.RunJobStatus) {
		if s.State != "" {
			st.State = v1alpha1.State(s.State)
		}
		if s.State == runplan.StatePending {
			st.PodName = podName(rj)
		}
		if s.Description != "" {
			st.Description = s.Description
		}
		if !s.PendingTime.IsZero() {
			st.PendingTime = &metav1.Time{Time: s.PendingTime}
		}
		if s.Revivals != nil {
			st.Revivals, st.RevivedPodUID = int32(s.Revivals.Count), s.Revivals.Pod
		}
		if s.Complete && !holdCompletion {
			st.CompletionTime = &now
		}
	})
}

// supersede records StateAborted and the description on the run s names, as
// the cache shows it; that run's own sync deletes its pod and completes it.
func (r *Reconciler) supersede(ctx context.Context, runs *v1alpha1.RunJobList, s runplan.Supersession) error {
	for i := range runs.Items {
		if o := &runs.Items[i]; o.UID == s.UID {
			log.FromContext(ctx).Info("Aborting superseded run", "run", o.Name)
			return r.writeStatus(ctx, o.DeepCopy(), func(st *v1alpha1.RunJobStatus) {
				st.State, st.Description = v1alpha1.StateAborted, s.Description
			})
		}
	}
	return nil
}

// podEffects applies what the plan asks of the pod: release the reporter
// finalizers, then delete it (with its UID as a precondition when known, so
// that a replacement with the same name survives), ignoring a pod already gone.
func (r *Reconciler) podEffects(ctx context.Context, rj *v1alpha1.RunJob, e runplan.PodEffects) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rj.Namespace, Name: podName(rj), UID: e.UID}}
	if e.ReleaseFinalizers && len(r.cfg.ReporterFinalizers) > 0 {
		if err := r.releaseFinalizers(ctx, pod); err != nil {
			return err
		}
	}
	if !e.Delete {
		return nil
	}
	var opts []client.DeleteOption
	if e.UID != "" {
		opts = append(opts, client.Preconditions{UID: &e.UID})
	}
	err := r.client.Delete(ctx, pod, opts...)
	if apierrors.IsNotFound(err) || (e.UID != "" && apierrors.IsConflict(err)) {
		return nil
	}
	if err == nil {
		log.FromContext(ctx).Info("Deleted pod", "pod", pod.Name)
	}
	return err
}

// releaseFinalizers removes Config.ReporterFinalizers from the pod named like
// pod (with the same UID), reading it from the cache.
func (r *Reconciler) releaseFinalizers(ctx context.Context, pod *corev1.Pod) error {
	var cur corev1.Pod
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(pod), &cur); err != nil {
		return client.IgnoreNotFound(err)
	}
	if pod.UID != "" && cur.UID != pod.UID {
		return nil
	}
	kept := make([]string, 0, len(cur.Finalizers))
	for _, f := range cur.Finalizers {
		if !containsString(r.cfg.ReporterFinalizers, f) {
			kept = append(kept, f)
		}
	}
	if len(kept) == len(cur.Finalizers) {
		return nil
	}
	updated := cur.DeepCopy()
	updated.Finalizers = kept
	err := r.client.Patch(ctx, updated, client.MergeFromWithOptions(&cur, client.MergeFromWithOptimisticLock{}))
	if err == nil {
		log.FromContext(ctx).Info("Released finalizers", "pod", cur.Name, "finalizers", r.cfg.ReporterFinalizers)
	}
	return client.IgnoreNotFound(err)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// getPod returns the run's pod from the cache, or nil when there is none.
func (r *Reconciler) getPod(ctx context.Context, rj *v1alpha1.RunJob) (*corev1.Pod, error) {
	var pod corev1.Pod
	err := r.client.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: podName(rj)}, &pod)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &pod, nil
}

// createPod creates the run's pod and waits until the pod cache has it, or the
// next sync would find no pod and create it again.
func (r *Reconciler) createPod(ctx context.Context, rj *v1alpha1.RunJob) error {
	pod := newPod(rj)
	if err := r.client.Create(ctx, pod); err != nil {
		return err
	}
	log.FromContext(ctx).Info("Created pod", "pod", pod.Name)
	key := client.ObjectKeyFromObject(pod)
	read := func(ctx context.Context) (string, error) {
		var cached corev1.Pod
		if err := r.client.Get(ctx, key, &cached); err != nil {
			return "", err
		}
		return cached.ResourceVersion, nil
	}
	return reconcile.WaitForCacheSync(ctx, "Pod "+key.String(), pod.ResourceVersion, read, r.cfg.CacheSync)
}

// writeStatus applies mutate to a copy of rj's status and, when that changes
// it, writes it (with rj's resourceVersion as precondition), waits until the
// cache shows the write, and then updates rj in place. rj is a copy owned by
// this reconcile, never an object shared with the cache.
func (r *Reconciler) writeStatus(ctx context.Context, rj *v1alpha1.RunJob, mutate func(*v1alpha1.RunJobStatus)) error {
	updated := rj.DeepCopy()
	mutate(&updated.Status)
	if equality.Semantic.DeepEqual(updated.Status, rj.Status) {
		return nil
	}
	if err := r.client.Status().Update(ctx, updated); err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(updated)
	read := func(ctx context.Context) (string, error) {
		var cached v1alpha1.RunJob
		if err := r.client.Get(ctx, key, &cached); err != nil {
			return "", err
		}
		return cached.ResourceVersion, nil
	}
	*rj = *updated
	return reconcile.WaitForCacheSync(ctx, "RunJob "+key.String(), updated.ResourceVersion, read, r.cfg.CacheSync)
}
