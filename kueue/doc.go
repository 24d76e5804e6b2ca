// Package kueue queues jobkit owners through Kueue (sigs.k8s.io/kueue): one
// call, Setup, makes an owner kind Kueue-managed from the reconcile.Type that
// jobkit's controller-runtime integration (controllerruntime.Setup) already
// takes, with no second description of the owner.
//
// Kueue admits a Workload per owner against a ClusterQueue's quota; its job
// framework's generic reconciler, which Setup registers, keeps the owner
// suspended until then, unsuspends it with the chosen flavour's node
// selectors, tolerations, labels and annotations merged into its pod
// templates, suspends it again (templates restored) when it is evicted or
// preempted, reports its pods ready for waitForPodsReady and gives the quota
// back as its pods succeed (reclaimable pods) and when it finishes. jobkit's
// controller for the kind runs the pods as spec.suspend says, counting the
// pods a suspension stops as it always does. Job is the owner as Kueue's
// framework sees it (a jobframework.GenericJob).
//
// Shapes: a Job-shaped owner is one pod set ("main"), an owner of roles one
// pod set per role, a group of child Jobs (JobSet's shape) one pod set per
// replicated role of replicas x pods per child, the flavour merged into the
// role templates that reconcile.Type.ChildJobTemplates points to inside the
// owner (a Type with ChildJobs but without it is refused: ErrUnsupported).
// Job implements jobframework.JobWithManagedBy (reconcile.Type.SetManagedBy),
// and the webhook of Options.Webhook hands the owners of a MultiKueue
// ClusterQueue to MultiKueue. Partial admission and topology-aware scheduling
// are not offered: docs/kueue.md lists what differs from Kueue's built-in
// integrations.
//
// Versions: this module requires Kueue v0.17 and builds with the
// controller-runtime (v0.23) and Kubernetes libraries (v0.35) that Kueue
// requires. Kueue's job framework imports Kubeflow Trainer v2.2.0's API, which
// does not build against k8s.io/api v0.37 (it names core/v1 types that release
// no longer has), so this module keeps its own workspace (kueue/go.work) at
// Kueue's versions, and an operator that imports it stays below k8s.io v0.37.
//
// Cost: each method of Job converts the owner once or twice through the Type
// (the conversions point into the owner: no copy of its pods' template is
// made but the one PodSets returns): everything Kueue's reconciler asks of a
// running owner in one reconcile (pod sets, suspended, active, ready,
// finished, reclaimable pods) takes about 4 µs and 13 allocations
// (BenchmarkJob, 2-core machine, 2026-12-06). A Job is not safe for concurrent use;
// Setup is called once per kind before the manager starts.
package kueue
