package upstream

// The permissions of the controller of JobSet's JobSets (Setup, run by
// cmd/jobset-controller --api jobset.x-k8s.io), matching the calls it makes
// (and those of the manager: the leader election Lease). controller-gen rbac
// reads them into config/rbac/role.yaml (hack/generate.sh).
//
// Read the JobSets (the cache) and delete one whose TTL after finishing has
// expired; write their status through the subresource; and update on the
// finalizers subresource, which the API server's OwnerReferencesPermissionEnforcement
// admission asks of whoever creates a child whose owner reference blocks the
// owner's deletion (the child Jobs, Services and claims do), as JobSet's own
// role grants it:
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/status,verbs=update
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/finalizers,verbs=update
//
// The child Jobs: create, delete (foreground), patch spec.suspend:
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete;patch
//
// The headless Service of the pods' DNS names:
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create
//
// The persistent volume claims of spec.volumeClaimPolicies, created at each
// sync until they exist (Setup caches no claims):
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=create
//
// With --feature-gates=InPlaceRestart=true, the pods labelled with a JobSet's
// name, cached for the attempts their agents report:
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
