// Package cmdflags holds the command-line flags that every example controller
// command takes (jobkit-clientgo, jobkit-controller-runtime, trainingjob-controller):
// --kubeconfig, --managed-by, --workers, --leader-elect, --leader-elect-namespace,
// --metrics-bind-address, --health-probe-bind-address, the API rate limits of
// clientflags and klog's flags (-v, ...), with one validation and one way to load
// the client configuration. A command registers its own flags beside them.
package cmdflags
