#!/usr/bin/env bash
# Builds JobSet's controller (the `main` package at the root of sigs.k8s.io/jobset, at
# the version examples/jobset/upstream/go.mod requires) from the Go module proxy when it
# is not cached yet, and prints the path of the binary. Called by
# `hack/cluster-bins.sh --jobset`; the cache is hack/cluster-bins.sh's
# (JOBKIT_CLUSTER_CACHE, default ~/.cache/jobkit/cluster), keyed by the version, with a
# lock of its own so that it never waits for the kube-controller-manager build.
#
# The binary's dependencies are the ones JobSet's go.mod asks for, not this
# repository's. Cold build on 2 cores (controller-runtime, client-go, cert-controller):
# 11 minutes measured while other sessions compiled (load average 30).
#
# How it runs beside the local control plane (hack/benchcluster/jobsetctl.go does so):
# its configuration file (--config) turns off internalCertManagement (cert-controller,
# which would write a Secret and patch webhook configurations), binds the webhook server
# to 127.0.0.1 with a self-signed certificate in webhook.certDir, and the metrics and
# probe servers to loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '$1 == "sigs.k8s.io/jobset" { print $2 }' examples/jobset/upstream/go.mod)
[ -n "$version" ] || {
	echo "jobset-bin: examples/jobset/upstream/go.mod does not require sigs.k8s.io/jobset" >&2
	exit 1
}
root=${JOBKIT_CLUSTER_CACHE:-$HOME/.cache/jobkit/cluster}
dir="$root/jobset-$version"
bin="$dir/jobset-controller"
mkdir -p "$dir"
exec 8>"$dir/.lock"
flock 8
# JobSet's main has no --version; --help exits 0 (or 2, from the flag package) once it
# has loaded.
if ! [ -x "$bin" ]; then
	echo "jobset-bin: building JobSet's controller $version (about 11 minutes on 2 loaded cores)" >&2
	start=$SECONDS
	tmp=$(mktemp -d)
	# A module of its own that requires JobSet's and builds its root package: `go
	# install MODULE@VERSION` would also ask the proxy for the module's version list.
	(
		cd "$tmp"
		export GOWORK=off GOFLAGS=-mod=mod
		go mod init jobkit.tools/jobset >/dev/null 2>&1
		go mod edit -require "sigs.k8s.io/jobset@$version"
		go get "sigs.k8s.io/jobset@$version" >&2
		CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$tmp/jobset" sigs.k8s.io/jobset
	) || {
		echo "jobset-bin: building sigs.k8s.io/jobset@$version failed (the go output above says why; work dir $tmp)" >&2
		exit 1
	}
	mv "$tmp/jobset" "$bin"
	rm -rf "$tmp"
	echo "jobset-bin: built in $((SECONDS - start)) s" >&2
fi
echo "$bin"
