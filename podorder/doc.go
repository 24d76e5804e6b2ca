// Package podorder ranks the active pods of a Job for removal, the way the batch/v1 Job
// controller picks which pods to delete when it has too many (scale-down, duplicate
// indexes, suspend): a pod that sorts first is removed first.
//
// # Order
//
// The order is plain/podorder's (github.com/jobkit/jobkit/plain/podorder, standard
// library only; its package documentation lists the rules): unassigned before
// assigned, by phase (Pending, Unknown, Running), not ready before ready, more recently
// ready first, more restarts first, newer first, then namespace, name and UID so that
// the order is total. This package reads those facts from a *corev1.Pod and calls it:
//
//   - assigned: spec.nodeName is set;
//   - phase: status.phase; any phase other than Unknown and Running (including the
//     empty one) ranks with Pending, as upstream does;
//   - ready and since when: the first PodReady condition has status True, and its
//     lastTransitionTime (a zero one counts as the most recent of all);
//   - restarts: the highest restartCount over the regular containers, then the highest
//     over the restartable init containers (sidecars: init containers with
//     restartPolicy Always);
//   - created: the creationTimestamp (a zero one counts as the newest of all).
//
// Rules 1 to 6 are those of upstream's controller.ActivePods, which the Job controller
// uses; it does not use ActivePodsWithRanks (co-location ranks) or the
// controller.kubernetes.io/pod-deletion-cost annotation, and neither does this package.
//
// # Differences from upstream
//
// Upstream sorts with sort.Sort, which is not stable, and its order is not total: two
// pods that agree on rules 1 to 6 come out in an order that depends on their input
// positions. The namespace, name and UID make the order total, so the same pods always
// sort the same way whatever order they arrive in (from an informer cache, a List, or a
// test), and the pod that survives a duplicate index is the same on every run and every
// replica of a controller. Two pods are equal under [Compare] only when they have the
// same namespace, name and UID, that is, when they are the same pod.
//
// # Cost and concurrency
//
// [Compare] reads each pod once: O(c) for c containers and conditions,
// without allocating. [Sort] reads the facts of each pod once (O(n·c)) and then sorts
// compact keys in O(n log n), allocating two arrays of n entries (about 100 bytes per
// pod). Neither function modifies a pod; Sort reorders the slice it is given. Both are
// safe for concurrent use as long as nobody writes to the pods (or, for Sort, the
// slice) at the same time.
package podorder
