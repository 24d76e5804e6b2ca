package controller

// The permissions of the controller, for controller-gen (hack/generate.sh writes
// config/rbac/role.yaml from them; hack/generate.sh --check fails when it is stale).
// Each line is a call the controller makes; nothing else is granted.
//
// The RunJobs: the manager's cache lists and watches them, a sync reads one
// (get); only the status is written, with an update of the subresource.
// +kubebuilder:rbac:groups=examples.jobkit.dev,resources=runjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=examples.jobkit.dev,resources=runjobs/status,verbs=update
//
// The runs' pods: cached (list, watch), read by name when the cache lags a
// create, created and deleted for the plan, patched to release a reporter's
// finalizers.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;patch
//
// With --leader-elect: the Lease in the controller's own namespace (the kustomize
// base sets it in place of "system"), and the core Events controller-runtime's
// leader election records on it.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,roleName=leader-election-role,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",namespace=system,roleName=leader-election-role,resources=events,verbs=create;patch
