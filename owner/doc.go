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
// # What the pods carry
//
// A pod created for an owner gets, besides its template's labels and annotations:
//
//   - the owner's controller reference (NewControllerRef) and tracking finalizer
//     (Kind.Finalizer);
//   - for an Indexed owner, the annotation and the label Kind.IndexKey with the
//     completion index, spec.hostname "<name>-<index>", and in every container the
//     environment variable JOB_COMPLETION_INDEX read from that label;
//   - with backoffLimitPerIndex, the annotations Kind.FailureCountKey and
//     Kind.IgnoredFailureCountKey with the index's failures so far.
//
// The keys are the kind's: Kind.KeyPrefix followed by "completion-index",
// "index-failure-count" and "index-ignored-failure-count". An empty KeyPrefix, as
// in BatchJob, gives the batch/v1 keys (batch.kubernetes.io/job-completion-index and
// so on), the documented default; an operator that does not want its pods to look
// like a Job's sets its own ("ml.example.com/trainingjob-"). The index of a pod is
// read back from Kind.IndexKey only, so the keys of one kind must not change while
// it has pods. No other label is added: the labels that select an owner's pods are
// the template's (the API server adds job-name and controller-uid to a Job's
// template, not the controller).
//
// Everything here is pure, allocation-free except NewControllerRef and the keys of a
// KeyPrefix of the kind's own, and safe for concurrent use.
package owner
