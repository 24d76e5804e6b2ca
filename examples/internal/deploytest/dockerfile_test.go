package deploytest_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/examples/internal/deploytest"
)

// dockerfile is what TestDockerfile reads of examples/Dockerfile.
type dockerfile struct {
	defaultCmd string            // ARG CMD=...
	tags       map[string]string // CMD of each documented docker build -> its -t
	goworks    map[string]string // CMD -> its documented --build-arg GOWORK, if any
	env        []string          // the variables set before go build
	build      []string          // go build's arguments, ${CMD} in place
	user       string
	buildFrom  string // the build stage's FROM line
}

var (
	buildLine = regexp.MustCompile(`^#\s+docker build -f examples/Dockerfile --build-arg CMD=(\S+)(?: --build-arg GOWORK=(\S+))? -t (\S+) \.$`)
	runBuild  = regexp.MustCompile(`cd examples && ((?:\w+=\S+ )*)go build (.+)$`)
)

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(examplesDir, "Dockerfile"))
	must(t, err, "")
	d := dockerfile{tags: map[string]string{}, goworks: map[string]string{}}
	// Join the continuation lines of each instruction.
	var instr []string
	cur := ""
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		line := sc.Text()
		if m := buildLine.FindStringSubmatch(line); m != nil {
			d.tags[m[1]], d.goworks[m[1]] = m[3], m[2]
		}
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if s, ok := strings.CutSuffix(line, `\`); ok {
			cur += strings.TrimSpace(s) + " "
			continue
		}
		instr = append(instr, cur+strings.TrimSpace(line))
		cur = ""
	}
	for _, in := range instr {
		switch {
		case strings.HasPrefix(in, "ARG CMD="):
			d.defaultCmd = strings.TrimPrefix(in, "ARG CMD=")
		case strings.HasPrefix(in, "USER "):
			d.user = strings.TrimPrefix(in, "USER ")
		case strings.HasPrefix(in, "FROM ") && strings.HasSuffix(in, " AS build"):
			d.buildFrom = in
		case strings.HasPrefix(in, "RUN "):
			if m := runBuild.FindStringSubmatch(in); m != nil {
				d.env = strings.Fields(m[1])
				d.build = shellFields(m[2])
			}
		}
	}
	mustTrue(t, len(d.build) > 0, "no `cd examples && go build ...` RUN instruction in the Dockerfile")
	return d
}

// kueueImages are the images of examples/kueue's commands, which its overlays
// (dist/*/install-kueue.yaml) deploy; they build through examples/kueue/go.work.
var kueueImages = []struct{ name, cmd string }{
	{"kueue-trainingjob-controller", "kueue/cmd/trainingjob-controller"},
	{"kueue-jobset-controller", "kueue/cmd/jobset-controller"},
}

// TestDockerfile checks examples/Dockerfile against the controllers and
// kueueImages: a documented build of each (tagged as its kustomize base's
// image; GOWORK naming examples/kueue/go.work for the latter), a static binary run as
// the Deployments' user, and its go build command building each binary, which
// answers --help. The command runs here without -trimpath and with the
// environment's cgo setting, which would otherwise recompile every package (a cold
// build of client-go, about 10 minutes); that it needs no cgo is checked with
// go list. The image itself is built by `make image` (hack/image.sh), outside the
// test command.
func TestDockerfile(t *testing.T) {
	d := readDockerfile(t)
	equal(t, "65532:65532", d.user, "the final stage's USER")
	check(t, slices.Contains(d.env, "CGO_ENABLED=0"), "the binary must be static for the distroless static image")
	// Multi-architecture: the build stage runs on the builder's platform and
	// cross-compiles for the target's.
	check(t, strings.HasPrefix(d.buildFrom, "FROM --platform=$BUILDPLATFORM "), "the build stage %q must run on $BUILDPLATFORM", d.buildFrom)
	for _, v := range []string{"GOOS=${TARGETOS}", "GOARCH=${TARGETARCH}"} {
		check(t, slices.Contains(d.env, v), "go build must be run with %s (have %q)", v, d.env)
	}
	check(t, slices.Contains(d.env, "GOWORK=${GOWORK}"), "go build must be run with GOWORK=${GOWORK}, the workspace of examples/kueue's commands (have %q)", d.env)
	// Here the target is this machine, and the build stage's /src the repository.
	expand := func(gowork string) []string {
		env := make([]string, len(d.env))
		for i, v := range d.env {
			env[i] = os.Expand(v, func(k string) string {
				return map[string]string{"TARGETOS": runtime.GOOS, "TARGETARCH": runtime.GOARCH, "GOWORK": gowork}[k]
			})
		}
		return env
	}
	type image struct{ name, cmd, gowork string }
	var cmds []string
	var images []image
	for _, c := range controllers {
		cmds = append(cmds, c.cmd)
		images = append(images, image{c.name, c.cmd, ""})
	}
	for _, c := range kueueImages {
		images = append(images, image{c.name, c.cmd, "/src/examples/kueue/go.work"})
	}
	for _, c := range images {
		equal(t, "jobkit/"+c.name+":latest", d.tags[c.cmd], "the documented docker build of %s", c.cmd)
		equal(t, c.gowork, d.goworks[c.cmd], "the documented docker build's GOWORK of %s", c.cmd)
	}
	check(t, slices.Contains(cmds, d.defaultCmd), "ARG CMD's default %q is none of %q", d.defaultCmd, cmds)
	if testing.Short() {
		t.Skip("-short: not building the binaries")
	}
	out := t.TempDir()
	for _, c := range images {
		t.Run(c.name, func(t *testing.T) {
			gowork := ""
			if c.gowork != "" {
				gowork = filepath.Join(deploytest.RepoRoot(), strings.TrimPrefix(c.gowork, "/src/"))
			}
			env := expand(gowork)
			args := []string{"build"}
			for _, a := range d.build {
				switch {
				case a == "-trimpath":
					continue
				case a == "/out/manager":
					a = filepath.Join(out, c.name)
				}
				args = append(args, strings.ReplaceAll(a, "${CMD}", c.cmd))
			}
			build := exec.Command("go", args...)
			build.Env = append(os.Environ(), "GOWORK="+gowork)
			run(t, build)
			run(t, exec.Command(filepath.Join(out, c.name), "--help"))

			list := exec.Command("go", "list", "-e", "-deps", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}", "./"+c.cmd)
			list.Env = append(os.Environ(), env...)
			check(t, strings.TrimSpace(run(t, list)) == "", "packages that do not build with %v", env)
		})
	}
}

// shellFields splits s into words as a shell does for the Dockerfile's RUN line:
// at spaces, double quotes grouping and removed.
func shellFields(s string) []string {
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
