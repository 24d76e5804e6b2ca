#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that the integration tests run through
# envtest, from the Go module proxy (they cannot be downloaded here), and caches them
# outside the repository, keyed by version. Prints the directory holding them.
#
#   hack/envtest-bins.sh            build when missing, print the directory
#   JOBKIT_ENVTEST_CACHE=dir ...    cache root (default ~/.cache/jobkit/envtest)
#
# A cold build takes about 12 minutes on 2 cores (kube-apiserver ~11, etcd ~1).
set -euo pipefail
K8S_VERSION=${K8S_VERSION:-1.37.2}
ETCD_VERSION=${ETCD_VERSION:-3.7.0}
STAGING_VERSION=${STAGING_VERSION:-0.${K8S_VERSION#1.}}
root=${JOBKIT_ENVTEST_CACHE:-$HOME/.cache/jobkit/envtest}
bin="$root/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
mkdir -p "$bin"

log() { echo "envtest-bins: $*" >&2; }

works() { [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }

exec 9>"$bin/.lock"
flock 9

if ! works "$bin/etcd"; then
	log "building etcd v$ETCD_VERSION (about 1 minute)"
	tmp=$(mktemp -d)
	(
		cd "$tmp"
		go mod init jobkit.tools/etcd >/dev/null 2>&1
		go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >&2
		CGO_ENABLED=0 go build -trimpath -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3
	)
	mv "$bin/etcd.tmp" "$bin/etcd"
	rm -rf "$tmp"
fi

if ! works "$bin/kube-apiserver"; then
	log "building kube-apiserver v$K8S_VERSION (about 11 minutes on 2 cores)"
	tmp=$(mktemp -d)
	(
		cd "$tmp"
		go mod init jobkit.tools/apiserver >/dev/null 2>&1
		modfile=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
		# k8s.io/kubernetes points its staging modules at ./staging/...; pin each to the
		# published module of the same release instead.
		for m in $(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile"); do
			go mod edit -replace "$m=$m@v$STAGING_VERSION"
		done
		go mod edit -require "k8s.io/kubernetes@v$K8S_VERSION"
		go get "k8s.io/kubernetes/cmd/kube-apiserver@v$K8S_VERSION" >&2
		CGO_ENABLED=0 go build -trimpath -o "$bin/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
	)
	mv "$bin/kube-apiserver.tmp" "$bin/kube-apiserver"
	rm -rf "$tmp"
fi
echo "$bin"
