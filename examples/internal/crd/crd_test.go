package crd_test

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jobkit/jobkit/examples/internal/crd"
)

var jobSets = crd.Resource{
	Kind:      schema.GroupVersionKind{Group: "jobset.examples.jobkit.dev", Version: "v1alpha2", Kind: "JobSet"},
	CRD:       "jobsets.jobset.examples.jobkit.dev",
	Manifests: "examples/jobset/config/crd/",
}

// failing is a RESTMapper whose every answer is err.
type failing struct {
	meta.RESTMapper
	err error
}

func (f failing) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, f.err
}

func TestRequire(t *testing.T) {
	served := meta.NewDefaultRESTMapper(nil)
	served.Add(jobSets.Kind, meta.RESTScopeNamespace)
	otherVersion := meta.NewDefaultRESTMapper(nil)
	otherVersion.Add(schema.GroupVersionKind{Group: jobSets.Kind.Group, Version: "v1alpha1", Kind: "JobSet"}, meta.RESTScopeNamespace)
	refused := errors.New("connection refused")
	tests := []struct {
		name             string
		mapper           meta.RESTMapper
		wantNotInstalled bool
		wantErr          []string // each in the error; none: no error
		wantIs           error
	}{
		{name: "served", mapper: served},
		{name: "no such group", mapper: meta.NewDefaultRESTMapper(nil), wantNotInstalled: true, wantErr: []string{
			"the API server does not serve jobset.examples.jobkit.dev/v1alpha2, kind JobSet",
			"the CustomResourceDefinition jobsets.jobset.examples.jobkit.dev is not installed",
			"kubectl apply -f examples/jobset/config/crd/",
		}},
		{name: "another version only", mapper: otherVersion, wantNotInstalled: true, wantErr: []string{"or does not serve v1alpha2"}},
		{name: "API server unreachable", mapper: failing{err: refused}, wantIs: refused, wantErr: []string{
			"looking up jobset.examples.jobkit.dev/v1alpha2, kind JobSet, in the API server: connection refused",
		}},
		{name: "no mapper", mapper: nil, wantErr: []string{"crd: Require: the RESTMapper is nil"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := crd.Require(tt.mapper, jobSets)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Require() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Require() = nil, want an error containing %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Require() = %v, want it to contain %q", err, want)
				}
			}
			if got := crd.IsNotInstalled(err); got != tt.wantNotInstalled {
				t.Errorf("IsNotInstalled(%v) = %v, want %v", err, got, tt.wantNotInstalled)
			}
			if tt.wantNotInstalled && !meta.IsNoMatchError(err) {
				t.Errorf("Require() = %v: does not unwrap to the RESTMapper's NoKindMatchError", err)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Require() = %v, want it to wrap %v", err, tt.wantIs)
			}
		})
	}
}
