#!/usr/bin/env bash
# Builds the binaries of the local control plane (hack/cluster.sh) that are not cached
# yet, from the Go module proxy, and prints the directory holding all of them:
# etcd and kube-apiserver come from hack/envtest-bins.sh (the same cache the integration
# tests use), kube-controller-manager from the same k8s.io/kubernetes release and kwok
# from sigs.k8s.io/kwok. The cache lives outside the repository, keyed by version; a
# lock makes concurrent callers wait for one build.
#
#   hack/cluster-bins.sh             build when missing, print the directory
#   hack/cluster-bins.sh --no-kcm    the same without kube-controller-manager (the
#                                    control plane and the chaos run do not need it)
#   hack/cluster-bins.sh --jobset    only JobSet's controller (the `main` of
#                                    sigs.k8s.io/jobset at the version that
#                                    examples/jobset/upstream/go.mod requires), built
#                                    when missing; prints the path of the binary. It
#                                    has a lock of its own: it never waits for the
#                                    kube-controller-manager build.
#   hack/cluster-bins.sh --kueue     only Kueue's manager (sigs.k8s.io/kueue/cmd/kueue
#                                    at the version kueue/go.mod requires), built by
#                                    hack/kueue-bin.sh when missing, with a lock of its
#                                    own; prints the path of the binary.
#   JOBKIT_CLUSTER_CACHE=dir ...     cache root (default ~/.cache/jobkit/cluster)
#
# Cold builds on 2 cores: kube-controller-manager about 10 minutes when quiet (13
# CPU-minutes; 66 minutes measured while five other sessions compiled), kwok about 3
# (35 under the same load), plus those of hack/envtest-bins.sh (about 12). Kueue's
# manager (--kueue): about 7.
set -euo pipefail
cd "$(dirname "$0")/.."
K8S_VERSION=${K8S_VERSION:-1.37.2}
STAGING_VERSION=${STAGING_VERSION:-0.${K8S_VERSION#1.}}
KWOK_VERSION=${KWOK_VERSION:-0.8.0}
export K8S_VERSION STAGING_VERSION
root=${JOBKIT_CLUSTER_CACHE:-$HOME/.cache/jobkit/cluster}
bin="$root/k8s-$K8S_VERSION-kwok-$KWOK_VERSION"
mkdir -p "$bin"

log() { echo "cluster-bins: $*" >&2; }
kcm=1
case "${1:-}" in
"") ;;
--no-kcm) kcm= ;;
--jobset)
	exec hack/jobset-bin.sh
	;;
--kueue)
	exec hack/kueue-bin.sh
	;;
*)
	log "unknown argument $1 (want --no-kcm, --jobset, --kueue or nothing)"
	exit 2
	;;
esac

works() { [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }

exec 9>"$bin/.lock"
flock 9

if [ -n "$kcm" ] && ! works "$bin/kube-controller-manager"; then
	log "building kube-controller-manager v$K8S_VERSION (about 10 minutes on 2 cores)"
	start=$SECONDS
	tmp=$(mktemp -d)
	(
		cd "$tmp"
		go mod init jobkit.tools/controllermanager >/dev/null 2>&1
		modfile=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
		# As in hack/envtest-bins.sh: pin each staging module that k8s.io/kubernetes
		# points at ./staging/... to the published module of the same release.
		for m in $(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile"); do
			go mod edit -replace "$m=$m@v$STAGING_VERSION"
		done
		go mod edit -require "k8s.io/kubernetes@v$K8S_VERSION"
		go get "k8s.io/kubernetes/cmd/kube-controller-manager@v$K8S_VERSION" >&2
		CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$bin/kube-controller-manager.tmp" k8s.io/kubernetes/cmd/kube-controller-manager
	) || {
		log "building kube-controller-manager v$K8S_VERSION failed (the go output above says why; work dir $tmp)"
		exit 1
	}
	mv "$bin/kube-controller-manager.tmp" "$bin/kube-controller-manager"
	rm -rf "$tmp"
	log "kube-controller-manager built in $((SECONDS - start)) s"
fi

if ! works "$bin/kwok"; then
	log "building kwok v$KWOK_VERSION (about 3 minutes on 2 cores)"
	start=$SECONDS
	tmp=$(mktemp -d)
	CGO_ENABLED=0 GOBIN="$tmp" nice -n 10 go install -trimpath "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION" >&2 || {
		log "building kwok v$KWOK_VERSION failed (the go output above says why)"
		exit 1
	}
	mv "$tmp/kwok" "$bin/kwok"
	rm -rf "$tmp"
	log "kwok built in $((SECONDS - start)) s"
fi
# etcd and kube-apiserver: the integration tests' cache, linked here.
envtest=$(hack/envtest-bins.sh) || {
	log "building etcd and kube-apiserver failed (hack/envtest-bins.sh)"
	exit 1
}
for b in etcd kube-apiserver; do
	ln -sfn "$envtest/$b" "$bin/$b"
done
echo "$bin"
