// Command facts checks that each known fact about Jobs and pods is computed in one
// place (its home) and nowhere else in the repository's non-test Go files (every
// module). Each fact is recognised by the shape of the code that computes it; a line
// of that shape outside the fact's home is reported with its file and line. The test
// command (hack/test.sh) runs it strict: a fact computed outside its home fails it.
//
//	go run ./hack/facts [-strict]
//
// With -strict it exits 1 when any fact is computed outside its home; without, it
// only reports. A fact is recognised however its test is
// spelled: "A or B" and its negation "not A and not B" (Phase != Succeeded && Phase
// != Failed is "pod terminal" too).
//
// Exempt by design: package sim's reference model (sim/model*.go), which must stay
// independent of the code it checks, and files under testdata.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// fact is one fact with its home and the shapes of code that compute it.
type fact struct {
	// id names the fact in tests.
	id   string
	name string
	// home lists the files (slash paths from the repository root) allowed to compute
	// the fact.
	home []string
	// shapes are regular expressions over one line of code (comments stripped).
	shapes []*regexp.Regexp
}

var facts = []fact{
	{
		id:   "job-finished",
		name: "Job finished (Complete or Failed true)",
		home: []string{"jobstatus/conditions.go"},
		shapes: res(
			`JobComplete\s*\|\|.*JobFailed`,
			`JobFailed\s*\|\|.*JobComplete`,
			`\{\s*batchv1\.JobComplete,\s*batchv1\.JobFailed\s*\}`,
			`!=\s*batchv1\.JobComplete\s*&&.*!=\s*batchv1\.JobFailed`,
			`!=\s*batchv1\.JobFailed\s*&&.*!=\s*batchv1\.JobComplete`,
			`case\s+batchv1\.JobComplete,\s*batchv1\.JobFailed\s*:`,
			`case\s+batchv1\.JobFailed,\s*batchv1\.JobComplete\s*:`,
		),
	},
	{
		id:   "group-finished",
		name: "group of roles finished (Completed or Failed true)",
		// plain/group/condition.go over plain conditions, groups/state.go over API
		// conditions (the Kubernetes layer converts, the rule is plain/group's).
		home: []string{"plain/group/condition.go", "groups/state.go"},
		shapes: res(
			`ConditionCompleted\s*\|\|.*ConditionFailed`,
			`ConditionFailed\s*\|\|.*ConditionCompleted`,
			`\{\s*"Completed",\s*"Failed"\s*\}`,
			`\{\s*"Failed",\s*"Completed"\s*\}`,
			`\{\s*[a-z]*\.?ConditionCompleted,\s*[a-z]*\.?ConditionFailed\s*\}`,
			`case\s+[a-z]*\.?ConditionCompleted,\s*[a-z]*\.?ConditionFailed\s*:`,
		),
	},
	{
		id:   "pod-terminal",
		name: "pod terminal (Succeeded or Failed)",
		home: []string{"internal/podutil/podutil.go"},
		shapes: res(
			`Phase\s*==\s*corev1\.PodSucceeded\s*\|\|.*Phase\s*==\s*corev1\.PodFailed`,
			`Phase\s*==\s*corev1\.PodFailed\s*\|\|.*Phase\s*==\s*corev1\.PodSucceeded`,
			`Phase\s*!=\s*corev1\.PodSucceeded\s*&&.*Phase\s*!=\s*corev1\.PodFailed`,
			`Phase\s*!=\s*corev1\.PodFailed\s*&&.*Phase\s*!=\s*corev1\.PodSucceeded`,
			`case\s+corev1\.PodSucceeded,\s*corev1\.PodFailed\s*:`,
			`case\s+corev1\.PodFailed,\s*corev1\.PodSucceeded\s*:`,
		),
	},
	{
		id:   "replacement-default",
		name: "podReplacementPolicy default",
		home: []string{"plan/spec.go"},
		shapes: res(
			`(:=|=|return)\s*batchv1\.TerminatingOrFailed\s*$`,
		),
	},
	{
		id:   "has-finalizer",
		name: "has the tracking finalizer",
		home: []string{"owner/owner.go"},
		shapes: res(
			`slices\.Contains\([^,]*Finalizers,`,
			`[!=]=\s*batchv1\.JobTrackingFinalizer`,
		),
	},
	{
		id:   "version-order",
		name: "resourceVersion ordering",
		home: []string{"reconcile/readyourwrites.go"},
		shapes: res(
			`strconv\.ParseUint\([^)]*[vV]ersion`,
		),
	},
	{
		id:   "managed-by",
		name: "managed by this controller (spec.managedBy)",
		// finalizers/orphan.go: package plan imports finalizers, so the orphan
		// decision cannot call plan.Workload.Controller.
		home: []string{"plan/compute.go", "finalizers/orphan.go"},
		shapes: res(
			`ManagedBy\s*==\s*nil`,
			`\*[a-zA-Z.]*ManagedBy\s*[!=]=`,
			`Deref\([^)]*ManagedBy,\s*batchv1\.JobControllerName\)`,
		),
	},
	{
		id:   "later-failure",
		name: "the later failure of an index (failure counts, then finish time)",
		home: []string{"backoff/finish.go"},
		shapes: res(
			`(backoff\.)?FinishTime\([^)]*\)\.(Before|After)\(\s*(backoff\.)?FinishTime\(`,
		),
	},
	{
		id:   "want-active",
		name: "wanted active pods (wantActive: the completions left, at most parallelism)",
		home: []string{"plain/active/active.go"},
		shapes: res(
			`min\([^,]*[cC]ompletions\s*-[^,]*[sS]ucceeded[^,]*,[^)]*[pP]arallelism`,
			`min\([^,]*[pP]arallelism[^,]*,[^)]*[cC]ompletions\s*-[^,)]*[sS]ucceeded`,
		),
	},
	{
		id:   "create-error",
		name: "what a pod-create error means (terminal, retry, a pod to adopt)",
		home: []string{"singlepod/runplan/createerror.go"},
		shapes: res(
			// a 4xx range test
			`>=\s*(400|http\.StatusBadRequest)\s*&&[^&]*<\s*500`,
			// 409 AlreadyExists told from another 409
			`StatusConflict\s*&&[^&]*AlreadyExists`,
			`AlreadyExists\s*&&[^&]*StatusConflict`,
			// AlreadyExists judged by whether the pod's name was its own
			`Name\s*[!=]=\s*""\s*(&&|\|\|).*IsAlreadyExists\(`,
			`IsAlreadyExists\([^)]*\)\s*(&&|\|\|).*Name\s*[!=]=\s*""`,
			// a class of runplan's mapped onto another
			`case\s+(runplan\.)?CreateError(None|Retry|Exists|Terminal)\s*[:,]`,
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
	var found []hit
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
		fh, err := os.Open(path)
		if err != nil {
			return err
		}
		defer fh.Close()
		hits, err := scan(path, fh)
		found = append(found, hits...)
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "facts:", err)
		os.Exit(2)
	}
	for _, h := range found {
		fmt.Println(h)
	}
	fmt.Printf("facts: %d known facts, %d computations outside their home\n", len(facts), len(found))
	if *strict && len(found) > 0 {
		os.Exit(1)
	}
}

// hit is one line that computes a fact outside its home.
type hit struct {
	path string
	line int
	fact *fact
}

func (h hit) String() string {
	return fmt.Sprintf("%s:%d: %s computed outside its home (%s)", h.path, h.line, h.fact.name, strings.Join(h.fact.home, ", "))
}

func exempt(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(path, "sim/model") || strings.HasPrefix(path, "internal/sim/model") ||
		strings.HasPrefix(path, "hack/facts/") || strings.HasPrefix(base, "zz_generated")
}

// scan returns the lines of the file at path, read from r, that compute a fact
// outside its home.
func scan(path string, r io.Reader) ([]hit, error) {
	var out []hit
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := code(sc.Text())
		if line == "" {
			continue
		}
		for i := range facts {
			f := &facts[i]
			if home(*f, path) {
				continue
			}
			if f.matches(line) {
				out = append(out, hit{path: path, line: n, fact: f})
			}
		}
	}
	return out, sc.Err()
}

// matches reports whether one line of code (comments stripped) has a shape of f.
func (f *fact) matches(line string) bool {
	for _, re := range f.shapes {
		if re.MatchString(line) {
			return true
		}
	}
	return false
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
