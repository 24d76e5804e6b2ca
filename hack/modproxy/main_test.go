package main

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

var repoFiles = []string{
	"go.mod", "go.sum", "go.work", "LICENSE", "plan/plan.go", "plan/testdata/a.yaml",
	"cmd/jobkit/go.mod", "cmd/jobkit/main.go",
	"cmd/jobkit/explain/go.mod", "cmd/jobkit/explain/explain.go",
	"hack/tools/go.mod", "hack/surface/main.go",
	".github/workflows/ci.yaml", "vendor/x/x.go", ".git/config",
}

func TestModuleFiles(t *testing.T) {
	tests := []struct {
		name, dir string
		want      []string
	}{
		{"the core leaves every nested module out", ".", []string{
			".github/workflows/ci.yaml", "LICENSE", "go.mod", "go.sum", "go.work", "hack/surface/main.go", "plan/plan.go", "plan/testdata/a.yaml",
		}},
		{"a nested module leaves the one inside it out", "cmd/jobkit", []string{"go.mod", "main.go"}},
		{"the innermost module keeps its own files", "cmd/jobkit/explain", []string{"explain.go", "go.mod"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, moduleFiles(repoFiles, tt.dir)); diff != "" {
				t.Errorf("moduleFiles(%q) (-want +got):\n%s", tt.dir, diff)
			}
		})
	}
}

func TestRewriteGoMod(t *testing.T) {
	local := map[string]bool{"github.com/jobkit/jobkit": true, "github.com/jobkit/jobkit/cmd/jobkit/explain": true}
	tests := []struct {
		name, in, want, wantErr string
	}{
		{
			name: "requirements on local modules take the version, others stay",
			in:   "module github.com/jobkit/jobkit/cmd/jobkit\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/jobkit/jobkit v0.1.0\n\tgithub.com/jobkit/jobkit/cmd/jobkit/explain v0.1.0 // indirect\n\tk8s.io/api v0.37.2\n)\n",
			want: "module github.com/jobkit/jobkit/cmd/jobkit\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/jobkit/jobkit v0.3.1\n\tgithub.com/jobkit/jobkit/cmd/jobkit/explain v0.3.1 // indirect\n\tk8s.io/api v0.37.2\n)\n",
		},
		{
			name: "a one-line require",
			in:   "module example.com/x\n\nrequire github.com/jobkit/jobkit v0.0.0-00010101000000-000000000000\n",
			want: "module example.com/x\n\nrequire github.com/jobkit/jobkit v0.3.1\n",
		},
		{
			name: "the module line of a local module is not a requirement",
			in:   "module github.com/jobkit/jobkit\n\nrequire k8s.io/api v0.34.0\n",
			want: "module github.com/jobkit/jobkit\n\nrequire k8s.io/api v0.34.0\n",
		},
		{
			name:    "a replace directive is refused with its line",
			in:      "module example.com/x\n\nrequire github.com/jobkit/jobkit v0.1.0\n\nreplace github.com/jobkit/jobkit => ../\n",
			wantErr: `line 5: "replace github.com/jobkit/jobkit => ../"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rewriteGoMod([]byte(tt.in), local, "v0.3.1")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("rewriteGoMod() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("rewriteGoMod() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEscapePath(t *testing.T) {
	tests := []struct{ in, want, wantErr string }{
		{in: "github.com/jobkit/jobkit", want: "github.com/jobkit/jobkit"},
		{in: "github.com/BurntSushi/toml", want: "github.com/!burnt!sushi/toml"},
		{in: "example.com/a!b", wantErr: `character '!'`},
	}
	for _, tt := range tests {
		got, err := escapePath(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("escapePath(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("escapePath(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestWriteZip(t *testing.T) {
	root := fstest.MapFS{
		"cmd/jobkit/go.mod":  {Data: []byte("module github.com/jobkit/jobkit/cmd/jobkit\n\nrequire github.com/jobkit/jobkit v0.1.0\n")},
		"cmd/jobkit/main.go": {Data: []byte("package main\n")},
	}
	m := module{dir: "cmd/jobkit", path: "github.com/jobkit/jobkit/cmd/jobkit"}
	gomod := []byte("module github.com/jobkit/jobkit/cmd/jobkit\n\nrequire github.com/jobkit/jobkit v0.2.0\n")
	var buf bytes.Buffer
	if err := writeZip(&buf, m, "v0.2.0", gomod, []string{"go.mod", "main.go", "gone.go"}, root); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := b.ReadFrom(rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
		got[f.Name] = b.String()
	}
	want := map[string]string{
		"github.com/jobkit/jobkit/cmd/jobkit@v0.2.0/go.mod":  string(gomod),
		"github.com/jobkit/jobkit/cmd/jobkit@v0.2.0/main.go": "package main\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("zip contents (-want +got):\n%s", diff)
	}
}

func TestVersionSyntax(t *testing.T) {
	for v, ok := range map[string]bool{
		"v0.1.0": true, "v1.22.333": true, "v0.1.0-check.h9389ffd500b35866": true, "v0.1.0-rc.1": true,
		"0.1.0": false, "v0.1": false, "v01.1.0": false, "v0.1.0-": false, "v0.1.0-a..b": false, "v0.1.0+build": false,
	} {
		if got := semver.MatchString(v); got != ok {
			t.Errorf("semver.MatchString(%q) = %v, want %v", v, got, ok)
		}
	}
}
