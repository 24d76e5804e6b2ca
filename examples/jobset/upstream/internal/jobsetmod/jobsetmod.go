// Package jobsetmod finds the module sigs.k8s.io/jobset in the Go module
// cache, at the version the module around the caller's working directory
// builds with (`go list -m`): the tests read JobSet's CRD and its
// integration suite from there, never from a copy in the repository. Dir runs
// the go command (tens of milliseconds) and is safe for concurrent use.
package jobsetmod

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Path is JobSet's module path.
const Path = "sigs.k8s.io/jobset"

// Dir returns the directory of sigs.k8s.io/jobset in the module cache, at the
// version the build list of the working directory's module holds.
func Dir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", Path).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("jobsetmod: go list -m %s: %w", Path, err)
	}
	dir := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("jobsetmod: %s is not in the module cache (%q): %w", Path, dir, err)
	}
	return dir, nil
}

// CRDDir returns the directory of JobSet's CustomResourceDefinition in the
// module (config/components/crd/bases), the one JobSet's own tests install.
func CRDDir() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config", "components", "crd", "bases"), nil
}
