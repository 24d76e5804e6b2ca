package controllerruntime

// The permissions of the controller, for controller-gen (hack/generate.sh writes
// config/rbac/role.yaml from them; hack/generate.sh --check fails when it is stale).
// Each line is a call the controller makes; nothing else is granted.
//
// The Jobs: the manager's cache lists and watches them; the orphan cleanup reads
// one from the API server (get). Only the status is written, with an update of
// the subresource (resourceVersion precondition); the spec is the user's.
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=update
//
// The pods: cached (list, watch, on the controller UID index), read live by name
// when the cache lags a write (get), created and deleted for the plan, patched to
// remove the tracking finalizer.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;patch
//
// Events on the Jobs, through an events.k8s.io/v1 recorder: create, and patch for
// a repeated event (the series count).
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// With --leader-elect: the Lease in the controller's own namespace (the kustomize
// base sets it in place of "system"), and the core Events controller-runtime's
// leader election records on it.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,roleName=leader-election-role,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",namespace=system,roleName=leader-election-role,resources=events,verbs=create;patch
