// Package cmdflags holds the command-line flags that every example controller
// command takes (jobkit-clientgo, jobkit-controller-runtime, trainingjob-controller):
// --kubeconfig, --managed-by, --workers, --leader-elect, --leader-elect-namespace,
// --metrics-bind-address, --health-probe-bind-address, the API rate limits of
// clientflags, --api-backoff-base and --api-backoff-max (the requeue after an API
// error, the Job controller's 1s doubling to 1m), --metrics-secure and
// --metrics-cert-path (the certificate of the secure /metrics), --logging-format (text or json) and klog's flags
// (-v, ...), with one
// validation, one way to load the client configuration and wait for its API server
// (Connect), one logger (NewLogger) and one exit rule (Main, ExitCode: --help and a
// stop by SIGINT or SIGTERM exit 0 whenever they arrive). A command registers its
// own flags beside them.
package cmdflags
