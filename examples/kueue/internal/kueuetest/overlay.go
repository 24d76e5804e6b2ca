package kueuetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	runtimeconv "k8s.io/apimachinery/pkg/runtime"

	"github.com/jobkit/jobkit/examples/internal/deploytest"
)

// Overlay is what a queued controller's overlay (examples/kueue/config/NAME)
// deploys, as the tests of the Kueue-enabled commands check it.
type Overlay struct {
	// Image is the manager container's image.
	Image string
	// Args are the manager's args, with --kueue-config pointing at the local
	// file the mounted ConfigMap was generated from (config/kueue), so that the
	// command can parse them here.
	Args []string
	// Namespace and ServiceAccount are the Deployment's.
	Namespace, ServiceAccount string
}

// LoadOverlay renders the overlay dir and checks how its Deployment reads the
// Kueue Configuration: the manager's --kueue-config names a file of a volume
// mounted from a ConfigMap of the overlay, whose content is, byte for byte,
// the file configFile; the ClusterRoleBinding jobkit-examples-kueue binds the
// Deployment's service account to the ClusterRole of Kueue's reconciler.
func LoadOverlay(dir, configFile string) (*Overlay, error) {
	objs, err := deploytest.Render(dir)
	if err != nil {
		return nil, err
	}
	var deps []appsv1.Deployment
	cms := map[string]corev1.ConfigMap{}
	var binding *rbacv1.ClusterRoleBinding
	for _, u := range objs {
		var into any
		switch u.GetKind() {
		case "Deployment":
			deps = append(deps, appsv1.Deployment{})
			into = &deps[len(deps)-1]
		case "ConfigMap":
			cm := &corev1.ConfigMap{}
			if err := runtimeconv.DefaultUnstructuredConverter.FromUnstructured(u.Object, cm); err != nil {
				return nil, fmt.Errorf("%s: ConfigMap %s: %w", dir, u.GetName(), err)
			}
			cms[cm.Name] = *cm
			continue
		case "ClusterRoleBinding":
			if u.GetName() != "jobkit-examples-kueue" {
				continue
			}
			binding = &rbacv1.ClusterRoleBinding{}
			into = binding
		default:
			continue
		}
		if err := runtimeconv.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", dir, u.GetKind(), u.GetName(), err)
		}
	}
	if len(deps) != 1 {
		return nil, fmt.Errorf("%s: %d Deployments, want 1", dir, len(deps))
	}
	d := deps[0]
	spec := d.Spec.Template.Spec
	var c *corev1.Container
	for i := range spec.Containers {
		if spec.Containers[i].Name == "manager" {
			c = &spec.Containers[i]
		}
	}
	if c == nil {
		return nil, fmt.Errorf("%s: Deployment %s has no container manager", dir, d.Name)
	}
	o := &Overlay{Image: c.Image, Namespace: d.Namespace, ServiceAccount: spec.ServiceAccountName}
	want, err := os.ReadFile(configFile)
	if err != nil {
		return nil, err
	}
	found := false
	for _, a := range deploytest.Args(c, d.Namespace) {
		path, ok := strings.CutPrefix(a, "--kueue-config=")
		if !ok {
			o.Args = append(o.Args, a)
			continue
		}
		found = true
		data, err := mounted(spec, c, cms, path)
		if err != nil {
			return nil, fmt.Errorf("%s: --kueue-config=%s: %w", dir, path, err)
		}
		if data != string(want) {
			return nil, fmt.Errorf("%s: --kueue-config=%s: the mounted file is not %s", dir, path, configFile)
		}
		o.Args = append(o.Args, "--kueue-config="+configFile)
	}
	if !found {
		return nil, fmt.Errorf("%s: the manager has no --kueue-config (args %q)", dir, c.Args)
	}
	if binding == nil {
		return nil, fmt.Errorf("%s: no ClusterRoleBinding jobkit-examples-kueue", dir)
	}
	bound := false
	for _, s := range binding.Subjects {
		bound = bound || s.Kind == "ServiceAccount" && s.Name == o.ServiceAccount && s.Namespace == o.Namespace
	}
	if !bound || binding.RoleRef.Kind != "ClusterRole" || binding.RoleRef.Name != "jobkit-examples-kueue" {
		return nil, fmt.Errorf("%s: ClusterRoleBinding jobkit-examples-kueue (role %s, subjects %+v) does not bind ClusterRole jobkit-examples-kueue to ServiceAccount %s/%s",
			dir, binding.RoleRef.Name, binding.Subjects, o.Namespace, o.ServiceAccount)
	}
	return o, nil
}

// mounted returns the content of the file at path in container c of spec: a
// key of the ConfigMap (of cms) whose volume c mounts at path's directory.
func mounted(spec corev1.PodSpec, c *corev1.Container, cms map[string]corev1.ConfigMap, path string) (string, error) {
	for _, m := range c.VolumeMounts {
		key, ok := strings.CutPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/")
		if !ok || m.SubPath != "" {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			cm, ok := cms[v.ConfigMap.Name]
			if !ok {
				return "", fmt.Errorf("volume %s names ConfigMap %s, which the overlay does not hold", v.Name, v.ConfigMap.Name)
			}
			data, ok := cm.Data[filepath.Base(key)]
			if !ok || key != filepath.Base(key) {
				return "", fmt.Errorf("ConfigMap %s has no key %s", cm.Name, key)
			}
			return data, nil
		}
	}
	return "", fmt.Errorf("no ConfigMap volume is mounted at its directory")
}
