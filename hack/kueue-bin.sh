#!/usr/bin/env bash
# Builds Kueue's manager (sigs.k8s.io/kueue/cmd/kueue, at the version kueue/go.mod
# requires) from the Go module proxy when it is not cached yet, and prints the path of
# the binary. Called by `hack/cluster-bins.sh --kueue`; the cache is
# hack/cluster-bins.sh's (JOBKIT_CLUSTER_CACHE, default ~/.cache/jobkit/cluster), keyed by
# the version, with a lock of its own so that it never waits for the
# kube-controller-manager or JobSet builds.
#
# The binary's dependencies are the ones Kueue's go.mod asks for, not this repository's.
# Cold build on 2 cores (Kueue, controller-runtime, client-go, apiserver, the Kubeflow
# and JobSet APIs it imports): 7 minutes measured while another session compiled.
#
# How it runs beside the local control plane (hack/benchcluster/kueuectl.go does so):
# its configuration file (--config) turns off internalCertManagement, binds the webhook
# server to 127.0.0.1 with a self-signed certificate in webhook.certDir (no webhook is
# registered with kube-apiserver, so the bench creates its owners already suspended with
# the queue-name label), turns the metrics and visibility servers off and binds the
# probes to a loopback port. Kueue's CRDs are applied from the module cache
# (config/components/crd/bases) at run time. Two parts of Kueue's main need more than a
# flag there: its metrics certificate path is fixed (/etc/kueue/metrics/certs: the
# driver runs it in a mount namespace with an overlay on /etc, which needs root), and it
# refuses an unparseable server version (the local kube-apiserver has no version stamp:
# the driver puts a loopback proxy in front that reports v1.MINOR.0).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '$1 == "sigs.k8s.io/kueue" { print $2 }' kueue/go.mod)
[ -n "$version" ] || {
	echo "kueue-bin: kueue/go.mod does not require sigs.k8s.io/kueue" >&2
	exit 1
}
root=${JOBKIT_CLUSTER_CACHE:-$HOME/.cache/jobkit/cluster}
dir="$root/kueue-$version"
bin="$dir/kueue-manager"
mkdir -p "$dir"
exec 7>"$dir/.lock"
flock 7
if ! [ -x "$bin" ]; then
	echo "kueue-bin: building Kueue's manager $version" >&2
	start=$SECONDS
	tmp=$(mktemp -d)
	# A module of its own that requires Kueue's and builds cmd/kueue: `go install
	# MODULE@VERSION` would also ask the proxy for the module's version list.
	(
		cd "$tmp"
		export GOWORK=off GOFLAGS=-mod=mod
		go mod init jobkit.tools/kueue >/dev/null 2>&1
		go mod edit -require "sigs.k8s.io/kueue@$version"
		go get "sigs.k8s.io/kueue/cmd/kueue@$version" >&2
		CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$tmp/kueue" sigs.k8s.io/kueue/cmd/kueue
	) || {
		echo "kueue-bin: building sigs.k8s.io/kueue/cmd/kueue@$version failed (the go output above says why; work dir $tmp)" >&2
		exit 1
	}
	mv "$tmp/kueue" "$bin"
	rm -rf "$tmp"
	echo "kueue-bin: built in $((SECONDS - start)) s" >&2
fi
echo "$bin"
