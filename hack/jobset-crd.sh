#!/usr/bin/env bash
# Prints the directory of JobSet's CustomResourceDefinition in the Go module cache
# (config/components/crd/bases of sigs.k8s.io/jobset at the version that
# examples/jobset/upstream/go.mod requires), downloading the module first when it is
# not cached. The repository holds no copy of it:
#
#   kubectl apply --server-side -f "$(hack/jobset-crd.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '$1 == "sigs.k8s.io/jobset" { print $2 }' examples/jobset/upstream/go.mod)
[ -n "$version" ] || { echo "jobset-crd: examples/jobset/upstream/go.mod does not require sigs.k8s.io/jobset" >&2; exit 1; }
dir=$(GOWORK=off GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/jobset@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$dir/config/components/crd/bases" ] || { echo "jobset-crd: no CRD in $dir" >&2; exit 1; }
echo "$dir/config/components/crd/bases"
