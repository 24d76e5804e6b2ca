// Package owner holds the one rule for "this owner reference is ours": which kind of
// object owns a workload's pods (a batch/v1 Job, or a custom resource of an
// operator), how a pod's controller reference to it is recognised and built, and
// the tracking finalizer its controller puts on the pods.
//
// # Contract
//
// A pod belongs to an owner through its controller reference (the owner reference
// with controller: true), matched by the owner's UID: a pod whose controller
// reference has the owner's UID is the owner's, whatever labels it carries; a
// reference to another object of the same name (an owner deleted and recreated) is
// not. Kind only says what kind of reference to look at: its group and kind, and any
// version of the group, since the API server may serve an owner under several
// versions and a reference keeps the version it was written with.
//
// Everything here is pure, allocation-free except NewControllerRef, and safe for
// concurrent use.
package owner
