package jobsetmod_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/examples/jobset/upstream/internal/jobsetmod"
)

// The module's directory holds JobSet's CRD and its controller's integration
// suite, which the tests read from there.
func TestDirHoldsTheCRDAndTheSuite(t *testing.T) {
	dir, err := jobsetmod.Dir()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(filepath.ToSlash(dir), "sigs.k8s.io/jobset@v") {
		t.Errorf("Dir() = %s, want a directory of the module cache (sigs.k8s.io/jobset@<version>)", dir)
	}
	crds, err := jobsetmod.CRDDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{
		filepath.Join(crds, "jobset.x-k8s.io_jobsets.yaml"),
		filepath.Join(dir, "test", "integration", "controller", "jobset_controller_test.go"),
	} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func ExampleCRDDir() {
	dir, err := jobsetmod.CRDDir()
	if err != nil {
		fmt.Println(err)
		return
	}
	rel := filepath.ToSlash(dir)
	fmt.Println(rel[strings.Index(rel, "/config/"):])
	// Output:
	// /config/components/crd/bases
}
