package crd

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource is a custom resource a controller needs, and where its
// CustomResourceDefinition comes from.
type Resource struct {
	// Kind is the group, version and kind the controller reads.
	Kind schema.GroupVersionKind
	// CRD is the CustomResourceDefinition's name, <plural>.<group>.
	CRD string
	// Manifests is what to give kubectl apply -f to install it: a directory or
	// file of the jobkit repository ("examples/jobset/config/crd/").
	Manifests string
}

// NotInstalledError says that the API server does not serve a Resource.
type NotInstalledError struct {
	Resource Resource
	// Err is the RESTMapper's answer (a meta.NoKindMatchError, mostly).
	Err error
}

func (e *NotInstalledError) Error() string {
	r := e.Resource
	return fmt.Sprintf("the API server does not serve %s, kind %s: the CustomResourceDefinition %s is not installed (or does not serve %s); "+
		"install it with `kubectl apply -f %s` (from the jobkit repository) and start again",
		r.Kind.GroupVersion(), r.Kind.Kind, r.CRD, r.Kind.Version, r.Manifests)
}

func (e *NotInstalledError) Unwrap() error { return e.Err }

// IsNotInstalled reports whether err says that a Resource is not installed.
func IsNotInstalled(err error) bool {
	var nie *NotInstalledError
	return errors.As(err, &nie)
}

// Require asks mapper for r's kind: nil when the API server serves it, a
// *NotInstalledError when it does not, and another error, which names the kind,
// when the API server could not be asked.
func Require(mapper meta.RESTMapper, r Resource) error {
	if mapper == nil {
		return errors.New("crd: Require: the RESTMapper is nil")
	}
	_, err := mapper.RESTMapping(r.Kind.GroupKind(), r.Kind.Version)
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err):
		return &NotInstalledError{Resource: r, Err: err}
	}
	return fmt.Errorf("looking up %s, kind %s, in the API server: %w", r.Kind.GroupVersion(), r.Kind.Kind, err)
}
