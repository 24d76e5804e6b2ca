package explain_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

// FuzzParseAssumption checks that any --assume value either parses into an
// assumption that writes itself back to an equal one, or is refused with
// ErrBadAssumption; never a panic.
func FuzzParseAssumption(f *testing.F) {
	for _, s := range []string{"index=3:fail:exit=42", "oldest=2:succeed", "newest=1:fail:condition=DisruptionTarget", "pod=a:delete", "all:ready", "index=:fail", "::", "all:fail:exit=2147483648"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := explain.ParseAssumption(s)
		if err != nil {
			if !strings.Contains(err.Error(), "bad --assume") {
				t.Fatalf("ParseAssumption(%q) error %v does not say bad --assume", s, err)
			}
			return
		}
		b, err := explain.ParseAssumption(a.String())
		if err != nil || a != b {
			t.Fatalf("ParseAssumption(%q) = %+v, whose String %q parses to %+v, %v", s, a, a.String(), b, err)
		}
	})
}

// FuzzExplain reads any YAML as the Job and its pods and explains it: it must give
// an error or a report that renders, never a panic. The seeds are the fixtures of
// the golden tests.
func FuzzExplain(f *testing.F) {
	files, _ := filepath.Glob("../testdata/*.yaml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var objs explain.Objects
		if err := explain.ReadObjects("fuzz.yaml", bytes.NewReader(in), &objs); err != nil {
			return
		}
		job, err := objs.Pick("", "")
		if err != nil {
			return
		}
		r, err := explain.Explain(plan.JobWorkload(job), objs.Pods, explain.Options{Now: t0})
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := r.Text(&out); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzExplainOwner reads any YAML as a TrainingJob and its pods, by a Job's field
// names, and explains it: WorkloadOf either reads the object or refuses it with
// ErrBadOwner, and the explanation is an error or a report that renders, never a
// panic.
func FuzzExplainOwner(f *testing.F) {
	files, _ := filepath.Glob("../testdata/*.yaml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	kind := owner.Kind{Group: "ml.examples.jobkit.dev", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.examples.jobkit.dev/worker-tracking"}
	f.Fuzz(func(t *testing.T, in []byte) {
		objs := explain.Objects{Owner: kind}
		if err := explain.ReadObjects("fuzz.yaml", bytes.NewReader(in), &objs); err != nil {
			return
		}
		obj, err := objs.PickOwner("", "")
		if err != nil {
			return
		}
		w, err := explain.WorkloadOf(obj, nil)
		if err != nil {
			if !errors.Is(err, explain.ErrBadOwner) {
				t.Fatalf("WorkloadOf error %v is not ErrBadOwner", err)
			}
			return
		}
		r, err := explain.Explain(&w, objs.Pods, explain.Options{Now: t0, Owner: kind})
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := r.Text(&out); err != nil {
			t.Fatal(err)
		}
	})
}
