package reconcile

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/plan"
)

// The first step of a sync: adopt and release pods (see execution.claim).

// claimOp is an adoption or a release, with the words of its log lines and errors
// (written out: a message built from the verb read "releaseed").
type claimOp struct {
	verb   string // of the error: "adopt pod ns/name: ..."
	done   string // logged when the patch succeeded
	noun   string // "Pod gone before its <noun>"
	gerund string // "not <gerund> it in this sync"
}

var (
	adoption = claimOp{verb: "adopt", done: "Pod adopted", noun: "adoption", gerund: "adopting"}
	release  = claimOp{verb: "release", done: "Pod released", noun: "release", gerund: "releasing"}
)

// ownerStillLive reads the owner through Config.ReadOwner before adoptions. It
// returns false, with a retry noted, when the owner is gone, was recreated or
// is being deleted; false with the error when the read failed.
func (ex *execution) ownerStillLive() (bool, error) {
	o := ex.orig
	live, err := ex.r.cfg.ReadOwner(ex.ctx, o.Namespace, o.Name)
	if err != nil {
		return false, fmt.Errorf("read the owner before adopting pods: %w", err)
	}
	if live == nil || live.UID != o.UID || live.Deleting {
		ex.log.V(2).Info("Owner gone or being deleted, as read from the API server; not adopting", "orphans", len(ex.plan.Adopt))
		ex.retry("the owner is gone or being deleted, as read before adopting")
		return false, nil
	}
	return true, nil
}

// claim adopts and releases pods. It stops the sync (stop true) when a pod was not
// found, or changed before its adoption or release (a Conflict): the plan counted it (or not),
// so it is recomputed on the next sync. It records what the adoptions returned
// (noteAdopted) for the later writes of the sync.
func (ex *execution) claim() (stop bool, err error) {
	p := ex.plan
	if len(p.Adopt) > 0 && ex.r.cfg.ReadOwner != nil {
		if ok, err := ex.ownerStillLive(); !ok {
			return true, err
		}
	}
	type call struct {
		a     plan.PodAction
		patch finalizers.Patch
		op    claimOp
	}
	calls := make([]call, 0, len(p.Adopt)+len(p.Release))
	for _, a := range p.Adopt {
		calls = append(calls, call{a, AdoptPatch(ex.r.cfg.Owner, identity(ex.orig), a.Pod), adoption})
	}
	for _, a := range p.Release {
		calls = append(calls, call{a, ReleasePatch(ex.r.cfg.Owner, ex.orig.UID, a.Pod), release})
	}
	var errs []error
	for _, c := range calls {
		pod := c.a.Pod
		out, err := ex.r.pods.PatchPod(ex.ctx, pod.Namespace, pod.Name, c.patch.Type, c.patch.Data)
		switch {
		case err == nil:
			ex.log.V(2).Info(c.op.done, "pod", pod.Name, "reason", c.a.Reason)
			if c.op == adoption {
				ex.noteAdopted(pod, out)
				ex.res.Adopted++
			} else {
				ex.res.Released++
				// The pod keeps its name, which its index's next pod must not take:
				// remembered as taken, as a refused creation found held would be.
				ex.r.noteRefusedName(ex.key, pod.Name, ex.r.cfg.Clock.Now(), true)
			}
		case IsPodGone(err):
			ex.log.V(2).Info("Pod gone before its "+c.op.noun, "pod", pod.Name)
			stop = true
		case apierrors.IsConflict(err):
			// The pod changed since the cache showed it (its adoption or release
			// carries that resourceVersion): the plan may be wrong about it, or the
			// cache may be behind an earlier adoption. Look again.
			ex.log.V(2).Info("Pod changed since the plan; not "+c.op.gerund+" it in this sync", "pod", pod.Name)
			stop = true
		default:
			errs = append(errs, fmt.Errorf("%s pod %s/%s: %w", c.op.verb, pod.Namespace, pod.Name, err))
		}
	}
	if len(errs) > 0 {
		return true, errors.Join(errs...)
	}
	if stop {
		ex.retry("a pod vanished or changed before its adoption or release")
	}
	return stop, nil
}

// noteAdopted remembers the resourceVersion that the adoption of cached returned in
// out, when the adoption is all that changed since the cache showed the pod: a later
// write of this sync that carries it as a precondition then still means "the pod is
// as the plan saw it". When anything else changed (the pod finished, was relabelled,
// is being deleted), nothing is remembered: the later write carries the cached
// version, fails with a Conflict and the next sync decides on the new state.
func (ex *execution) noteAdopted(cached, out *corev1.Pod) {
	if out == nil || out.UID != cached.UID || out.ResourceVersion == "" || cached.ResourceVersion == "" ||
		!onlyClaimChanged(cached, out) {
		return
	}
	if ex.adopted == nil {
		ex.adopted = map[types.UID]string{}
	}
	ex.adopted[cached.UID] = out.ResourceVersion
}

// onlyClaimChanged reports whether after differs from before only in what an
// adoption patch writes (owner references, finalizers) and in what any write changes
// (resourceVersion), among what the decisions read: both sides are compared as
// TrimPod leaves them, since a cache may hold trimmed pods while the API server
// answers with whole ones (and managedFields, which TrimPod drops too).
func onlyClaimChanged(before, after *corev1.Pod) bool {
	b, a := *before, *after // shallow copies: TrimPod only assigns their fields
	TrimPod(&b)
	TrimPod(&a)
	for _, m := range []*metav1.ObjectMeta{&a.ObjectMeta, &b.ObjectMeta} {
		m.OwnerReferences, m.Finalizers, m.ResourceVersion = nil, nil, ""
	}
	return equality.Semantic.DeepEqual(a.ObjectMeta, b.ObjectMeta) &&
		equality.Semantic.DeepEqual(a.Spec, b.Spec) &&
		equality.Semantic.DeepEqual(a.Status, b.Status)
}

// writeVersion is the resourceVersion that a write to pod in this sync carries as its
// precondition: the one its adoption in this sync returned, else the cached one.
func (ex *execution) writeVersion(pod *corev1.Pod) string {
	if v, ok := ex.adopted[pod.UID]; ok {
		return v
	}
	return pod.ResourceVersion
}
