package plan

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// Default caps per sync, as in the upstream controller.
const (
	// DefaultMaxCreatesPerSync caps the pods created in one sync.
	DefaultMaxCreatesPerSync = 500
	// DefaultMaxDeletesPerSync caps the pods deleted in one sync.
	DefaultMaxDeletesPerSync = 500
	// DefaultMaxUncounted caps the entries of status.uncountedTerminatedPods (plus new
	// completed indexes) recorded in one sync.
	DefaultMaxUncounted = 500
)

// Input is everything one sync of an owner of pods needs. Compute never modifies
// it.
type Input struct {
	// Workload is the owner as read from the cache: a custom resource converted by
	// its controller, or a batch/v1 Job (JobWorkload). Required.
	Workload *Workload
	// Pods are the pods owned by the workload (controller reference with its UID)
	// and the orphans that match its selector, as read from the cache. Pods owned by
	// another controller are ignored.
	Pods []*corev1.Pod
	// ControllerName is the name this controller answers to in spec.managedBy. It is
	// required: a Job is handled when spec.managedBy equals it, or when
	// spec.managedBy is unset and ControllerName is batchv1.JobControllerName; an
	// owner of another kind is handled when its managedBy equals it or is unset.
	ControllerName string
	// ExpectationsSatisfied says whether every creation and deletion this controller
	// issued for the Job has been observed in the cache. When false the plan creates
	// and deletes nothing and does not finish the Job (a pod may be missing from
	// Pods).
	ExpectationsSatisfied bool
	// PendingFinalizerRemovals holds the UIDs of pods whose tracking-finalizer
	// removal the API server accepted but the cache does not show yet. Those pods are
	// treated as already without the finalizer.
	PendingFinalizerRemovals sets.Set[types.UID]
	// TakenPodNames holds names of pods that exist in the API server but are not
	// the Job's (a pod the Job released keeps its name): names a creation was
	// refused under with AlreadyExists, found held by such a pod by a live read
	// (reconcile does it), or refused for longer than the pod's event could take
	// with no listed pod of that name. The plan names no pod so: an index's pod
	// gets the next name of its sequence instead (indexes.NextPodName).
	TakenPodNames sets.Set[string]
	// Backoff is the Job's failure record kept by the caller (zero when none, for
	// example after a restart). The plan merges it with a record rebuilt from Pods.
	Backoff plainbackoff.Record
	// Now is the time of the sync.
	Now time.Time
	// Options tune the caps and the backoff; the zero value means upstream's values.
	Options Options
	// Owner is the kind of object that owns the pods and the tracking finalizer its
	// controller uses: the controller reference of created pods, and which pods are
	// tracked, are this kind's. The zero value means owner.BatchJob. Ownership is by
	// controller-reference UID (Workload.UID), whatever the kind.
	Owner owner.Kind
	// Facts, when set, remembers what Compute read of each pod for the next
	// Compute of the same owner, which then reads only the pods it has not seen
	// (new pointers). Only for pods that nobody changes in place, such as an
	// informer's: see FactCache. Nil means every pod is read. Compute updates it.
	Facts *FactCache
}

// workload returns in.Workload, or an error naming the field when it is nil.
func (in *Input) workload() (*Workload, error) {
	if in.Workload == nil {
		return nil, fmt.Errorf("%w: Input.Workload is nil: set it (JobWorkload for a batch/v1 Job)", ErrInvalidJob)
	}
	return in.Workload, nil
}

// kind returns Owner, or owner.BatchJob when it is the zero value.
func (in *Input) kind() owner.Kind {
	if in.Owner == (owner.Kind{}) {
		return owner.BatchJob
	}
	return in.Owner
}

// Options are the caps and delays of a sync. The zero value means the upstream
// controller's values.
type Options struct {
	// MaxCreatesPerSync caps pod creations per sync; 0 means DefaultMaxCreatesPerSync.
	MaxCreatesPerSync int
	// MaxDeletesPerSync caps pod deletions per sync (suspend included); 0 means
	// DefaultMaxDeletesPerSync.
	MaxDeletesPerSync int
	// MaxUncounted caps status.uncountedTerminatedPods; 0 means DefaultMaxUncounted.
	MaxUncounted int
	// Backoff is the pod failure backoff; the zero value means 10s doubling to 10m.
	Backoff plainbackoff.Policy
	// MinRequeue is the shortest requeue for a backoff wait; 0 means one second, as
	// upstream. It does not apply to the active deadline, which is requeued exactly.
	MinRequeue time.Duration
}

func (o Options) maxCreates() int { return orDefault(o.MaxCreatesPerSync, DefaultMaxCreatesPerSync) }
func (o Options) maxDeletes() int { return orDefault(o.MaxDeletesPerSync, DefaultMaxDeletesPerSync) }
func (o Options) maxUncounted() int {
	return orDefault(o.MaxUncounted, DefaultMaxUncounted)
}
func (o Options) minRequeue() time.Duration {
	if o.MinRequeue <= 0 {
		return time.Second
	}
	return o.MinRequeue
}

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}
