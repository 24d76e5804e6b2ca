#!/usr/bin/env bash
# Builds and vets the examples module at the floor of the supported Kubernetes range
# (docs/versions.md, "Supported versions"): a throwaway copy of the repository, outside go.work
# (GOWORK=off) with examples/go.mod pointing at the repository's other modules in the copy
# (hack/modules.sh --replace), pinned to k8s.io/api, apimachinery and
# client-go of the floor and the controller-runtime release made for it. examples/go.mod
# itself stays at the newest release, where the main test run builds and tests it.
#
#   hack/compat-examples.sh                         k8s.io v0.34.1, controller-runtime v0.22.4
#   K8S=0.35.0 CONTROLLER_RUNTIME=0.23.0 hack/compat-examples.sh
#
# controller-runtime v0.22.x requires k8s.io v0.34.1 at least, hence that default.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off
K8S=${K8S:-0.34.1}
CONTROLLER_RUNTIME=${CONTROLLER_RUNTIME:-0.22.4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -co --exclude-standard | grep -v -e '^hack/tools/' | tar -cf - -T - | tar -xf - -C "$tmp"
mapfile -t replaces < <(hack/modules.sh --replace examples)
(
	cd "$tmp/examples"
	go mod edit "${replaces[@]}"
	echo "== examples at k8s.io v$K8S, controller-runtime v$CONTROLLER_RUNTIME"
	if ! out=$(go get "k8s.io/api@v$K8S" "k8s.io/apimachinery@v$K8S" "k8s.io/client-go@v$K8S" \
		"sigs.k8s.io/controller-runtime@v$CONTROLLER_RUNTIME" 2>&1); then
		echo "$out" >&2
		echo "compat-examples: go get of k8s.io v$K8S and controller-runtime v$CONTROLLER_RUNTIME failed" >&2
		exit 1
	fi
	go mod tidy
	# go get may not settle below what another requirement needs: show what was built.
	go list -m k8s.io/api k8s.io/apimachinery k8s.io/client-go sigs.k8s.io/controller-runtime | sed 's/^/  /'
	for m in k8s.io/api k8s.io/apimachinery k8s.io/client-go; do
		got=$(go list -m -f '{{.Version}}' "$m")
		[ "$got" = "v$K8S" ] || { echo "compat-examples: $m is $got, want v$K8S" >&2; exit 1; }
	done
	go build ./...
	go vet ./...
)
echo "examples build at k8s.io v$K8S"
