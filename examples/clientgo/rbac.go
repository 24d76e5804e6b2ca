package clientgo

// The permissions of the controller, for controller-gen (hack/generate.sh writes
// config/rbac/role.yaml from them; hack/generate.sh --check fails when it is stale).
// Each line is a call the controller makes; nothing else is granted.
//
// The Jobs: the informer lists and watches them; the orphan cleanup reads one
// from the API server (get). Only the status is written (UpdateStatus, with the
// resourceVersion precondition); the spec is the user's.
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=update
//
// The pods: the informer lists and watches them, a live read by name when the
// cache lags a write (get), created and deleted for the plan, patched to remove
// the tracking finalizer.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;patch
//
// Events on the Jobs, through client-go's record.EventBroadcaster (core v1):
// create, and patch for a repeated event (its count).
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
//
// With --leader-elect: the Lease in --leader-elect-namespace (the kustomize base
// passes the pod's namespace, which replaces "system"). The lock records no
// events.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,roleName=leader-election-role,resources=leases,verbs=get;create;update
