// Command surface measures the public API of the core module: the exported
// package-level names (functions, types, constants, variables; methods and fields are
// not counted) of every non-internal package, pairs of exported names X and XFor, XOf,
// XNamed or XWith in one package (two doors for one operation), type aliases or
// defined types over a plain/ type outside plain/ (a mirror of the plain layer), and
// non-test files over the line limit. The test command prints its summary line.
//
//	go run ./hack/surface [-v] [-max-names N] [-max-lines N] [-strict]
//
// With -strict it exits 1 when the count is over -max-names, when a pair or a mirror
// exists, or when a file is over -max-lines; without it, it only reports.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// doorSuffixes are the endings of a second door beside X.
var doorSuffixes = []string{"For", "Of", "Named", "With"}

type report struct {
	names   map[string]map[string]bool // package dir -> exported names
	mirrors []string
	big     []string
}

func main() {
	verbose := flag.Bool("v", false, "list the names per package, the pairs, the mirrors and the long files")
	maxNames := flag.Int("max-names", 500, "the most exported package-level names the core may have")
	maxLines := flag.Int("max-lines", 400, "the most lines a non-test file of the core may have")
	strict := flag.Bool("strict", false, "exit 1 when a limit is broken")
	flag.Parse()

	r := &report{names: map[string]map[string]bool{}}
	if err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return r.enter(path, d.Name())
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		return r.file(path, *maxLines)
	}); err != nil {
		fmt.Fprintln(os.Stderr, "surface:", err)
		os.Exit(2)
	}

	total := 0
	dirs := make([]string, 0, len(r.names))
	for dir, names := range r.names {
		total += len(names)
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	pairs := r.pairs(dirs)
	sort.Strings(r.mirrors)
	sort.Strings(r.big)
	if *verbose {
		for _, dir := range dirs {
			fmt.Printf("  %-28s %4d\n", dir, len(r.names[dir]))
		}
		for _, p := range pairs {
			fmt.Println("  pair", p)
		}
		for _, m := range r.mirrors {
			fmt.Println("  mirror", m)
		}
		for _, b := range r.big {
			fmt.Println("  long file", b)
		}
	}
	fmt.Printf("surface: %d exported names in %d packages (limit %d), %d pairs, %d mirrors of plain types, %d files over %d lines\n",
		total, len(dirs), *maxNames, len(pairs), len(r.mirrors), len(r.big), *maxLines)
	if *strict && (total > *maxNames || len(pairs) > 0 || len(r.mirrors) > 0 || len(r.big) > 0) {
		os.Exit(1)
	}
}

// enter decides whether to walk into a directory: not hidden ones, testdata, vendor,
// internal packages (not public), hack, or nested modules.
func (r *report) enter(path, name string) error {
	if path == "." {
		return nil
	}
	if strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "internal" || path == "hack" {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}

func (r *report) file(path string, maxLines int) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if n := bytes.Count(src, []byte("\n")); n > maxLines {
		r.big = append(r.big, fmt.Sprintf("%s:%d", path, n))
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if f.Name.Name == "main" {
		return nil
	}
	dir := filepath.ToSlash(filepath.Dir(path))
	if r.names[dir] == nil {
		r.names[dir] = map[string]bool{}
	}
	plain := plainImports(f)
	inPlain := dir == "plain" || strings.HasPrefix(dir, "plain/")
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				r.names[dir][d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					r.names[dir][s.Name.Name] = true
					if !inPlain {
						if over := plainType(s.Type, plain); over != "" {
							r.mirrors = append(r.mirrors, fmt.Sprintf("%s: type %s over %s", dir, s.Name.Name, over))
						}
					}
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						r.names[dir][n.Name] = true
						if !inPlain && i < len(s.Values) {
							if over := plainType(s.Values[i], plain); over != "" {
								r.mirrors = append(r.mirrors, fmt.Sprintf("%s: %s = %s", dir, n.Name, over))
							}
						}
					}
				}
			}
		}
	}
	return nil
}

// plainImports returns the local names of the plain/ packages f imports.
func plainImports(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, im := range f.Imports {
		p := strings.Trim(im.Path.Value, `"`)
		if !strings.Contains(p, "/plain/") {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		out[name] = true
	}
	return out
}

// plainType returns "pkg.Name" when e is a plain package's selector (possibly
// instantiated: pkg.Name[T]), or "".
func plainType(e ast.Expr, plain map[string]bool) string {
	switch x := e.(type) {
	case *ast.IndexExpr:
		return plainType(x.X, plain)
	case *ast.IndexListExpr:
		return plainType(x.X, plain)
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok && plain[id.Name] {
			return id.Name + "." + x.Sel.Name
		}
	}
	return ""
}

// pairs lists the names X with a second door X+suffix in the same package.
func (r *report) pairs(dirs []string) []string {
	var out []string
	for _, dir := range dirs {
		names := r.names[dir]
		for n := range names {
			for _, suf := range doorSuffixes {
				if names[n+suf] {
					out = append(out, fmt.Sprintf("%s: %s/%s%s", dir, n, n, suf))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
