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
#  5. The same for each module of hack/modules.sh --floor (kueue; examples, the
#     examples' libraries; examples/kueue, whose commands are built instead, having no
#     public package), in an operator of its own pinned at that module's floor (the
#     k8s.io/api, client-go and controller-runtime its go.mod requires: Kueue's, above
#     the core's).
#
#   hack/release-check.sh                     VERSION = what the modules require (v0.1.0)
#   VERSION=v0.2.0 hack/release-check.sh      as the release commit of v0.2.0 would be
#
# The modules are served as VERSION-check.h<hash of the tree>, a pre-release of VERSION
# no real proxy will ever serve: each tree gets a version of its own, so the check can
# use the machine's module and build caches (a version's content never changes there)
# and compile only the jobkit packages: client-go and controller-runtime come from the
# same module cache paths as the workspace's builds, already compiled. The check's
# jobkit modules are removed from the module cache at the end. A real release is
# VERSION itself; what differs is only the version string.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
start=$SECONDS
FLOOR_K8S=${FLOOR_K8S:-0.34.1}
FLOOR_CONTROLLER_RUNTIME=${FLOOR_CONTROLLER_RUNTIME:-0.22.4}
log() { echo "release-check: $*"; }
fail() {
	echo "release-check: FAIL: $*" >&2
	exit 1
}

hack/modules.sh --check || fail "the modules disagree (above)"
release=${VERSION:-$(hack/modules.sh --version)}
# The tree's own version: the hash of every file the repository holds or would add.
tree=$(git ls-files -z --cached --others --exclude-standard | sort -z |
	xargs -0 sha256sum 2>/dev/null | sha256sum | cut -c1-16)
VERSION=$release-check.h$tree
core=$(GOWORK=off go list -m)
mapfile -t modules < <(hack/modules.sh)
mapfile -t importable < <(hack/modules.sh --importable)
mapfile -t own < <(hack/modules.sh --floor)
mapfile -t commands < <(hack/modules.sh --commands)

work=$(mktemp -d "${TMPDIR:-/tmp}/jobkit-release-check.XXXXXX")
modcache=$(go env GOMODCACHE)
cleanup() {
	rm -rf "$work"
	# This tree's jobkit modules, unpacked into the module cache by the check.
	find "$modcache/github.com/jobkit" "$modcache/cache/download/github.com/jobkit" \
		-depth -name "*$VERSION*" -exec chmod -R u+w {} + -exec rm -rf {} + 2>/dev/null || true
}
trap cleanup EXIT
GOWORK=off go run ./hack/modproxy -out "$work/proxy" -version "$VERSION" "${modules[@]}" ||
	fail "writing the module proxy"
log "serving ${#modules[@]} modules at $VERSION (release $release) from $work/proxy"

export GOBIN=$work/bin
export GOPROXY="file://$work/proxy,file://$modcache/cache/download" GOSUMDB=off GONOSUMDB= GOPRIVATE=
export GOWORK=off GOFLAGS="-mod=mod -modcacherw" GOTOOLCHAIN=local

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
	mapfile -t -O ${#pkgs[@]} pkgs < <(go list -e -f '{{if and (not .Error) (ne .Name "main") .GoFiles}}{{.ImportPath}}{{end}}' "${g%@*}/..." |
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

# Each module of kind own or floorlib in an operator at its own floor.
for m in "${own[@]}"; do
	gomod=$repo/$m/go.mod
	req() { awk -v p="$1" '$1 == p { print $2 } $1 == "require" && $2 == p { print $3 }' "$gomod" | head -n1; }
	pinned=$(for p in k8s.io/api k8s.io/apimachinery k8s.io/client-go sigs.k8s.io/controller-runtime; do
		v=$(req "$p")
		[ -z "$v" ] || echo "$p $v"
	done)
	opm=$work/operator-${m//\//-}
	mkdir -p "$opm"
	{
		printf 'module example.com/operator\n\ngo 1.25.0\n\nrequire (\n'
		sed 's/^/\t/' <<<"$pinned"
		printf ')\n'
	} >"$opm/go.mod"
	cd "$opm"
	log "operator at $m's floor ($(echo $pinned)): go get $core/$m@$VERSION"
	go get "$core/$m@$VERSION" || fail "go get $core/$m@$VERSION (above)"
	got=$(go list -m $(awk '{print $1}' <<<"$pinned"))
	[ "$got" = "$pinned" ] || fail "go get moved $m's operator's versions (-want +got):
$(diff <(echo "$pinned") <(echo "$got") | grep '^[<>]' | sed 's/^</-/; s/^>/+/')"
	mapfile -t pkgs < <(go list -e -f '{{if and (not .Error) (ne .Name "main") .GoFiles}}{{.ImportPath}}{{end}}' "$core/$m/..." |
		grep -v -e '/internal$' -e '/internal/' || true)
	if [ ${#pkgs[@]} -eq 0 ]; then
		# A module of commands only (examples/kueue): they build at its floor.
		nice -n 10 go build -o /dev/null "$core/$m/..." || fail "$m's commands do not build at its floor (above)"
		log "the operator of $m keeps its floor and builds its commands"
		continue
	fi
	{
		printf 'package main\n\nimport (\n'
		printf '\t_ "%s"\n' "${pkgs[@]}"
		printf ')\n\nfunc main() {}\n'
	} >main.go
	nice -n 10 go build -o /dev/null . || fail "the operator importing $m's ${#pkgs[@]} packages does not build at its floor (above)"
	log "the operator of $m keeps its floor and builds with ${#pkgs[@]} packages"
done
log "ok in $((SECONDS - start)) s"
