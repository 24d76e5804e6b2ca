// Package podorder ranks the active pods of a Job for removal, the way the batch/v1 Job
// controller picks which pods to delete when it has too many (scale-down, duplicate
// indexes, suspend): a pod that sorts first is removed first.
//
// # Order
//
// [Compare] applies these rules in turn; the first rule that tells two pods apart decides:
//
//  1. A pod without spec.nodeName (unassigned) before an assigned one.
//  2. By phase: Pending, then Unknown, then Running. Any other phase (including the empty
//     one) ranks with Pending, as upstream does; active pods are never Succeeded or Failed.
//  3. A pod that is not ready before a ready one. Ready means the first PodReady condition
//     has status True.
//  4. When both are ready, the pod that became ready more recently (later
//     lastTransitionTime of its PodReady condition) first. A zero lastTransitionTime
//     counts as the most recent of all, so such a pod goes first: it cannot prove that it
//     has been ready for long.
//  5. More container restarts first: the highest restartCount over the regular containers
//     decides; when equal, the highest restartCount over the restartable init containers
//     (sidecars: init containers with restartPolicy Always) decides.
//  6. The newer pod (later creationTimestamp) first. A zero creationTimestamp counts as
//     the newest of all.
//  7. jobkit's addition: namespace, then name, then UID, in increasing byte order.
//
// Rules 1 to 6 are those of upstream's controller.ActivePods, which the Job controller
// uses; it does not use ActivePodsWithRanks (co-location ranks) or the
// controller.kubernetes.io/pod-deletion-cost annotation, and neither does this package.
//
// # Differences from upstream
//
// Upstream sorts with sort.Sort, which is not stable, and its order is not total: two
// pods that agree on rules 1 to 6 come out in an order that depends on their input
// positions. Rule 7 makes the order total, so the same pods always sort the same way
// whatever order they arrive in (from an informer cache, a List, or a test), and the pod
// that survives a duplicate index is the same on every run and every replica of a
// controller. Two pods are equal under [Compare] only when they have the same
// namespace, name and UID, that is, when they are the same pod.
//
// # Cost and concurrency
//
// [Compare] reads each pod once: O(c) for c containers and conditions, without
// allocating. [Sort] computes a compact key per pod once (O(n·c)) and then sorts the
// keys in O(n log n), allocating two arrays of n entries (about 100 bytes per pod).
// Neither function modifies a pod; Sort reorders the slice it is given. Both are safe
// for concurrent use as long as nobody writes to the pods (or, for Sort, the slice) at
// the same time.
package podorder
