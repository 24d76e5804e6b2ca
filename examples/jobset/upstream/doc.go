// Package upstream serves JobSet's own API, jobset.x-k8s.io/v1alpha2, with
// the example's JobSet controller: JobSet's Go types (the module
// sigs.k8s.io/jobset, a dependency of this nested module, never copied) and
// JobSet's CRD (hack/jobset-crd.sh finds it in the module cache), so that a
// cluster running JobSet can swap its controller for this one, or run both,
// each syncing the JobSets whose spec.managedBy names it.
//
// The one new piece is the conversion: JobSetType, a reconcile.Type over
// JobSet's Go type, a group of child Jobs like the example's own
// controller.JobSetType; Setup is controllerruntime.Setup of it with the
// example's controller.Options. Every rule is groups/childjobs' and
// plain/group's. Input applies JobSet's webhook defaults to its copy of the
// JobSet, so that JobSets stored without JobSet's webhook run as the webhook
// would have stored them, and the webhook's checks (Validate) run at each
// sync: a JobSet they refuse fails (InvalidJobSet) instead of being refused
// at admission.
//
// JobSet v0.11's status has no per-child restart counters: the RestartJob
// rules of later releases cannot be named in its API, so nothing is lost.
// examples/jobset/README.md lists where the controller differs from JobSet's,
// as JobSet's own integration suite (package suite, make jobset-suite) shows.
//
// The conversions allocate the Input and its slices, O(roles + rules); they
// modify nothing and are safe for concurrent use.
package upstream
