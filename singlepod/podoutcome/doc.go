// Package podoutcome tells what the pod of a single-pod job (a CI run, a
// build) means for the job, and what to do next, as Prow's plank reconciler
// does: tell a real success from a pod that merely claims one, give up on pods
// that time out, and replace pods lost to eviction or a dead node a bounded
// number of times.
//
// # Flow
//
// [Classify] turns a pod into a [Result] (an [Outcome], the container
// involved, a message). [Next] turns that Result, the pod's timeouts (from
// package deadlines) and the job's stored [Revivals] into a [Step]: complete,
// fail, error, abort, retry or wait. [Decide] does all three for one pod.
//
// A controller acts on a Step in this order: if Step.Revivals differs from
// what the job holds, write it to the job (and wait until its cache shows the
// write); then delete the pod if Step.DeletePod; then, for a terminal action,
// record the state and Step.Message and complete the job; for ActionWait,
// requeue after Step.RequeueAfter when it is positive. After an ActionRetry
// the pod goes away and the next sync finds no pod: the controller creates a
// new one (plank does so at once, without a concurrency check). A missing pod
// is not an outcome; Classify rejects a nil pod.
//
// # Invariants
//
//   - Every Result maps to exactly one Step. A new revival is counted only
//     while the stored count is below MaxRevivals, so a Retry never raises
//     Revivals.Count above MaxRevivals.
//   - The revival count rises only on ActionRetry, by one, and only for a
//     pod that is not the one the stored record names.
//   - DeletePod is false for a pod that is already terminating.
//   - OutcomeSucceeded implies phase Succeeded and every regular and
//     non-restartable init container terminated with exit code 0 and a
//     finish time.
//   - Nothing reads the clock or modifies the pod.
//
// # Cost
//
// Classify is linear in the containers of the pod (statuses are matched to the
// spec by position first, by name when out of order) and does not allocate
// except for messages that name a container. Next is O(1). Decide of a running
// pod takes about 100ns without allocating.
//
// # Concurrency
//
// Every function is pure and safe for concurrent use.
//
// # Differences from plank
//
//   - The revival count survives restarts. Plank raises its count in memory
//     only and never writes it to the job, so the next sync starts from the
//     old value and max revivals never takes effect. Here [Next] returns the
//     new count for the controller to store BEFORE it deletes the pod, and
//     ties it to the pod's UID so that seeing the same pod again (a stale
//     cache, a failed delete, a NodeLost pod that stays terminating for
//     minutes) does not count it twice; plank would count every such sync.
//   - Sidecars are exempt from the success check: a Succeeded pod needs every
//     regular container and every non-restartable init container terminated
//     with exit code 0 and a finish time, while restartable init containers
//     (restartPolicy Always) are stopped by the kubelet and may end any way.
//     Plank checks every init container status, so a pod with a sidecar that
//     exited non-zero on shutdown is an error there.
//   - The success check also requires a status for every container of the
//     spec. Plank checks only the statuses present, so a Succeeded pod without
//     container statuses counts as a success there.
//   - The FalseSuccess message names the container and what is wrong after
//     plank's description ("Pod was in succeeded phase but some containers
//     didn't finish: ..."); Failed results also name the failed container.
//   - Time comes from the caller (now, via package deadlines), not the wall
//     clock, and a waiting running pod is requeued when its timeout would
//     expire; plank does not requeue running pods.
//   - An empty phase is treated as Pending (its API default); plank ignores
//     pods without a phase unless they are being deleted.
//   - Bad input (a nil pod, a negative MaxRevivals or count, a deadline that
//     cannot belong to the pod) is a *plaindl.FieldError matching
//     plaindl.ErrInvalidInput (package plain/deadlines), not a guess.
//   - Plank also strips its reporter's finalizer from a pod it replaces; that
//     finalizer is the caller's own: package runplan names it as a pod effect
//     (PodEffects.ReleaseFinalizers) of every replacement, whether the pod is
//     deleted or already terminating.
//
// Like plank, an OOM kill counts only while the pod is Running and only from
// a container's current state (an earlier kill in lastState, after which the
// container restarted, does not); an OOM-killed container in a Failed pod is
// a plain failure.
package podoutcome
