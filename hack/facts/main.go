// Command facts checks that each known fact about Jobs and pods is computed in one
// place (its home) and nowhere else in the repository's non-test Go files (every
// module). Each fact is recognised by the shape of the code that computes it; a line
// of that shape outside the fact's home is reported with its file and line. The test
// command (hack/test.sh) runs it strict: a fact computed outside its home fails it.
//
//	go run ./hack/facts [-strict]
//
// With -strict it exits 1 when any fact is computed outside its home; without, it
// only reports.
//
// Exempt by design: package sim's reference model (sim/model*.go), which must stay
// independent of the code it checks, and files under testdata.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// fact is one fact with its home and the shapes of code that compute it.
type fact struct {
	name string
	// home lists the files (slash paths from the repository root) allowed to compute
	// the fact.
	home []string
	// shapes are regular expressions over one line of code (comments stripped).
	shapes []*regexp.Regexp
}

var facts = []fact{
	{
		name: "Job finished (Complete or Failed true)",
		home: []string{"jobstatus/conditions.go"},
		shapes: res(
			`JobComplete\s*\|\|.*JobFailed`,
			`JobFailed\s*\|\|.*JobComplete`,
			`\{\s*batchv1\.JobComplete,\s*batchv1\.JobFailed\s*\}`,
		),
	},
	{
		name: "pod terminal (Succeeded or Failed)",
		home: []string{"internal/podutil/podutil.go"},
		shapes: res(
			`Phase == corev1\.PodSucceeded\s*\|\|.*Phase == corev1\.PodFailed`,
			`Phase == corev1\.PodFailed\s*\|\|.*Phase == corev1\.PodSucceeded`,
		),
	},
	{
		name: "podReplacementPolicy default",
		home: []string{"plan/spec.go"},
		shapes: res(
			`(:=|=|return)\s*batchv1\.TerminatingOrFailed\s*$`,
		),
	},
	{
		name: "has the tracking finalizer",
		home: []string{"owner/owner.go"},
		shapes: res(
			`slices\.Contains\([^,]*Finalizers,`,
			`==\s*batchv1\.JobTrackingFinalizer`,
		),
	},
	{
		name: "resourceVersion ordering",
		home: []string{"reconcile/readyourwrites.go"},
		shapes: res(
			`strconv\.ParseUint\([^)]*[vV]ersion`,
		),
	},
	{
		name: "managed by this controller (spec.managedBy)",
		// finalizers/orphan.go: package plan imports finalizers, so the orphan
		// decision cannot call plan.Workload.Controller.
		home: []string{"plan/compute.go", "finalizers/orphan.go"},
		shapes: res(
			`ManagedBy\s*==\s*nil`,
			`\*[a-zA-Z.]*ManagedBy\s*==`,
			`Deref\([^)]*ManagedBy,\s*batchv1\.JobControllerName\)`,
		),
	},
	{
		name: "the later failure of an index (failure counts, then finish time)",
		home: []string{"backoff/finish.go"},
		shapes: res(
			`!\s*(backoff\.)?FinishTime\([^)]*\)\.Before\(\s*(backoff\.)?FinishTime\(`,
		),
	},
}

func res(exprs ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(exprs))
	for i, e := range exprs {
		out[i] = regexp.MustCompile(e)
	}
	return out
}

func main() {
	strict := flag.Bool("strict", false, "exit 1 when a fact is computed outside its home")
	flag.Parse()
	var found []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		path = filepath.ToSlash(path)
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || exempt(path) {
			return nil
		}
		hits, err := scan(path)
		found = append(found, hits...)
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "facts:", err)
		os.Exit(2)
	}
	for _, f := range found {
		fmt.Println(f)
	}
	fmt.Printf("facts: %d known facts, %d computations outside their home\n", len(facts), len(found))
	if *strict && len(found) > 0 {
		os.Exit(1)
	}
}

func exempt(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(path, "sim/model") || strings.HasPrefix(path, "internal/sim/model") ||
		strings.HasPrefix(path, "hack/facts/") || strings.HasPrefix(base, "zz_generated")
}

func scan(path string) ([]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := code(sc.Text())
		if line == "" {
			continue
		}
		for _, f := range facts {
			if home(f, path) {
				continue
			}
			for _, re := range f.shapes {
				if re.MatchString(line) {
					out = append(out, fmt.Sprintf("%s:%d: %s computed outside its home (%s)", path, n, f.name, strings.Join(f.home, ", ")))
					break
				}
			}
		}
	}
	return out, sc.Err()
}

func home(f fact, path string) bool {
	for _, h := range f.home {
		if path == h {
			return true
		}
	}
	return false
}

// code returns line without a trailing // comment (a // inside a string is rare
// enough in these shapes to ignore) and without surrounding space.
func code(line string) string {
	if i := strings.Index(line, "//"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}
