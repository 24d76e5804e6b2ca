// Command modproxy writes a file-based Go module proxy (the directory layout that
// GOPROXY=file://DIR reads) that serves modules of this repository at one version, as
// tagging that version would publish them: the core as vX.Y.Z, each nested module as
// <dir>/vX.Y.Z, every requirement of one of these modules on another set to vX.Y.Z (what
// the release commit holds), and each module's zip holding the files of its directory
// minus those of the modules nested inside it. hack/release-check.sh installs and imports
// the modules from it.
//
//	go run ./hack/modproxy -out DIR -version v0.1.0 . cmd/jobkit cmd/jobkit/explain ...
//
// The files are those git lists (committed and untracked, ignored ones left out), so the
// working tree is what is checked. A module whose go.mod holds a replace directive is an
// error: go install refuses such a module, and go get ignores the directive.
//
// It imports only the standard library (it lives in the core module).
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
)

func main() {
	out := flag.String("out", "", "directory of the proxy to write (created; its module directories are replaced)")
	version := flag.String("version", "", "the version to serve every module at, vMAJOR.MINOR.PATCH[-PRERELEASE]")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: modproxy -out DIR -version vX.Y.Z MODULE-DIR...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*out, *version, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

// semver is a release version, or a pre-release of one (the release check serves
// each tree as vX.Y.Z-check.h<hash>).
var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

func run(out, version string, dirs []string) error {
	if out == "" {
		return errors.New("-out is required")
	}
	if !semver.MatchString(version) {
		return fmt.Errorf("-version %q: want vMAJOR.MINOR.PATCH[-PRERELEASE], e.g. v0.1.0", version)
	}
	if len(dirs) == 0 {
		return errors.New("no module directory given")
	}
	listed, err := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	files := strings.Fields(string(listed))
	root := os.DirFS(".")
	mods := make([]module, 0, len(dirs))
	local := map[string]bool{}
	for _, dir := range dirs {
		dir = path.Clean(filepath.ToSlash(dir))
		data, err := fs.ReadFile(root, path.Join(dir, "go.mod"))
		if err != nil {
			return fmt.Errorf("module directory %q: %w", dir, err)
		}
		p := modulePath(data)
		if p == "" {
			return fmt.Errorf("%s/go.mod: no module line", dir)
		}
		mods = append(mods, module{dir: dir, path: p, goMod: data})
		local[p] = true
	}
	when := time.Now().UTC().Truncate(time.Second)
	for _, m := range mods {
		gomod, err := rewriteGoMod(m.goMod, local, version)
		if err != nil {
			return fmt.Errorf("%s/go.mod: %w", m.dir, err)
		}
		if err := writeModule(out, m, version, when, gomod, moduleFiles(files, m.dir), root); err != nil {
			return fmt.Errorf("module %s: %w", m.path, err)
		}
	}
	return nil
}

type module struct {
	dir, path string
	goMod     []byte
}

func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// moduleFiles returns the files of files (slash-separated, relative to the repository
// root) that belong to the module in dir, relative to dir: those under dir and not
// under another directory holding a go.mod (a nested module) nor in a vendor or
// version-control directory.
func moduleFiles(files []string, dir string) []string {
	nested := map[string]bool{}
	for _, f := range files {
		if path.Base(f) == "go.mod" && path.Dir(f) != dir {
			nested[path.Dir(f)] = true
		}
	}
	var got []string
	for _, f := range files {
		rel := f
		if dir != "." {
			var ok bool
			if rel, ok = strings.CutPrefix(f, dir+"/"); !ok {
				continue
			}
		}
		if inNested(f, dir, nested) || skipped(rel) {
			continue
		}
		got = append(got, rel)
	}
	sort.Strings(got)
	return got
}

// inNested reports whether file f lies in a module directory nested inside dir.
func inNested(f, dir string, nested map[string]bool) bool {
	for d := path.Dir(f); d != "." && d != dir; d = path.Dir(d) {
		if nested[d] {
			return true
		}
	}
	return false
}

// skipped reports whether a module-relative path stays out of the zip, as Go leaves
// out files in vendor directories and version-control metadata.
func skipped(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		switch p {
		case "vendor", ".git", ".hg", ".svn", ".bzr":
			return true
		}
	}
	return false
}

var requireLine = regexp.MustCompile(`^(\s*(?:require\s+)?)(\S+)(\s+)(v\S+)(.*)$`)

// rewriteGoMod sets every requirement on a module of local to version, as the release
// commit does, and refuses replace directives.
func rewriteGoMod(data []byte, local map[string]bool, version string) ([]byte, error) {
	lines := strings.Split(string(data), "\n")
	inRequire := false
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "replace"):
			return nil, fmt.Errorf("line %d: %q: a published module must not hold a replace directive (go install refuses it; the repository uses go.work)", i+1, trimmed)
		case trimmed == "require (":
			inRequire = true
			continue
		case inRequire && trimmed == ")":
			inRequire = false
			continue
		case !inRequire && !strings.HasPrefix(trimmed, "require "):
			continue
		}
		m := requireLine.FindStringSubmatch(line)
		if m == nil || !local[strings.Trim(m[2], `"`)] {
			continue
		}
		lines[i] = m[1] + m[2] + m[3] + version + m[5]
	}
	return []byte(strings.Join(lines, "\n")), nil
}

// writeModule writes the list, .info, .mod and .zip files of m at version under out.
func writeModule(out string, m module, version string, when time.Time, gomod []byte, files []string, root fs.FS) error {
	esc, err := escapePath(m.path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when})
	if err != nil {
		return err
	}
	var zipped bytes.Buffer
	if err := writeZip(&zipped, m, version, gomod, files, root); err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  gomod,
		version + ".zip":  zipped.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeZip writes the module zip: every file under <path>@<version>/, go.mod replaced
// by gomod, symbolic links and other irregular files left out as Go leaves them out.
func writeZip(w *bytes.Buffer, m module, version string, gomod []byte, files []string, root fs.FS) error {
	zw := zip.NewWriter(w)
	prefix := m.path + "@" + version + "/"
	seen := map[string]string{}
	for _, rel := range files {
		lower := strings.ToLower(rel)
		if other, dup := seen[lower]; dup {
			return fmt.Errorf("files %q and %q differ only in case", other, rel)
		}
		seen[lower] = rel
		data := gomod
		if rel != "go.mod" {
			full := path.Join(m.dir, rel)
			st, err := fs.Lstat(root, full)
			if errors.Is(err, fs.ErrNotExist) {
				continue // listed by git, deleted in the working tree
			}
			if err != nil {
				return err
			}
			if !st.Mode().IsRegular() {
				continue
			}
			if data, err = fs.ReadFile(root, full); err != nil {
				return err
			}
		}
		f, err := zw.Create(prefix + rel)
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// escapePath is the module proxy's case encoding: each upper-case letter becomes '!'
// and its lower-case form, so that paths stay distinct on case-insensitive file systems.
func escapePath(p string) (string, error) {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r == '!' || r >= unicode.MaxASCII:
			return "", fmt.Errorf("module path %q: character %q cannot be served", p, r)
		case 'A' <= r && r <= 'Z':
			b.WriteByte('!')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}
