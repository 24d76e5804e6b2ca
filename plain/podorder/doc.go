// Package podorder ranks the active pods (or tasks) of a Job for removal, the way the
// batch/v1 Job controller picks which pods to stop when it has too many (scale-down,
// duplicate indexes, suspend): a pod that sorts first is removed first. It reads a
// plain struct of facts ([Pod]) and imports only the standard library; jobkit's
// Kubernetes layer (github.com/jobkit/jobkit/podorder) reads those facts from
// *corev1.Pod and calls it.
//
// # Order
//
// [Compare] applies these rules in turn; the first rule that tells two pods apart decides:
//
//  1. An unassigned pod (not placed on a node) before an assigned one.
//  2. By phase: Pending, then Unknown, then Running.
//  3. A pod that is not ready before a ready one.
//  4. When both are ready, the pod that became ready more recently (later ReadySince)
//     first. A zero ReadySince counts as the most recent of all, so such a pod goes
//     first: it cannot prove that it has been ready for long.
//  5. More restarts first: Restarts decides; when equal, SidecarRestarts decides.
//  6. The newer pod (later Created) first. A zero Created counts as the newest of all.
//  7. jobkit's addition: Namespace, then Name, then UID, in increasing byte order.
//
// Rules 1 to 6 are those of upstream's controller.ActivePods, which the Job controller
// uses; it does not use co-location ranks or the pod-deletion-cost annotation, and
// neither does this package. The completion index is not a rule: the Job controller
// groups pods by index first (plain/indexes.Strays) and orders the pods of one index
// with this order.
//
// # Differences from upstream
//
// Upstream sorts with sort.Sort, which is not stable, and its order is not total: two
// pods that agree on rules 1 to 6 come out in an order that depends on their input
// positions. Rule 7 makes the order total, so the same pods always sort the same way
// whatever order they arrive in, and the pod that survives a duplicate index is the
// same on every run and every replica of a controller. Two pods are equal under
// [Compare] only when they have the same namespace, name and UID.
//
// # Cost and concurrency
//
// [Compare] is O(1) and does not allocate. [Sort] and [SortFunc] compute a compact key
// per item once and sort the keys in O(n log n), allocating two arrays of n entries
// (about 100 bytes per item). Neither modifies anything but the order of the slice
// given to Sort or SortFunc. All are safe for concurrent use as long as nobody writes to
// the same slice or facts at the same time.
package podorder
