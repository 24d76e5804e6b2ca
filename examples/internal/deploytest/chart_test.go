package deploytest_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/jobkit/jobkit/examples/internal/deploytest"
)

// TestInstallersAndCharts checks dist/NAME of each controller (hack/deploy)
// against its kustomize base: install.yaml holds the objects of config/default,
// install-VARIANT.yaml those of the overlay of that variant;
// the Helm chart renders them too, in the release's namespace and without the
// Namespace object, with the image from the values, the CRD only with
// crd.enable, and the NetworkPolicy (network-policy/) and the ServiceMonitor
// (prometheus/) only when asked, both aimed at the metrics Service and the
// Deployment's pods.
func TestInstallersAndCharts(t *testing.T) {
	for _, c := range controllers {
		t.Run(c.name, func(t *testing.T) {
			b, err := deploytest.Load(filepath.Join(examplesDir, c.base))
			must(t, err, "")
			inst, err := deploytest.Installer(c.name)
			must(t, err, "")
			mustEqual(t, b.Objects, inst, "dist/%s/install.yaml against kustomize build %s (run make build-installer)", c.name, c.base)
			for v, dir := range c.variants {
				objs, err := deploytest.Render(filepath.Join(examplesDir, dir))
				must(t, err, "")
				file := "install-" + v + ".yaml"
				got, err := deploytest.InstallerFile(c.name, file)
				must(t, err, "")
				mustEqual(t, objs, got, "dist/%s/%s against kustomize build %s (run make build-installer)", c.name, file, dir)
			}

			const release = "a-release-namespace"
			var want []*unstructured.Unstructured
			for _, u := range b.Objects {
				if u.GetKind() == "Namespace" {
					continue
				}
				data, err := u.MarshalJSON()
				must(t, err, "")
				data = []byte(strings.ReplaceAll(string(data), b.Namespace.Name, release))
				data = []byte(strings.ReplaceAll(string(data), `"app.kubernetes.io/managed-by":"kustomize"`, `"app.kubernetes.io/managed-by":"Helm"`))
				// As RenderChart decodes (numbers as float64).
				w := &unstructured.Unstructured{}
				must(t, json.Unmarshal(data, &w.Object), "")
				want = append(want, w)
			}
			got, err := deploytest.RenderChart(c.name, release, nil)
			must(t, err, "rendering the chart")
			mustEqual(t, byKey(want), byKey(got), "the chart with its default values against config/default")

			got, err = deploytest.RenderChart(c.name, release, map[string]map[string]any{
				"image": {"repository": "registry.example/x", "tag": "v1"}, "networkPolicy": {"enable": true}, "prometheus": {"enable": true}})
			must(t, err, "rendering the chart with the optional bases")
			objs := byKey(got)
			equal(t, len(want)+2, len(objs), "objects with networkPolicy and prometheus on")
			dep := objs["Deployment/"+c.prefix+"controller-manager"]
			mustTrue(t, dep != nil, "no Deployment")
			containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
			equal(t, "registry.example/x:v1", containers[0].(map[string]any)["image"], "the image from the values")

			np := &networkingv1.NetworkPolicy{}
			u := objs["NetworkPolicy/"+c.prefix+"allow-metrics-traffic"]
			mustTrue(t, u != nil, "no NetworkPolicy")
			must(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, np, true), "the NetworkPolicy")
			equal(t, release, np.Namespace, "the NetworkPolicy's namespace")
			equal(t, b.Deployment.Spec.Selector.MatchLabels, np.Spec.PodSelector.MatchLabels, "the NetworkPolicy's pods")
			mustEqual(t, 1, len(np.Spec.Ingress), "ingress rules")
			in := np.Spec.Ingress[0]
			mustEqual(t, 1, len(in.Ports), "ingress ports")
			equal(t, b.Service.Spec.Ports[0].Port, in.Ports[0].Port.IntVal, "the port let in: the metrics port")
			mustEqual(t, 1, len(in.From), "ingress peers")
			equal(t, map[string]string{"metrics": "enabled"}, in.From[0].NamespaceSelector.MatchLabels, "the namespaces let in")

			sm := objs["ServiceMonitor/"+c.prefix+"controller-manager-metrics-monitor"]
			mustTrue(t, sm != nil, "no ServiceMonitor")
			equal(t, "monitoring.coreos.com/v1", sm.GetAPIVersion(), "the ServiceMonitor's apiVersion")
			equal(t, release, sm.GetNamespace(), "the ServiceMonitor's namespace")
			sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			for k, v := range sel {
				equal(t, v, b.Service.Labels[k], "the metrics Service's label %s (the ServiceMonitor's selector)", k)
			}
			eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			mustEqual(t, 1, len(eps), "ServiceMonitor endpoints")
			equal(t, map[string]any{
				"path": "/metrics", "port": b.Service.Spec.Ports[0].Name, "scheme": "https",
				"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
				"tlsConfig":       map[string]any{"insecureSkipVerify": true},
			}, eps[0], "the ServiceMonitor's endpoint")

			if c.crd != "" {
				got, err = deploytest.RenderChart(c.name, release, map[string]map[string]any{"crd": {"enable": false}})
				must(t, err, "rendering the chart without its CRD")
				check(t, !slices.ContainsFunc(got, func(u *unstructured.Unstructured) bool { return u.GetKind() == "CustomResourceDefinition" }),
					"a CRD with crd.enable=false")
				equal(t, len(want)-1, len(got), "objects with crd.enable=false")
			}
		})
	}
}

// byKey maps objects by kind/name.
func byKey(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	m := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		m[u.GetKind()+"/"+u.GetName()] = u
	}
	return m
}
