// Command inplace-agent is the in-place restart agent of one pod of a group
// restarted in place (failurePolicy.restartStrategy: InPlaceRestart, JobSet's
// KEP-467), for the groups of examples/jobset, of JobSet itself, and of any
// owner whose status holds the two attempts (groups/ownedpods' Status.InPlace
// as its CRD spells it). It runs as a sidecar (an init container with
// restartPolicy: Always) and does the three things only the pod can do:
//
//   - at start, it reports the attempt its pod is on, the group's current
//     attempt plus one (0 before the first), in the pod's annotation
//     jobset.sigs.k8s.io/in-place-restart-attempt;
//   - it watches the group, and exits with --restart-exit-code when the
//     group's previous attempt reaches its own: a container restart rule with
//     the action RestartAllContainers on that exit code makes the kubelet
//     restart every container of the pod in place, this agent included, which
//     then reports the next attempt;
//   - it answers 200 on /barrier-is-lifted (503 before) once the group's
//     current attempt is its own: the sidecar's startupProbe on that path holds
//     the pod's main containers until then, so no worker of one attempt runs
//     beside one of another.
//
// Usage:
//
//	inplace-agent [--namespace NS] [--pod NAME] [--owner NAME]
//	              [--owner-resource jobsets.v1alpha2.jobset.x-k8s.io]
//	              [--previous-field status.previousInPlaceRestartAttempt]
//	              [--current-field status.currentInPlaceRestartAttempt]
//	              [--restart-exit-code 88] [--address :8080] [--kubeconfig FILE]
//
// --namespace, --pod and --owner default to $NAMESPACE, $POD_NAME and
// $OWNER_NAME, which the pod sets from the downward API (metadata.namespace,
// metadata.name, metadata.labels['jobset.sigs.k8s.io/jobset-name']). It exits
// 1 on an error (the owner gone, a report refused): give that exit code no
// restart rule, so that the pod fails and its role replaces it.
//
// # The pod
//
// The kubelet part is Kubernetes' container restart rules
// (containers[].restartPolicyRules, feature gate ContainerRestartRules: alpha
// in 1.34, beta in 1.35) with the action RestartAllContainers (feature gate
// RestartAllContainersOnContainerExits, alpha in 1.35; turn it on on the API
// server and on every kubelet, --feature-gates=...=true, and check the stage
// in your version's feature-gate table). The restart keeps the pod (its UID,
// IP, node, volumes) and runs its init containers again.
//
//	initContainers:
//	- name: agent
//	  image: inplace-agent
//	  restartPolicy: Always
//	  restartPolicyRules:
//	  - action: RestartAllContainers
//	    exitCodes: {operator: In, values: [88]}
//	  startupProbe:
//	    httpGet: {path: /barrier-is-lifted, port: 8080}
//	    periodSeconds: 1
//	    failureThreshold: 86400
//	  env:
//	  - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
//	  - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
//	  - {name: OWNER_NAME, valueFrom: {fieldRef: {fieldPath: "metadata.labels['jobset.sigs.k8s.io/jobset-name']"}}}
//	containers:
//	- name: worker
//	  restartPolicyRules:
//	  - action: RestartAllContainers
//	    exitCodes: {operator: NotIn, values: [0]}
//
// Its service account needs get and watch on the owner's resource and patch
// on pods (a ValidatingAdmissionPolicy can narrow the patch to the one
// annotation).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run parses args, runs the agent until it must restart its pod (its exit
// code) or fails (1), and serves the barrier meanwhile.
func run(args []string) int {
	cfg, kubeconfig, err := parse(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "inplace-agent:", err)
		return 2
	}
	rest, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, nil).ClientConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "inplace-agent: kubeconfig:", err)
		return 1
	}
	dyn, err := dynamic.NewForConfig(rest)
	if err != nil {
		fmt.Fprintln(os.Stderr, "inplace-agent:", err)
		return 1
	}
	core, err := kubernetes.NewForConfig(rest)
	if err != nil {
		fmt.Fprintln(os.Stderr, "inplace-agent:", err)
		return 1
	}
	a := newAgent(cfg, dyn.Resource(cfg.resource).Namespace(cfg.namespace), core.CoreV1().Pods(cfg.namespace))
	srv := &http.Server{Addr: cfg.address, Handler: a, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "inplace-agent: serve:", err)
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	code, err := a.run(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "inplace-agent:", err)
	}
	return code
}

// parse reads the flags, with the environment's defaults.
func parse(args []string) (config, string, error) {
	fs := flag.NewFlagSet("inplace-agent", flag.ContinueOnError)
	var cfg config
	var resource, previous, current, kubeconfig string
	fs.StringVar(&cfg.namespace, "namespace", os.Getenv("NAMESPACE"), "the pod's namespace (default $NAMESPACE)")
	fs.StringVar(&cfg.pod, "pod", os.Getenv("POD_NAME"), "the pod's name (default $POD_NAME)")
	fs.StringVar(&cfg.owner, "owner", os.Getenv("OWNER_NAME"), "the group's name (default $OWNER_NAME)")
	fs.StringVar(&resource, "owner-resource", "jobsets.v1alpha2.jobset.x-k8s.io", "the group's resource, as resource.version.group")
	fs.StringVar(&previous, "previous-field", "status.previousInPlaceRestartAttempt", "the group's previous attempt, a dotted path")
	fs.StringVar(&current, "current-field", "status.currentInPlaceRestartAttempt", "the group's current attempt, a dotted path")
	fs.IntVar(&cfg.exitCode, "restart-exit-code", 88, "the exit code on which the kubelet restarts the pod's containers")
	fs.StringVar(&cfg.address, "address", ":8080", "where /barrier-is-lifted is served")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "a kubeconfig file (default: in-cluster)")
	if err := fs.Parse(args); err != nil {
		return config{}, "", err
	}
	for _, f := range []struct{ name, v string }{{"--namespace", cfg.namespace}, {"--pod", cfg.pod}, {"--owner", cfg.owner}} {
		if f.v == "" {
			return config{}, "", fmt.Errorf("%s is required (or its environment variable)", f.name)
		}
	}
	gvr, _ := schema.ParseResourceArg(resource)
	if gvr == nil || gvr.Version == "" {
		return config{}, "", fmt.Errorf("--owner-resource %q: want resource.version.group", resource)
	}
	cfg.resource = *gvr
	if cfg.exitCode < 1 || cfg.exitCode > 255 {
		return config{}, "", fmt.Errorf("--restart-exit-code %d: want 1 to 255", cfg.exitCode)
	}
	cfg.previousField, cfg.currentField = strings.Split(previous, "."), strings.Split(current, ".")
	return cfg, kubeconfig, nil
}
