package deploytest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeconv "k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// RepoRoot is the root of the jobkit checkout this package was compiled from.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Render runs `kustomize build dir` with the kustomize of hack/tools and returns
// the objects it prints, in its order.
func Render(dir string) ([]*unstructured.Unstructured, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	tools := filepath.Join(RepoRoot(), "hack", "tools")
	cmd := exec.Command("go", "tool", "kustomize", "build", abs)
	// The tools module alone: a workspace of the repository's modules must not
	// take part in resolving the tool.
	cmd.Dir, cmd.Env = tools, append(os.Environ(), "GOWORK=off")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w\n%s", dir, err, errOut.String())
	}
	return decode(&out, "the output of kustomize build "+dir)
}

// decode reads the objects of the YAML stream r; what names r in errors.
func decode(r io.Reader, what string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("decoding %s: %w", what, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// Base is a rendered config/default: the objects of a controller's deployment,
// in kubebuilder v4's layout, plus the CustomResourceDefinitions of a custom
// resource's controller.
type Base struct {
	Namespace      *corev1.Namespace
	ServiceAccount *corev1.ServiceAccount
	// ClusterRole is the controller's manager-role, bound by ClusterRoleBinding.
	ClusterRole        *rbacv1.ClusterRole
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
	// MetricsAuthRole lets the controller review the tokens and the access of
	// the clients of its secure /metrics; MetricsAuthRoleBinding binds it.
	MetricsAuthRole        *rbacv1.ClusterRole
	MetricsAuthRoleBinding *rbacv1.ClusterRoleBinding
	// MetricsReader is the role a scraper of /metrics is bound to.
	MetricsReader *rbacv1.ClusterRole
	// Role is the leader election Role, bound by RoleBinding.
	Role        *rbacv1.Role
	RoleBinding *rbacv1.RoleBinding
	Deployment  *appsv1.Deployment
	// Service is the metrics Service.
	Service *corev1.Service
	// CRDs are the CustomResourceDefinitions, as rendered.
	CRDs []*unstructured.Unstructured
	// Kinds lists the kinds of every object, in kustomize's order.
	Kinds []string
	// Objects are the objects as rendered, in kustomize's order.
	Objects []*unstructured.Unstructured
}

// Load renders dir (Render) into a Base. It fails on a kind Base has no place
// for and on a second object of a kind Base holds one of.
func Load(dir string) (*Base, error) {
	objs, err := Render(dir)
	if err != nil {
		return nil, err
	}
	b := &Base{Objects: objs}
	for _, u := range objs {
		kind, name := u.GetKind(), u.GetName()
		b.Kinds = append(b.Kinds, kind)
		var into any
		switch kind {
		case "CustomResourceDefinition":
			b.CRDs = append(b.CRDs, u)
			continue
		case "Namespace":
			into = set(&b.Namespace)
		case "ServiceAccount":
			into = set(&b.ServiceAccount)
		case "ClusterRole":
			switch {
			case strings.HasSuffix(name, "-manager-role"):
				into = set(&b.ClusterRole)
			case strings.HasSuffix(name, "-metrics-auth-role"):
				into = set(&b.MetricsAuthRole)
			case strings.HasSuffix(name, "-metrics-reader"):
				into = set(&b.MetricsReader)
			default:
				return nil, fmt.Errorf("%s: unexpected ClusterRole %s", dir, name)
			}
		case "ClusterRoleBinding":
			switch {
			case strings.HasSuffix(name, "-manager-rolebinding"):
				into = set(&b.ClusterRoleBinding)
			case strings.HasSuffix(name, "-metrics-auth-rolebinding"):
				into = set(&b.MetricsAuthRoleBinding)
			default:
				return nil, fmt.Errorf("%s: unexpected ClusterRoleBinding %s", dir, name)
			}
		case "Role":
			into = set(&b.Role)
		case "RoleBinding":
			into = set(&b.RoleBinding)
		case "Deployment":
			into = set(&b.Deployment)
		case "Service":
			into = set(&b.Service)
		default:
			return nil, fmt.Errorf("%s: unexpected kind %s (%s)", dir, kind, name)
		}
		if into == nil {
			return nil, fmt.Errorf("%s: a second %s (%s)", dir, kind, name)
		}
		if err := runtimeconv.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
			return nil, fmt.Errorf("%s: decoding %s %s: %w", dir, kind, name, err)
		}
	}
	return b, nil
}

// set allocates *p and returns it, or returns nil when *p is set already.
func set[T any](p **T) any {
	if *p != nil {
		return nil
	}
	*p = new(T)
	return *p
}

// Container returns the Deployment's container named name, or nil.
func (b *Base) Container(name string) *corev1.Container {
	if b.Deployment == nil {
		return nil
	}
	for i, c := range b.Deployment.Spec.Template.Spec.Containers {
		if c.Name == name {
			return &b.Deployment.Spec.Template.Spec.Containers[i]
		}
	}
	return nil
}

// Args returns the args of container c with every $(VAR) expanded as the kubelet
// does, from c's env: plain values, and fieldRef metadata.namespace as namespace
// (the pod's namespace). A reference to no variable stays as written.
func Args(c *corev1.Container, namespace string) []string {
	vars := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			vars[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			vars[e.Name] = namespace
		}
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		for name, v := range vars {
			a = strings.ReplaceAll(a, "$("+name+")", v)
		}
		args[i] = a
	}
	return args
}
