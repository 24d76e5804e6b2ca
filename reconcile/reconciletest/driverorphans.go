package reconciletest

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/reconcile"
)

// CleanOrphans runs the orphan cleanup once over the cached pods that carry the
// tracking finalizer of the Reconciler's owner kind: each goes to
// Reconciler.CleanOrphan with the facts of the owner its controller reference
// names, read from the Cache and, when the Cache has none, confirmed with a read
// from its Store (a pod can reach a cache before its owner).
// It returns how many finalizers it removed, and the errors of the others.
func (d *Driver) CleanOrphans(ctx context.Context) (int, error) {
	if d.Reconciler == nil {
		return 0, fmt.Errorf("%w: CleanOrphans needs a Reconciler", reconcile.ErrInvalidArgument)
	}
	kind := d.kind()
	cache := d.Cluster.Cache()
	n := 0
	var errs []error
	for _, p := range cache.Pods("") {
		if !kind.HasFinalizer(p) {
			continue
		}
		var own *finalizers.OrphanOwner
		if ref := kind.ControllerOf(p); ref != nil {
			own = d.ownerFacts(p.Namespace, ref.Name)
		}
		dec, err := d.Reconciler.CleanOrphan(ctx, p, own)
		switch {
		case err != nil:
			errs = append(errs, err)
		case dec.Remove:
			n++
		}
	}
	return n, errors.Join(errs...)
}

// ownerFacts returns the orphan facts of the owner namespace/name from the Cache or,
// failing that, its Store; nil when neither has it.
func (d *Driver) ownerFacts(namespace, name string) *finalizers.OrphanOwner {
	src := d.Cluster.owners()
	if src == nil {
		return nil
	}
	if f := src.cachedFacts(namespace, name); f != nil {
		return f
	}
	return src.liveFacts(namespace, name)
}

// CountPods counts the stored pods controlled by job, by phase.
func (c *Cluster) CountPods(job *batchv1.Job) map[corev1.PodPhase]int {
	out := map[corev1.PodPhase]int{}
	for _, p := range c.ListPods(job.Namespace) {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == job.UID {
			out[p.Status.Phase]++
		}
	}
	return out
}
