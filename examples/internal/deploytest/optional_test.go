package deploytest_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/jobkit/jobkit/examples/internal/deploytest"
)

// TestCertManagerAndTLSPatch turns on, in a copy of each controller's config/,
// the certmanager base with its patch of the Deployment and the prometheus base
// with its TLS patch, as their kustomizations tell a user to: cert-manager
// issues the certificate of the metrics Service's DNS name into the Secret
// metrics-server-cert, the Deployment mounts that Secret and serves it
// (--metrics-cert-path, which the deploy tests run the commands with), and the
// ServiceMonitor verifies it by that name with the Secret's CA.
func TestCertManagerAndTLSPatch(t *testing.T) {
	const secret = "metrics-server-cert"
	for _, c := range controllers {
		t.Run(c.name, func(t *testing.T) {
			config := filepath.Join(t.TempDir(), "config")
			must(t, os.CopyFS(config, os.DirFS(filepath.Join(examplesDir, filepath.Dir(c.base)))), "")
			uncomment(t, filepath.Join(config, "default", "kustomization.yaml"), "#- ../prometheus\n", "#- ../certmanager\n",
				"#- path: cert_metrics_manager_patch.yaml\n", "#  target:\n", "#    kind: Deployment\n")
			uncomment(t, filepath.Join(config, "prometheus", "kustomization.yaml"),
				"#patches:\n", "#- path: monitor_tls_patch.yaml\n", "#  target:\n", "#    kind: ServiceMonitor\n")
			objs, err := deploytest.Render(filepath.Join(config, "default"))
			must(t, err, "")
			byKind := map[string]*unstructured.Unstructured{}
			for _, u := range objs {
				byKind[u.GetKind()] = u
			}
			for _, k := range []string{"ServiceMonitor", "Service", "Issuer", "Certificate", "Deployment"} {
				mustTrue(t, byKind[k] != nil, "no %s", k)
			}
			svc := byKind["Service"]
			dns := svc.GetName() + "." + svc.GetNamespace() + ".svc"

			cert := byKind["Certificate"].Object
			names, _, _ := unstructured.NestedStringSlice(cert, "spec", "dnsNames")
			check(t, slices.Contains(names, dns), "the Certificate's dnsNames %q lack the metrics Service's %s", names, dns)
			issuer, _, _ := unstructured.NestedString(cert, "spec", "issuerRef", "name")
			equal(t, byKind["Issuer"].GetName(), issuer, "the Certificate's issuer")
			equal(t, svc.GetNamespace(), byKind["Issuer"].GetNamespace(), "the Issuer's namespace")
			got, _, _ := unstructured.NestedString(cert, "spec", "secretName")
			equal(t, secret, got, "the Certificate's Secret")

			d := &appsv1.Deployment{}
			must(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(byKind["Deployment"].Object, d, true), "the Deployment")
			pod := d.Spec.Template.Spec
			mustEqual(t, 1, len(pod.Volumes), "volumes")
			equal(t, &corev1.SecretVolumeSource{SecretName: secret}, pod.Volumes[0].Secret, "the certificate's volume")
			m := &pod.Containers[0]
			mustEqual(t, 1, len(m.VolumeMounts), "volume mounts")
			equal(t, pod.Volumes[0].Name, m.VolumeMounts[0].Name, "the mounted volume")
			f, _ := commonFlags(t, deploytest.Args(m, svc.GetNamespace()), c.extra)
			equal(t, m.VolumeMounts[0].MountPath, f.MetricsCertDir, "--metrics-cert-path: the Secret's mount")
			check(t, f.MetricsSecure, "no --metrics-secure")

			eps, _, _ := unstructured.NestedSlice(byKind["ServiceMonitor"].Object, "spec", "endpoints")
			mustEqual(t, 1, len(eps), "endpoints")
			key := func(k string) map[string]any { return map[string]any{"name": secret, "key": k} }
			equal(t, map[string]any{
				"insecureSkipVerify": false,
				"serverName":         dns,
				"ca":                 map[string]any{"secret": key("ca.crt")},
				"cert":               map[string]any{"secret": key("tls.crt")},
				"keySecret":          key("tls.key"),
			}, eps[0].(map[string]any)["tlsConfig"], "the patched tlsConfig")
		})
	}
}

// uncomment removes the leading # of each of lines in the file at path, each of
// which must be there.
func uncomment(t *testing.T, path string, lines ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err, "")
	s := string(data)
	for _, l := range lines {
		mustTrue(t, strings.Contains(s, l), "%s has no line %q", path, l)
		s = strings.Replace(s, l, l[1:], 1)
	}
	must(t, os.WriteFile(path, []byte(s), 0o644), "")
}
