package controller

// The permissions of the controller, matching the calls it makes (and those of
// the manager: the leader election Lease). controller-gen rbac reads them.
//
// Read the JobSets (the cache) and delete one whose TTL after finishing has
// expired; write their status through the subresource:
// +kubebuilder:rbac:groups=jobset.examples.jobkit.dev,resources=jobsets,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=jobset.examples.jobkit.dev,resources=jobsets/status,verbs=update
//
// The child Jobs: create, delete (foreground), patch spec.suspend:
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete;patch
//
// The headless Service of the pods' DNS names:
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create
//
// The persistent volume claims of spec.volumeClaimPolicies, cached and
// created once per group; and the PodDisruptionBudgets, cached with them
// (controllerruntime.Options.ClaimsAndBudgets watches both; a JobSet has no
// budget to create):
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
//
// With Options.InPlaceRestart, the pods labelled with a JobSet's name, cached
// for the attempts their agents report:
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
//
// Events recorded on the JobSet (an events.k8s.io/v1 recorder: create, and
// patch for a repeated event):
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// Only with leader election (--leader-elect): the Lease in the controller's own
// namespace (the kustomize base sets it in place of "system"), and the core
// Events controller-runtime's leader election records on it.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,roleName=leader-election-role,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",namespace=system,roleName=leader-election-role,resources=events,verbs=create;patch
