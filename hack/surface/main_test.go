package main

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// repo builds an in-memory repository: a core module at the root plus files.
func repo(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{"go.mod": {Data: []byte("module example.com/core\n")}}
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	return fsys
}

// counts is what a test reads of a surface: live names per module, pairs, mirrors,
// deprecated names.
type counts struct {
	modules    map[string]int
	pairs      []string
	mirrors    []string
	deprecated []string
}

func read(t *testing.T, fsys fstest.MapFS) counts {
	t.Helper()
	s, err := measure(fsys, 400)
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	c := counts{modules: map[string]int{}, pairs: s.pairs(), mirrors: s.mirrors(), deprecated: s.deprecatedNames()}
	for _, m := range s.modules {
		c.modules[m.dir] = m.count()
	}
	return c
}

func TestMeasure(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  counts
	}{
		{
			name: "package-level names count, methods, unexported names, tests and mains do not",
			files: map[string]string{
				"a/a.go": `package a
func F() {}
func f() {}
type T struct{}
func (T) M() {}
const C, c = 1, 2
var (
	V = 1
	W int
)
`,
				"a/a_test.go":  "package a\nfunc TestX() {}\nfunc Exported() {}\n",
				"tool/main.go": "package main\nfunc Exported() {}\n",
			},
			want: counts{modules: map[string]int{".": 5}},
		},
		{
			name: "internal, testdata, vendor and cmd are not importable; hack and examples are no library",
			files: map[string]string{
				"a/a.go":                 "package a\nfunc F() {}\n",
				"internal/x/x.go":        "package x\nfunc F() {}\n",
				"a/internal/y.go":        "package internal\nfunc F() {}\n",
				"a/testdata/t.go":        "package t\nfunc F() {}\n",
				"vendor/v/v.go":          "package v\nfunc F() {}\n",
				"cmd/c/lib.go":           "package lib\nfunc F() {}\n",
				"hack/h/h.go":            "package h\nfunc F() {}\n",
				"examples/go.mod":        "module example.com/core/examples\n",
				"examples/e/e.go":        "package e\nfunc F() {}\n",
				"hack/tools/go.mod":      "module example.com/core/hack/tools\n",
				"hack/tools/lib/lib.go":  "package lib\nfunc F() {}\n",
				"cmd/tool/go.mod":        "module example.com/core/cmd/tool\n",
				"cmd/tool/main.go":       "package main\nfunc F() {}\n",
				"cmd/tool/internal/i.go": "package i\nfunc F() {}\n",
			},
			want: counts{modules: map[string]int{".": 1}},
		},
		{
			name: "a nested module counts on its own, with its subpackages, not in the core",
			files: map[string]string{
				"a/a.go":                 "package a\nfunc F() {}\n",
				"integ/go.mod":           "module example.com/core/integ\n",
				"integ/integ.go":         "package integ\nfunc Setup() {}\ntype Options struct{}\n",
				"integ/metrics/m.go":     "package metrics\nfunc Register() {}\n",
				"integ/cmd/bins/main.go": "package main\nfunc F() {}\n",
				"cmd/tool/go.mod":        "module example.com/core/cmd/tool\n",
				"cmd/tool/main.go":       "package main\n",
				"cmd/tool/lib/go.mod":    "module example.com/core/cmd/tool/lib\n",
				"cmd/tool/lib/lib.go":    "package lib\nfunc Explain() {}\n",
			},
			want: counts{modules: map[string]int{".": 1, "integ": 3, "cmd/tool/lib": 1}},
		},
		{
			name: "pairs among functions, among one type's methods and its interface methods",
			files: map[string]string{
				"r/r.go": `package r
type Reconciler struct{}
func (*Reconciler) Sync() {}
func (*Reconciler) SyncFor() {}
func (*Reconciler) Get() {}
type Other struct{}
func (Other) GetWith() {}
type G[K comparable] struct{}
func (g *G[K]) Raise() {}
func (g *G[K]) RaiseOf() {}
type Client interface {
	Create()
	CreateNamed()
}
func Explain() {}
func ExplainWorkload() {}
func WorkloadOf() {}
func WorkloadOfMapping() {}
`,
			},
			want: counts{
				modules: map[string]int{".": 8},
				pairs: []string{
					"r: Client.Create/CreateNamed",
					"r: Explain/ExplainWorkload",
					"r: G.Raise/RaiseOf",
					"r: Reconciler.Sync/SyncFor",
					"r: WorkloadOf/WorkloadOfMapping",
				},
			},
		},
		{
			name: "Workload and Mapping pair doors, not nouns; For pairs any names",
			files: map[string]string{
				"r/r.go": `package r
type PodEvent struct{}
type PodEventMapping struct{}
func MapPodEvent() PodEventMapping { return PodEventMapping{} }
type Plan struct{}
func PlanWorkload() {}
type Options struct{}
type OptionsFor struct{}
`,
			},
			want: counts{modules: map[string]int{".": 7}, pairs: []string{"r: Options/OptionsFor"}},
		},
		{
			name: "deprecated names count nowhere and make no pair or mirror",
			files: map[string]string{
				"r/r.go": `package r
import pl "example.com/core/plain/x"

// Sync syncs.
func Sync() {}

// SyncFor syncs one.
//
// Deprecated: use Sync.
func SyncFor() {}

// Old is a mirror, going away.
//
// Deprecated: use pl.Thing.
type Old = pl.Thing

// Live mentions Deprecated: in the middle of a paragraph, so it is not deprecated.
func Live() {}

// Grouped constants.
//
// Deprecated: use Sync.
const (
	A = 1
	B = 2
)

// T is going away with its methods.
//
// Deprecated: no replacement.
type T struct{}

func (T) Do()    {}
func (T) DoWith() {}

type U struct{}

// Get gets.
func (U) Get() {}

// GetFor gets one.
//
// Deprecated: use Get.
func (U) GetFor() {}
`,
			},
			want: counts{
				modules:    map[string]int{".": 3},
				deprecated: []string{"r.A", "r.B", "r.Old", "r.SyncFor", "r.T", "r.U.GetFor"},
			},
		},
		{
			name: "a deprecated package doc deprecates every name of the package, in any file",
			files: map[string]string{
				"group/doc.go": "// Package group decides groups.\n//\n// Deprecated: use package groups.\npackage group\n",
				"group/a.go":   "package group\nfunc Decide() {}\nfunc DecideFor() {}\ntype R struct{}\nfunc (R) X() {}\nfunc (R) XOf() {}\n",
				"groups/a.go":  "package groups\nfunc Decide() {}\n",
			},
			want: counts{
				modules:    map[string]int{".": 1},
				deprecated: []string{"group.Decide", "group.DecideFor", "group.R"},
			},
		},
		{
			name: "a mirror of a plain type outside plain",
			files: map[string]string{
				"a/a.go":       "package a\nimport \"example.com/core/plain/x\"\ntype Set = x.Set\nvar Zero = x.Zero\n",
				"plain/y/y.go": "package y\nimport \"example.com/core/plain/x\"\ntype Set = x.Set\n",
			},
			want: counts{
				modules: map[string]int{".": 3},
				mirrors: []string{"a: Set over x.Set", "a: Zero over x.Zero"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := read(t, repo(tc.files))
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(counts{})); diff != "" {
				t.Errorf("measure (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrint(t *testing.T) {
	files := map[string]string{
		"a/a.go":         "package a\nfunc F() {}\nfunc G() {}\n",
		"integ/go.mod":   "module example.com/core/integ\n",
		"integ/integ.go": "package integ\nfunc Setup() {}\nfunc SetupFor() {}\n",
		"dep/dep.go":     "// Package dep.\n//\n// Deprecated: gone next release.\npackage dep\nfunc Old() {}\n",
	}
	tests := []struct {
		name     string
		budgets  map[string]int
		allowed  map[string]bool
		wantOK   bool
		wantHave []string
	}{
		{
			name:    "within budgets, the pair allowed",
			budgets: map[string]int{".": 2, "integ": 2},
			allowed: map[string]bool{"integ: Setup/SetupFor": true},
			wantOK:  true,
			wantHave: []string{
				"module .: 2 names (limit 2)\n",
				"module integ: 2 names (limit 2)\n",
				"1 deprecated names (removed next release)\n",
				"  deprecated dep.Old\n",
				"  allowed pair (issue 33) integ: Setup/SetupFor\n",
				"0 pairs (1 allowed)",
			},
		},
		{
			name:     "one module over its budget",
			budgets:  map[string]int{".": 2, "integ": 1},
			allowed:  map[string]bool{"integ: Setup/SetupFor": true},
			wantHave: []string{"module integ: 2 names (limit 1): OVER\n"},
		},
		{
			name:     "a module without a budget",
			budgets:  map[string]int{".": 2},
			allowed:  map[string]bool{"integ: Setup/SetupFor": true},
			wantHave: []string{"module integ: 2 names (no limit"},
		},
		{
			name:     "a pair not allowed",
			budgets:  map[string]int{".": 2, "integ": 2},
			wantHave: []string{"  pair integ: Setup/SetupFor\n", "1 pairs (0 allowed)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := measure(repo(files), 400)
			if err != nil {
				t.Fatalf("measure: %v", err)
			}
			var out bytes.Buffer
			ok := s.print(&out, true, 400, tc.budgets, tc.allowed)
			if ok != tc.wantOK {
				t.Errorf("print() = %v, want %v; output:\n%s", ok, tc.wantOK, out.String())
			}
			for _, w := range tc.wantHave {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "surface: ") {
				t.Errorf("last line = %q, want the summary", last)
			}
		})
	}
}

func TestLongFiles(t *testing.T) {
	long := "package a\n" + strings.Repeat("// x\n", 10)
	fsys := repo(map[string]string{
		"a/a.go":       long,
		"a/a_test.go":  long,
		"a/b.go":       "package a\n",
		"tool/main.go": "package main\n" + strings.Repeat("// x\n", 10),
	})
	s, err := measure(fsys, 5)
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	if diff := cmp.Diff([]string{"a/a.go:11", "tool/main.go:11"}, s.modules[0].big); diff != "" {
		t.Errorf("long files (-want +got):\n%s", diff)
	}
}
