package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// surface is what measure found: the importable modules, sorted by directory.
type surface struct {
	modules []*module
}

// module is one importable module and its importable packages, sorted by directory.
type module struct {
	dir  string
	pkgs []*pkg
	// big lists the non-test files over the line limit, as "path:lines".
	big []string
}

// pkg is one importable package.
type pkg struct {
	dir string // slash path from the repository root
	// deprecated is set when the package doc has a Deprecated: paragraph.
	deprecated bool
	names      map[string]*entry            // exported package-level names
	methods    map[string]map[string]*entry // exported type -> its exported methods
}

// entry is one exported name.
type entry struct {
	deprecated bool
	// fn is set for functions and methods.
	fn bool
	// mirror is the plain/ type the name is defined over, or "".
	mirror string
}

// measure walks the modules of the repository in fsys (its root is the repository's)
// and returns their surface.
func measure(fsys fs.FS, maxLines int) (*surface, error) {
	dirs, err := moduleDirs(fsys)
	if err != nil {
		return nil, err
	}
	s := &surface{}
	for _, dir := range dirs {
		m, err := measureModule(fsys, dir, maxLines)
		if err != nil {
			return nil, err
		}
		if len(m.pkgs) > 0 {
			s.modules = append(s.modules, m)
		}
	}
	return s, nil
}

// moduleDirs returns the directories (slash paths, "." for the root) that hold a
// go.mod, except those of notLibraries.
func moduleDirs(fsys fs.FS) ([]string, error) {
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if d.Name() == "go.mod" {
				out = append(out, path.Dir(p))
			}
			return nil
		}
		if p != "." && (skipped(d.Name()) || notLibrary(p)) {
			return fs.SkipDir
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// skipped reports whether a directory of this name never holds an importable
// package of any module.
func skipped(name string) bool {
	return strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "internal"
}

func notLibrary(dir string) bool {
	for _, n := range notLibraries {
		if dir == n || strings.HasPrefix(dir, n+"/") {
			return true
		}
	}
	return false
}

// measureModule reads the importable packages of the module in dir.
func measureModule(fsys fs.FS, dir string, maxLines int) (*module, error) {
	m := &module{dir: dir}
	byDir := map[string]*pkg{}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == dir {
				return nil
			}
			if skipped(d.Name()) || d.Name() == "cmd" || notLibrary(p) {
				return fs.SkipDir
			}
			if _, err := fs.Stat(fsys, path.Join(p, "go.mod")); err == nil {
				return fs.SkipDir // a module of its own
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		return m.file(fsys, p, byDir, maxLines)
	})
	if err != nil {
		return nil, err
	}
	for _, p := range byDir {
		p.settle()
		m.pkgs = append(m.pkgs, p)
	}
	sort.Slice(m.pkgs, func(i, j int) bool { return m.pkgs[i].dir < m.pkgs[j].dir })
	sort.Strings(m.big)
	return m, nil
}

// file reads the exported names of one non-test Go file into its package.
func (m *module) file(fsys fs.FS, p string, byDir map[string]*pkg, maxLines int) error {
	src, err := fs.ReadFile(fsys, p)
	if err != nil {
		return err
	}
	f, err := parser.ParseFile(token.NewFileSet(), p, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	if n := bytes.Count(src, []byte("\n")); n > maxLines {
		m.big = append(m.big, fmt.Sprintf("%s:%d", p, n))
	}
	if f.Name.Name == "main" {
		return nil
	}
	dir := path.Dir(p)
	pk := byDir[dir]
	if pk == nil {
		pk = &pkg{dir: dir, names: map[string]*entry{}, methods: map[string]map[string]*entry{}}
		byDir[dir] = pk
	}
	if deprecated(f.Doc) {
		pk.deprecated = true
	}
	plain := plainImports(f)
	inPlain := dir == "plain" || strings.HasPrefix(dir, "plain/")
	mirror := func(e ast.Expr) string {
		if inPlain {
			return ""
		}
		return plainType(e, plain)
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				pk.names[d.Name.Name] = &entry{deprecated: deprecated(d.Doc), fn: true}
				continue
			}
			if recv := receiver(d.Recv); ast.IsExported(recv) {
				pk.method(recv, d.Name.Name, deprecated(d.Doc))
			}
		case *ast.GenDecl:
			// The doc of a declaration group is every member's.
			groupDeprecated := deprecated(d.Doc)
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					pk.names[s.Name.Name] = &entry{
						deprecated: groupDeprecated || deprecated(s.Doc),
						mirror:     mirror(s.Type),
					}
					if it, ok := s.Type.(*ast.InterfaceType); ok {
						for _, fl := range it.Methods.List {
							for _, n := range fl.Names {
								if n.IsExported() {
									pk.method(s.Name.Name, n.Name, deprecated(fl.Doc))
								}
							}
						}
					}
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						e := &entry{deprecated: groupDeprecated || deprecated(s.Doc)}
						if i < len(s.Values) {
							e.mirror = mirror(s.Values[i])
						}
						pk.names[n.Name] = e
					}
				}
			}
		}
	}
	return nil
}

func (p *pkg) method(recv, name string, dep bool) {
	if p.methods[recv] == nil {
		p.methods[recv] = map[string]*entry{}
	}
	p.methods[recv][name] = &entry{deprecated: dep, fn: true}
}

// settle spreads deprecation once every file is read: a deprecated package deprecates
// its names, a deprecated type its methods.
func (p *pkg) settle() {
	for recv, ms := range p.methods {
		t := p.names[recv]
		for _, e := range ms {
			if p.deprecated || (t != nil && t.deprecated) {
				e.deprecated = true
			}
		}
	}
	if p.deprecated {
		for _, e := range p.names {
			e.deprecated = true
		}
	}
}

// deprecated reports whether a doc comment has a paragraph that starts with
// "Deprecated:", the Go convention for a name kept only for compatibility.
func deprecated(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, para := range strings.Split(doc.Text(), "\n\n") {
		if strings.HasPrefix(strings.TrimSpace(para), "Deprecated:") {
			return true
		}
	}
	return false
}

// receiver returns the name of a method's receiver type (T for T, *T, T[K] or *T[K]).
func receiver(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	e := fl.List[0].Type
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
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
