package deploytest_test

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	"github.com/jobkit/jobkit/examples/internal/deploytest"
)

// controllers are the deployable commands: the binary (and image) name, its
// package inside examples/, its kustomize base and the prefix of its objects.
var controllers = []struct {
	name, cmd, base, prefix string
	crd                     string // the CustomResourceDefinition deployed with it
	// cmdflags: the command's flags are examples/internal/cmdflags' (plank has
	// its own, of the same names).
	cmdflags bool
	// extra are the string flags the command adds to those (and their values
	// the Deployment must pass); jobset-upstream's --api.
	extra map[string]string
	// variants are the overlays of config/default that hack/deploy writes to
	// dist/NAME/install-VARIANT.yaml: VARIANT -> the overlay's directory inside
	// examples/.
	variants map[string]string
}{
	{name: "jobkit-controller-runtime", cmd: "controllerruntime/cmd/jobkit-controller-runtime",
		base: "controllerruntime/config/default", prefix: "jobkit-controller-runtime-", cmdflags: true},
	{name: "jobkit-clientgo", cmd: "clientgo/cmd/jobkit-clientgo",
		base: "clientgo/config/default", prefix: "jobkit-clientgo-", cmdflags: true},
	// Their kueue variants run examples/kueue's commands (checked there).
	{name: "trainingjob-controller", cmd: "trainingjob/cmd/trainingjob-controller",
		base: "trainingjob/config/default", prefix: "trainingjob-", crd: "trainingjobs.ml.examples.jobkit.dev", cmdflags: true,
		variants: map[string]string{"kueue": "kueue/config/trainingjob"}},
	{name: "jobset-controller", cmd: "jobset/cmd/jobset-controller",
		base: "jobset/config/default", prefix: "jobset-", crd: "jobsets.jobset.examples.jobkit.dev", cmdflags: true,
		variants: map[string]string{"kueue": "kueue/config/jobset"}},
	{name: "plank", cmd: "plank/cmd/plank",
		base: "plank/config/default", prefix: "plank-", crd: "runjobs.examples.jobkit.dev"},
	// JobSet's own API: no CRD of its own (JobSet's release installs it).
	{name: "jobset-upstream", cmd: "jobset/upstream/cmd/jobset-controller",
		base: "jobset/upstream/config/default", prefix: "jobset-upstream-", cmdflags: true,
		extra: map[string]string{"api": "jobset.x-k8s.io"}, variants: map[string]string{"side-by-side": "jobset/upstream/config/side-by-side"}},
}

// examplesDir is the examples module's directory.
var examplesDir = filepath.Join(deploytest.RepoRoot(), "examples")

// TestBases renders each controller's config/default and checks what a
// deployment needs: the objects, their names and namespace, the image, the
// service account of the Deployment bound to both roles, the args accepted by the
// commands' flags, the probes and the metrics Service on the ports of those
// flags, and a restricted securityContext.
func TestBases(t *testing.T) {
	for _, c := range controllers {
		t.Run(c.name, func(t *testing.T) {
			b, err := deploytest.Load(filepath.Join(examplesDir, c.base))
			must(t, err, "")
			want := []string{"ClusterRole", "ClusterRole", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBinding", "Deployment", "Namespace", "Role", "RoleBinding", "Service", "ServiceAccount"}
			if c.crd != "" {
				want = append(want, "CustomResourceDefinition")
			}
			got := slices.Clone(b.Kinds)
			slices.Sort(got)
			slices.Sort(want)
			mustEqual(t, want, got, "kinds rendered")
			if c.crd != "" {
				mustEqual(t, 1, len(b.CRDs), "CRDs")
				equal(t, c.crd, b.CRDs[0].GetName(), "the CRD")
			}

			ns := c.prefix + "system"
			equal(t, ns, b.Namespace.Name, "the Namespace")
			equal(t, "restricted", b.Namespace.Labels["pod-security.kubernetes.io/enforce"], "the Namespace's Pod Security level")
			for obj, name := range map[string][2]string{
				"ServiceAccount": {b.ServiceAccount.Namespace, b.ServiceAccount.Name},
				"Deployment":     {b.Deployment.Namespace, b.Deployment.Name},
				"Role":           {b.Role.Namespace, b.Role.Name},
				"RoleBinding":    {b.RoleBinding.Namespace, b.RoleBinding.Name},
				"Service":        {b.Service.Namespace, b.Service.Name},
			} {
				equal(t, ns, name[0], "namespace of the %s", obj)
				check(t, strings.HasPrefix(name[1], c.prefix), "%s %s: want the prefix %s", obj, name[1], c.prefix)
			}
			equal(t, c.prefix+"manager-role", b.ClusterRole.Name, "the ClusterRole")
			equal(t, c.prefix+"leader-election-role", b.Role.Name, "the leader election Role")

			// The service account runs the pods and holds both roles.
			pod := b.Deployment.Spec.Template.Spec
			equal(t, b.ServiceAccount.Name, pod.ServiceAccountName, "the Deployment's service account")
			subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: b.ServiceAccount.Name, Namespace: ns}}
			equal(t, subject, b.ClusterRoleBinding.Subjects, "the ClusterRoleBinding's subjects")
			equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.ClusterRole.Name}, b.ClusterRoleBinding.RoleRef, "the ClusterRoleBinding's role")
			equal(t, subject, b.RoleBinding.Subjects, "the RoleBinding's subjects")
			equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: b.Role.Name}, b.RoleBinding.RoleRef, "the RoleBinding's role")
			for _, r := range append(slices.Clone(b.ClusterRole.Rules), b.Role.Rules...) {
				check(t, !slices.Contains(r.Verbs, "*"), "rule %v", r)
				check(t, !slices.Contains(r.Resources, "*"), "rule %v", r)
				check(t, !slices.Contains(r.Resources, "secrets"), "rule %v", r)
			}
			check(t, grants(b.Role.Rules, "coordination.k8s.io", "leases", "update"), "the leader election Role grants no lease update")

			// Secure metrics (kubebuilder v4): the controller reviews its
			// scrapers' tokens and access; a scraper is bound to metrics-reader.
			equal(t, c.prefix+"metrics-auth-role", b.MetricsAuthRole.Name, "the metrics auth ClusterRole")
			check(t, grants(b.MetricsAuthRole.Rules, "authentication.k8s.io", "tokenreviews", "create"), "the metrics auth role grants no tokenreviews create")
			check(t, grants(b.MetricsAuthRole.Rules, "authorization.k8s.io", "subjectaccessreviews", "create"), "the metrics auth role grants no subjectaccessreviews create")
			equal(t, 2, countRules(b.MetricsAuthRole.Rules), "verbs the metrics auth role grants")
			equal(t, subject, b.MetricsAuthRoleBinding.Subjects, "the metrics auth ClusterRoleBinding's subjects")
			equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.MetricsAuthRole.Name}, b.MetricsAuthRoleBinding.RoleRef, "the metrics auth ClusterRoleBinding's role")
			equal(t, c.prefix+"metrics-reader", b.MetricsReader.Name, "the metrics reader ClusterRole")
			equal(t, []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}, b.MetricsReader.Rules, "the metrics reader's rules")

			m := b.Container("manager")
			mustTrue(t, m != nil, "the Deployment has no container named manager")
			equal(t, "jobkit/"+c.name+":latest", m.Image, "the image")

			// The args parse with the flags every example command registers; the
			// commands' own tests run them (deploy_integration_test.go).
			args := deploytest.Args(m, ns)
			for _, a := range args {
				check(t, !strings.Contains(a, "$("), "arg %q: an unexpanded variable", a)
			}
			f, extra := commonFlags(t, args, c.extra)
			equal(t, c.extra, extra, "the command's own flags in the Deployment's args")
			if c.cmdflags {
				fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
				fs.SetOutput(io.Discard)
				for name := range c.extra {
					fs.String(name, "", "")
				}
				_, err := cmdflags.Register(fs, cmdflags.Defaults{ManagedBy: "x", Workers: 1}).Parse(args)
				must(t, err, "parsing the Deployment's args %q", args)
			}
			check(t, f.LeaderElect, "the Deployment runs without --leader-elect")
			if f.LeaseNamespace != "" {
				equal(t, ns, f.LeaseNamespace, "--leader-elect-namespace: the Role is in the pod's namespace")
			}
			equal(t, ":8081", f.ProbeAddr, "the probes' address")
			check(t, f.MetricsSecure, "the Deployment runs without --metrics-secure")
			equal(t, ":8443", f.MetricsAddr, "--metrics-bind-address")

			probePort := port(t, f.ProbeAddr)
			for name, p := range map[string]*corev1.Probe{"liveness": m.LivenessProbe, "readiness": m.ReadinessProbe} {
				mustTrue(t, p != nil, "no %s probe", name)
				mustTrue(t, p.HTTPGet != nil, "the %s probe is not an HTTP GET", name)
				equal(t, probePort, containerPort(t, m, p.HTTPGet.Port), "the %s probe's port", name)
			}
			equal(t, "/healthz", m.LivenessProbe.HTTPGet.Path, "the liveness probe's path")
			equal(t, "/readyz", m.ReadinessProbe.HTTPGet.Path, "the readiness probe's path")

			mustEqual(t, 1, len(b.Service.Spec.Ports), "ports of the metrics Service")
			equal(t, "https", b.Service.Spec.Ports[0].Name, "the metrics Service's port name (the ServiceMonitor's)")
			equal(t, int32(8443), b.Service.Spec.Ports[0].Port, "the metrics Service's port")
			equal(t, port(t, f.MetricsAddr), containerPort(t, m, b.Service.Spec.Ports[0].TargetPort), "the metrics Service's target port")
			equal(t, b.Deployment.Spec.Selector.MatchLabels, b.Service.Spec.Selector, "the metrics Service's selector")
			for k, v := range b.Deployment.Spec.Selector.MatchLabels {
				equal(t, v, b.Deployment.Spec.Template.Labels[k], "pod label %s", k)
			}

			mustTrue(t, pod.SecurityContext != nil, "no pod securityContext")
			equal(t, true, deref(pod.SecurityContext.RunAsNonRoot), "runAsNonRoot")
			equal(t, int64(65532), deref(pod.SecurityContext.RunAsUser), "runAsUser: the Dockerfile's USER")
			mustTrue(t, m.SecurityContext != nil, "no container securityContext")
			equal(t, false, deref(m.SecurityContext.AllowPrivilegeEscalation), "allowPrivilegeEscalation")
			equal(t, true, deref(m.SecurityContext.ReadOnlyRootFilesystem), "readOnlyRootFilesystem")
			mustTrue(t, m.SecurityContext.Capabilities != nil, "no capabilities")
			equal(t, []corev1.Capability{"ALL"}, m.SecurityContext.Capabilities.Drop, "capabilities dropped")
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, lim := m.Resources.Requests[r], m.Resources.Limits[r]
				check(t, !req.IsZero(), "no %s request", r)
				check(t, !lim.IsZero(), "no %s limit", r)
			}
		})
	}
}

// commonFlags parses the flags of args that every controller command has, by the
// same names, and the string flags named in extra, and refuses any other: the
// Deployments pass no more. It returns the values of those of extra that args
// set (nil when none).
func commonFlags(t *testing.T, args []string, extra map[string]string) (cmdflags.Flags, map[string]string) {
	t.Helper()
	var f cmdflags.Flags
	fs := flag.NewFlagSet("common", flag.ContinueOnError)
	values := map[string]*string{}
	for name := range extra {
		values[name] = fs.String(name, "", "")
	}
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.LeaderElect, "leader-elect", false, "")
	fs.StringVar(&f.LeaseNamespace, "leader-elect-namespace", "", "")
	fs.StringVar(&f.MetricsAddr, "metrics-bind-address", "", "")
	fs.BoolVar(&f.MetricsSecure, "metrics-secure", false, "")
	fs.StringVar(&f.MetricsCertDir, "metrics-cert-path", "", "")
	fs.StringVar(&f.ProbeAddr, "health-probe-bind-address", "", "")
	must(t, fs.Parse(args), "the Deployment's args %q", args)
	var set map[string]string
	fs.Visit(func(fl *flag.Flag) {
		if v, ok := values[fl.Name]; ok {
			if set == nil {
				set = map[string]string{}
			}
			set[fl.Name] = *v
		}
	})
	return f, set
}

// countRules counts the (group, resource, verb) triples rules grant.
func countRules(rules []rbacv1.PolicyRule) int {
	n := 0
	for _, r := range rules {
		n += len(r.APIGroups) * len(r.Resources) * len(r.Verbs)
	}
	return n
}

// grants reports whether one of rules grants verb on resource in group.
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// port is the port number of a listen address ":8081".
func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	must(t, err, "address %q", addr)
	return p
}

// containerPort resolves p (a number or a port name of c) to a number.
func containerPort(t *testing.T, c *corev1.Container, p intstr.IntOrString) string {
	t.Helper()
	if p.Type == intstr.Int {
		return p.String()
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return fmt.Sprint(cp.ContainerPort)
		}
	}
	t.Fatalf("container %s has no port named %q", c.Name, p.StrVal)
	return ""
}

// run runs cmd in the examples module and returns its output; a failure fails
// the test with the output.
func run(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	cmd.Dir = examplesDir
	out, err := cmd.CombinedOutput()
	must(t, err, "%s:\n%s", strings.Join(cmd.Args, " "), out)
	return string(out)
}

// equal reports got != want as an error with a diff; what says what was compared
// (a format and its arguments).
func equal(t *testing.T, want, got any, what string, args ...any) bool {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", fmt.Sprintf(what, args...), diff)
		return false
	}
	return true
}

// mustEqual is equal, stopping the test on a difference.
func mustEqual(t *testing.T, want, got any, what string, args ...any) {
	t.Helper()
	if !equal(t, want, got, what, args...) {
		t.FailNow()
	}
}

// check reports a false ok as an error.
func check(t *testing.T, ok bool, what string, args ...any) {
	t.Helper()
	if !ok {
		t.Errorf(what, args...)
	}
}

// mustTrue is check, stopping the test.
func mustTrue(t *testing.T, ok bool, what string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(what, args...)
	}
}

// must stops the test on err.
func must(t *testing.T, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}
