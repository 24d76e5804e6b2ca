#!/usr/bin/env bash
# Runs hack/benchcluster on the local control plane (hack/cluster.sh): the Kubernetes
# Job controller (kube-controller-manager --controllers=job) and jobkit-clientgo on
# the same Jobs, interleaved. Brings the cluster up when it is not, and down again at
# the end if it did. Arguments go to benchcluster (--cases, --qps, --rounds, --smoke).
#
#   hack/bench-cluster.sh [benchcluster flags]
#
# The tables go to stdout and, with the per-run lines, to CLUSTER-DIR/logs/bench-*.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${JOBKIT_CLUSTER_DIR:-${TMPDIR:-/tmp}/jobkit-cluster}
export JOBKIT_CLUSTER_DIR=$dir
started=
if ! hack/cluster.sh status >/dev/null 2>&1; then
	hack/cluster.sh up >&2
	started=1
fi
cleanup() { [ -z "$started" ] || hack/cluster.sh down >&2; }
trap cleanup EXIT
bin=$(hack/cluster-bins.sh)
tools=$dir/tools
mkdir -p "$tools"
(cd examples && go build -o "$tools/jobkit-clientgo" ./clientgo/cmd/jobkit-clientgo)
(cd hack/benchcluster && go build -o "$tools/benchcluster" .)
"$tools/benchcluster" --kcm "$bin/kube-controller-manager" --jobkit "$tools/jobkit-clientgo" --cluster-dir "$dir" "$@"
