package deploytest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jobkit/jobkit/examples/internal/deploytest"
)

// TestPrometheusTLSPatch turns on, in a copy of each controller's config/, the
// prometheus base and its TLS patch, as prometheus/kustomization.yaml tells a
// user to: the ServiceMonitor then verifies the metrics Service's certificate
// by its DNS name in the base's namespace, with the CA and client certificate
// of cert-manager's Secret metrics-server-cert.
func TestPrometheusTLSPatch(t *testing.T) {
	for _, c := range controllers {
		t.Run(c.name, func(t *testing.T) {
			config := filepath.Join(t.TempDir(), "config")
			must(t, os.CopyFS(config, os.DirFS(filepath.Join(examplesDir, filepath.Dir(c.base)))), "")
			uncomment(t, filepath.Join(config, "default", "kustomization.yaml"), "#- ../prometheus\n")
			uncomment(t, filepath.Join(config, "prometheus", "kustomization.yaml"),
				"#patches:\n", "#- path: monitor_tls_patch.yaml\n", "#  target:\n", "#    kind: ServiceMonitor\n")
			objs, err := deploytest.Render(filepath.Join(config, "default"))
			must(t, err, "")
			var sm, svc *unstructured.Unstructured
			for _, u := range objs {
				switch u.GetKind() {
				case "ServiceMonitor":
					sm = u
				case "Service":
					svc = u
				}
			}
			mustTrue(t, sm != nil && svc != nil, "no ServiceMonitor or no Service")
			eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			mustEqual(t, 1, len(eps), "endpoints")
			secret := func(key string) map[string]any { return map[string]any{"name": "metrics-server-cert", "key": key} }
			equal(t, map[string]any{
				"insecureSkipVerify": false,
				"serverName":         svc.GetName() + "." + svc.GetNamespace() + ".svc",
				"ca":                 map[string]any{"secret": secret("ca.crt")},
				"cert":               map[string]any{"secret": secret("tls.crt")},
				"keySecret":          secret("tls.key"),
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
