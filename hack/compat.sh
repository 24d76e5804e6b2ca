#!/usr/bin/env bash
# Checks the supported Kubernetes range of the core module (docs/versions.md, "Supported versions").
# The core's go.mod requires the floor (k8s.io/api and apimachinery v0.34.0, Go 1.25), so
# the main test run already builds and tests it there (alone: GOWORK=off). go.work builds
# the nested modules at the newest release, so this script tests the importable nested
# modules at the floor (hack/modules.sh --importable, each outside the workspace with the
# core at its directory; a module of kind own, kueue, is tested at its floor by the main
# run already, in its own workspace), then builds, vets and tests a throwaway copy of the
# core raised to the newest supported release, then runs hack/compat-examples.sh when it
# exists (the examples built at the floor).
#
#   hack/compat.sh                 newest = v0.37.2
#   NEWEST=0.36.6 hack/compat.sh   another release to check
set -euo pipefail
cd "$(dirname "$0")/.."
# The copy holds the core alone; the repository's go.work names modules it leaves out.
export GOWORK=off
NEWEST=${NEWEST:-0.37.2}
# The k8s.io/utils that k8s.io/api of that release requires; go mod tidy settles the rest.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -co --exclude-standard | grep -v -e '^examples/' -e '^hack/tools/' |
	tar -cf - -T - | tar -xf - -C "$tmp"
for mod in $(hack/modules.sh --importable); do
	[ "$mod" != . ] || continue
	mapfile -t replaces < <(hack/modules.sh --replace "$mod")
	(
		cd "$tmp/$mod"
		go mod edit "${replaces[@]}"
		echo "== $mod at its own go.mod (the floor)"
		go list -m k8s.io/api k8s.io/apimachinery | sed 's/^/  /'
		go vet ./...
		go test -count=1 ./...
	)
done
(
	cd "$tmp"
	echo "== core at k8s.io/api v$NEWEST"
	go get "k8s.io/api@v$NEWEST" "k8s.io/apimachinery@v$NEWEST" >/dev/null 2>&1 ||
		{ echo "compat: go get k8s.io/api@v$NEWEST failed" >&2; exit 1; }
	go mod tidy
	grep -E '^\s(k8s.io/(api|apimachinery|utils)) ' go.mod | sed 's/^/  /'
	go build ./...
	go vet ./...
	go test -count=1 ./...
)
if [ -x hack/compat-examples.sh ]; then
	hack/compat-examples.sh
fi
