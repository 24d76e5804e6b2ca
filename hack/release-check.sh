#!/usr/bin/env bash
# The release check: the repository's modules as a tag would publish them, installed and
# imported the way a user does, offline.
#
#  1. hack/modules.sh --check: the table of modules, go.work and the go.mod files agree
#     (no replace directive in any go.mod, one version for the modules' requirements on
#     each other).
#  2. hack/modproxy writes a file-based module proxy serving every module at VERSION
#     (the core as VERSION, nested modules as <dir>/VERSION, their requirements on each
#     other set to VERSION, each zip without the modules nested in it).
#  3. With GOPROXY=that proxy,then the local module cache (file://, nothing from the
#     network), GOSUMDB=off, GOWORK=off and an empty GOBIN: `go install <command>@VERSION`
#     for every command of hack/modules.sh --commands, and each installed binary answers
#     --help with exit status 0.
#  4. A fresh operator module pinned at the Kubernetes floor (k8s.io/api, apimachinery and
#     client-go FLOOR_K8S, controller-runtime FLOOR_CONTROLLER_RUNTIME: what
#     hack/compat-examples.sh builds the examples at) `go get`s every module of
#     hack/modules.sh --importable at VERSION; go list -m must still show the floor, and
#     a program importing every public package of those modules must build.
#
#   hack/release-check.sh                     VERSION = what the modules require (v0.1.0)
#   VERSION=v0.2.0 hack/release-check.sh      as the release commit of v0.2.0 would be
#   JOBKIT_RELEASE_CACHE=dir ...              GOPATH of the check (default
#                                             ~/.cache/jobkit/release-check), kept between
#                                             runs so that only the jobkit modules are
#                                             unpacked again (a lock makes concurrent
#                                             checks take turns); the build cache is shared
#
# The first run on a machine compiles client-go and controller-runtime for the commands
# (their sources sit in the check's own module cache, so nothing of the workspace's
# builds is reused): 45 minutes measured on 2 cores under a load of 15 to 23. Later runs
# compile only the jobkit packages and link the commands: 100 to 130 s there.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
FLOOR_K8S=${FLOOR_K8S:-0.34.1}
FLOOR_CONTROLLER_RUNTIME=${FLOOR_CONTROLLER_RUNTIME:-0.22.4}
log() { echo "release-check: $*"; }
fail() {
	echo "release-check: FAIL: $*" >&2
	exit 1
}

hack/modules.sh --check || fail "the modules disagree (above)"
VERSION=${VERSION:-$(hack/modules.sh --version)}
core=$(GOWORK=off go list -m)
mapfile -t modules < <(hack/modules.sh)
mapfile -t importable < <(hack/modules.sh --importable)
mapfile -t commands < <(hack/modules.sh --commands)

work=$(mktemp -d "${TMPDIR:-/tmp}/jobkit-release-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
GOWORK=off go run ./hack/modproxy -out "$work/proxy" -version "$VERSION" "${modules[@]}" ||
	fail "writing the module proxy"
log "serving ${#modules[@]} modules at $VERSION from $work/proxy"

modcache=$(go env GOMODCACHE)
gopath=${JOBKIT_RELEASE_CACHE:-$HOME/.cache/jobkit/release-check}
export GOPATH=$gopath GOMODCACHE=$gopath/pkg/mod GOBIN=$work/bin
export GOPROXY="file://$work/proxy,file://$modcache/cache/download" GOSUMDB=off GONOSUMDB= GOPRIVATE=
export GOWORK=off GOFLAGS="-mod=mod -modcacherw" GOTOOLCHAIN=local
# The go command indexes a module cache directory once, trusting that a version's
# content never changes; the check serves new content under the same version each run,
# so the index is off (with it, a package's new imports go unseen: "could not import").
export GODEBUG=goindex=0
mkdir -p "$GOPATH"
# One check at a time per cache: each replaces the jobkit modules in it.
exec 9>"$GOPATH/.lock"
flock 9
# The check's own cache holds last run's jobkit modules under the same version: drop them.
rm -rf "$GOMODCACHE/github.com/jobkit" "$GOMODCACHE/cache/download/github.com/jobkit"

# modof DIR: the module of the table that holds package directory DIR (the innermost).
modof() {
	local best=. m
	for m in "${modules[@]}"; do
		if [ "$m" != . ] && [[ "$1/" == "$m/"* ]] && [ ${#m} -gt ${#best} ]; then best=$m; fi
	done
	echo "$best"
}

# go install, one command per module (the go command builds the packages in parallel).
declare -A bymodule=()
for c in "${commands[@]}"; do
	m=$(modof "$c")
	bymodule[$m]+=" $core/$c@$VERSION"
done
for m in "${!bymodule[@]}"; do
	log "go install${bymodule[$m]}"
	# shellcheck disable=SC2086
	(cd "$work" && nice -n 10 go install ${bymodule[$m]}) || fail "go install of $m's commands at $VERSION (above)"
done
for c in "${commands[@]}"; do
	bin=$GOBIN/$(basename "$c")
	[ -x "$bin" ] || fail "go install $core/$c@$VERSION wrote no $bin"
	rc=0
	out=$("$bin" --help 2>&1) || rc=$?
	[ "$rc" = 0 ] || fail "$(basename "$c") --help exited with status $rc (installed from $core/$c@$VERSION):
$out"
done
log "installed and ran --help: $(cd "$GOBIN" && echo *)"

# A fresh operator at the floor.
op=$work/operator
mkdir -p "$op"
cat >"$op/go.mod" <<EOF
module example.com/operator

go 1.25.0

require (
	k8s.io/api v$FLOOR_K8S
	k8s.io/apimachinery v$FLOOR_K8S
	k8s.io/client-go v$FLOOR_K8S
	sigs.k8s.io/controller-runtime v$FLOOR_CONTROLLER_RUNTIME
)
EOF
printf 'package main\n\nfunc main() {}\n' >"$op/main.go"
cd "$op"
gets=()
for m in "${importable[@]}"; do
	if [ "$m" = . ]; then gets+=("$core@$VERSION"); else gets+=("$core/$m@$VERSION"); fi
done
log "operator at k8s.io v$FLOOR_K8S, controller-runtime v$FLOOR_CONTROLLER_RUNTIME: go get ${gets[*]}"
go get "${gets[@]}" || fail "go get ${gets[*]} (above)"
pinned="k8s.io/api v$FLOOR_K8S
k8s.io/apimachinery v$FLOOR_K8S
k8s.io/client-go v$FLOOR_K8S
sigs.k8s.io/controller-runtime v$FLOOR_CONTROLLER_RUNTIME"
got=$(go list -m $(awk '{print $1}' <<<"$pinned"))
if [ "$got" != "$pinned" ]; then
	fail "go get moved the operator's versions (-want +got):
$(diff <(echo "$pinned") <(echo "$got") | grep '^[<>]' | sed 's/^</-/; s/^>/+/')"
fi
pkgs=()
for g in "${gets[@]}"; do
	mapfile -t -O ${#pkgs[@]} pkgs < <(go list -e -f '{{if and (not .Error) (ne .Name "main")}}{{.ImportPath}}{{end}}' "${g%@*}/..." |
		grep -v -e '/internal$' -e '/internal/' || true)
done
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
[ ${#pkgs[@]} -gt 0 ] || fail "no public package found in ${gets[*]}"
{
	printf 'package main\n\nimport (\n'
	printf '\t_ "%s"\n' "${pkgs[@]}"
	printf ')\n\nfunc main() {}\n'
} >main.go
nice -n 10 go build -o /dev/null . || fail "the operator importing ${#pkgs[@]} public packages does not build at the floor (above)"
log "the operator keeps $(echo $got) and builds with ${#pkgs[@]} packages of $(go list -m "${gets[@]%@*}" | tr '\n' ' ')"
log "ok in $((SECONDS - start)) s"
