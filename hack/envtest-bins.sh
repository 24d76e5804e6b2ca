#!/usr/bin/env bash
# Prints the directory of the kube-apiserver and etcd binaries that the integration
# tests run through envtest, building them from the Go module proxy when they are
# not found (they cannot be downloaded here). The recipe has one home, the Go
# package github.com/jobkit/jobkit/controllerruntime/testenv/assets, which a user
# outside this repository runs too (go run .../controllerruntime/cmd/jobkit-envtest);
# this script runs that command from the checkout.
#
#   hack/envtest-bins.sh            find or build, print the directory
#   JOBKIT_ENVTEST_CACHE=dir ...    cache root (default ~/.cache/jobkit/envtest)
#   K8S_VERSION, ETCD_VERSION, STAGING_VERSION   the releases (default 1.37.2, 3.7.0)
#
# It looks in $KUBEBUILDER_ASSETS, the cache, then setup-envtest's store. A cold
# build takes about 12 minutes on 2 cores (kube-apiserver ~11, etcd ~1).
set -euo pipefail
cd "$(dirname "$0")/../controllerruntime"
exec go run ./cmd/jobkit-envtest
