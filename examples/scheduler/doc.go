// Package scheduler is a small in-process task scheduler built only on jobkit's plain
// layer (github.com/jobkit/jobkit/plain/...): no Kubernetes package is in its build,
// which its tests check with go list -deps.
//
// A Group is a set of indexed tasks, the way an Indexed Job is a set of indexed pods:
// it runs up to Parallelism tasks at once (plain/active), the first pending indexes
// first (plain/indexes), retries a failed index after a per-index backoff
// (plain/backoff) until RetriesPerIndex counted failures (plain/indexes.IndexFailed),
// sends every failure's exit code through failure rules (plain/podfailurepolicy:
// fail the group, fail the index, ignore or count), may end early through a success
// rule (plain/successpolicy), stops a task past its RunTimeout (plain/deadlines), and
// shares queue capacities and a global cap with the other groups of the Scheduler
// (plain/concurrency). Each index keeps its first outcome.
//
// Time is the wall clock (time.Now, time.After): the tests run it in a
// testing/synctest bubble, where backoffs of minutes take no time.
//
// A Scheduler is safe for concurrent use; Run blocks until its group ends. Each
// running task is one goroutine; a group's loop costs O(running + tasks) per event.
package scheduler
