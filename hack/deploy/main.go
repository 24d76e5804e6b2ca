// Command deploy writes, for each example controller, what a user installs it
// from, generated from the controller's kustomize base (examples/*/config, in
// kubebuilder v4's layout; see docs/deploy.md):
//
//   - dist/NAME/install.yaml: `kustomize build config/default`, one file for
//     `kubectl apply -f` (kubebuilder's `make build-installer`);
//   - dist/NAME/install-VARIANT.yaml: `kustomize build config/VARIANT`, an
//     overlay of config/default a controller offers besides it (jobset-upstream's
//     side-by-side);
//   - dist/NAME/chart: a Helm chart of the same objects, one template per object,
//     with the Namespace left to the release (`helm install -n NS
//     --create-namespace`), the image, its pull policy and the replicas as values,
//     the CRD behind crd.enable, and the objects of the optional bases
//     (../network-policy, ../prometheus: commented out in config/default) behind
//     networkPolicy.enable and prometheus.enable, off by default.
//
// Usage:
//
//	go run ./hack/deploy          rewrite dist/ (make build-installer)
//	go run ./hack/deploy -check   fail, naming each file, when dist/ differs
//
// The bases are rendered by the kustomize pinned in hack/tools (`go tool
// kustomize`, as the deploy tests of examples/internal/deploytest render them);
// this program itself uses the standard library only. The templates use no
// function of Helm's (only .Values, .Release.Namespace and .Release.Service, with
// if), so that the deploy tests render them with text/template and compare the
// result with the kustomize output. hack/generate.sh runs it after regenerating
// the RBAC; its -check is part of the test command.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// controller is one deployable command.
type controller struct {
	// name is the binary's (and the image's, and dist/'s directory's) name.
	name string
	// config is the directory of its kustomize bases, from the repository root.
	config string
	// what describes it in the chart.
	what string
}

// variant is an overlay of a controller's config/default.
type variant struct {
	// dir is the overlay's directory under the controller's config, and the
	// VARIANT of its install file's name.
	dir string
	// what says what it changes.
	what string
	// path is the overlay's directory from the repository root when it lies
	// outside the controller's config (the Kueue overlays of examples/kueue,
	// whose commands live in that module); empty: config/dir.
	path string
}

// controllers are the controller commands of the repository, each with a base.
// The other commands (cmd/jobkit, controllerruntime/cmd/jobkit-envtest,
// examples/demo) are tools, never deployed.
var controllers = []controller{
	{"jobkit-controller-runtime", "examples/controllerruntime/config", "jobkit's batch/v1 Job controller on controller-runtime"},
	{"jobkit-clientgo", "examples/clientgo/config", "jobkit's batch/v1 Job controller on client-go"},
	{"trainingjob-controller", "examples/trainingjob/config", "the TrainingJob example controller and its CRD"},
	{"jobset-controller", "examples/jobset/config", "the JobSet example controller and its CRD"},
	{"plank", "examples/plank/config", "the RunJob (single-pod jobs) example controller and its CRD"},
	{"jobset-upstream", "examples/jobset/upstream/config", "the JobSet example controller on JobSet's own API (jobset.x-k8s.io) in place of JobSet's controller, without JobSet's CRD (JobSet's release installs it)"},
}

// variants are the overlays of config/default that a controller (by name)
// offers besides it, each written to dist/NAME/install-VARIANT.yaml; the chart
// is config/default's alone.
var variants = map[string][]variant{
	"jobset-upstream":        {{"side-by-side", "beside JobSet's controller, syncing only the JobSets whose spec.managedBy is jobkit.dev/jobset-controller", ""}},
	"trainingjob-controller": {{"kueue", "queued by Kueue (examples/kueue's command, --kueue, the Kueue Configuration mounted, the RBAC of Kueue's job reconciler)", "examples/kueue/config/trainingjob"}},
	"jobset-controller":      {{"kueue", "queued by Kueue (examples/kueue's command, --kueue, the Kueue Configuration mounted, the RBAC of Kueue's job reconciler)", "examples/kueue/config/jobset"}},
}

// optional are the bases config/default lists commented out, each with the value
// that turns its objects on in the chart and the kinds it holds.
var optional = []struct{ base, value, kind string }{
	{"network-policy", "networkPolicy", "NetworkPolicy"},
	{"prometheus", "prometheus", "ServiceMonitor"},
}

func main() {
	check := flag.Bool("check", false, "compare dist/ with what the bases generate instead of writing it")
	flag.Parse()
	root, err := repoRoot()
	if err == nil {
		err = run(root, *check)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hack/deploy:", err)
		os.Exit(1)
	}
}

// run generates dist/ for every controller and writes it, or with check
// compares it with the files on disk.
func run(root string, check bool) error {
	var stale []string
	for _, c := range controllers {
		files, err := generate(root, c)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		dir := filepath.Join(root, "dist", c.name)
		if check {
			for _, f := range compare(dir, files) {
				rel, _ := filepath.Rel(root, f)
				stale = append(stale, rel)
			}
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		for path, data := range files {
			p := filepath.Join(dir, path)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
		}
		fmt.Printf("wrote dist/%s (install.yaml and chart/, %d files)\n", c.name, len(files))
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		return fmt.Errorf("dist/ is stale (run make build-installer):\n  %s", strings.Join(stale, "\n  "))
	}
	if check {
		fmt.Println("dist/ is up to date")
	}
	return nil
}

// compare returns the files under dir that differ from files (paths relative to
// dir), are missing, or are not generated.
func compare(dir string, files map[string][]byte) []string {
	var stale []string
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil || !bytes.Equal(got, want) {
			stale = append(stale, filepath.Join(dir, path))
		}
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if _, ok := files[rel]; !ok {
			stale = append(stale, p+" (not generated)")
		}
		return nil
	})
	return stale
}

// generate renders c's bases and returns the files of dist/NAME by their paths
// in it.
func generate(root string, c controller) (map[string][]byte, error) {
	config := filepath.Join(root, c.config)
	base, err := kustomize(root, filepath.Join(config, "default"))
	if err != nil {
		return nil, err
	}
	// The optional bases: config/ copied with their lines uncommented, as a user
	// turns them on.
	tmp, err := os.MkdirTemp("", "jobkit-deploy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, os.DirFS(config)); err != nil {
		return nil, err
	}
	k := filepath.Join(tmp, "default", "kustomization.yaml")
	data, err := os.ReadFile(k)
	if err != nil {
		return nil, err
	}
	for _, o := range optional {
		line := "#- ../" + o.base + "\n"
		if !bytes.Contains(data, []byte(line)) {
			return nil, fmt.Errorf("%s/default/kustomization.yaml: no line %q", c.config, strings.TrimSpace(line))
		}
		data = bytes.Replace(data, []byte(line), []byte(line[1:]), 1)
	}
	if err := os.WriteFile(k, data, 0o644); err != nil {
		return nil, err
	}
	full, err := kustomize(root, filepath.Join(tmp, "default"))
	if err != nil {
		return nil, err
	}
	install := []byte(fmt.Sprintf("# The install manifest of %s: %s.\n# Generated by hack/deploy (make build-installer) from %s/default; do not edit.\n#\n#   kubectl apply -f dist/%s/install.yaml\n", c.name, c.what, c.config, c.name))
	files := map[string][]byte{"install.yaml": append(install, base...)}
	for _, v := range variants[c.name] {
		from := c.config + "/" + v.dir
		if v.path != "" {
			from = v.path
		}
		out, err := kustomize(root, filepath.Join(root, from))
		if err != nil {
			return nil, err
		}
		name := "install-" + v.dir + ".yaml"
		head := fmt.Sprintf("# The install manifest of %s %s.\n# Generated by hack/deploy (make build-installer) from %s; do not edit.\n#\n#   kubectl apply -f dist/%s/%s\n", c.name, v.what, from, c.name, name)
		files[name] = append([]byte(head), out...)
	}
	chart, err := chartFiles(c, documents(base), documents(full))
	if err != nil {
		return nil, err
	}
	for p, d := range chart {
		files[filepath.Join("chart", p)] = d
	}
	return files, nil
}

// kustomize runs `kustomize build dir` with the kustomize of hack/tools.
func kustomize(root, dir string) ([]byte, error) {
	cmd := exec.Command("go", "tool", "kustomize", "build", dir)
	// The tools module alone: the workspace must not take part in resolving it.
	cmd.Dir, cmd.Env = filepath.Join(root, "hack", "tools"), append(os.Environ(), "GOWORK=off")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w\n%s", dir, err, errOut.String())
	}
	return out.Bytes(), nil
}

// repoRoot is the directory of the go.work above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.work above the working directory: run it inside the repository")
		}
		dir = parent
	}
}
