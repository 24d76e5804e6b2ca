// Package concurrency is the Kubernetes face of [plainconc]
// (github.com/jobkit/jobkit/plain/concurrency): it decides whether a single-pod
// job may start now given the other jobs sharing its limits (a global cap on
// pending jobs, a cap per job name, a capacity per queue), as Prow's plank does,
// with jobs identified by their Kubernetes UID ([types.UID]).
//
// Every name is an alias of the plain package: [Peer] and [Candidate] are its
// generic peers instantiated with types.UID, and [Decide] calls
// [plainconc.Decide] on them as they are, so the rules, their order, the
// tie-break by UID, the errors and the messages are written once, there, and
// nothing is copied. Read the plain package's documentation for the behaviour
// and its differences from plank.
//
// # Invariants
//
// Those of the plain package. Decide does not modify or retain its arguments.
//
// # Cost
//
// Decide copies the peers into plain peers (on the stack up to 32 peers, else one
// allocation of len(peers) elements) and then costs what plainconc.Decide costs:
// one pass, no further allocation when the job may start. A caller without Kubernetes UIDs
// calls the plain package directly and saves the copy.
//
// # Concurrency
//
// Decide is pure and safe for concurrent use; [KeyedMutex] is safe for
// concurrent use.
package concurrency
