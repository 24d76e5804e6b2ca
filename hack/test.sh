#!/usr/bin/env bash
# The test command (`make test`): gofmt, go vet, go test -race and short fuzz runs in
# every module of the repository, 300 seeds of the fault simulation (internal/sim) without
# -race, the README programs, lint (hack/lint.sh), the supported Kubernetes range
# (hack/compat.sh), the generated files (hack/generate.sh --check) and a check that
# the plain layer imports only the standard library (hack/plain-deps.sh). Builds the
# kube-apiserver and etcd binaries for the integration tests when they are not cached
# (hack/envtest-bins.sh, ~12 minutes cold), and a smoke of the real control plane
# (hack/bench-cluster.sh --smoke: etcd, kube-apiserver, kwok and jobkit-clientgo, one
# Indexed Job of 100 pods, the controller killed once halfway, exact counts; ~3
# minutes more cold to build kwok, ~1.5 minutes warm; kube-controller-manager is not
# needed). The smoke's cluster has a directory of its own and free ports, so that
# concurrent runs never share one.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
if [ -f examples/go.mod ] && [ -z "${KUBEBUILDER_ASSETS:-}" ]; then
	# The integration tests in examples/ run a real kube-apiserver and etcd through
	# envtest; build them from the Go module proxy when they are not cached yet.
	echo "== envtest binaries"
	KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh)
	export KUBEBUILDER_ASSETS
	echo "using $KUBEBUILDER_ASSETS"
fi
echo "== plain layer: standard library only"
hack/plain-deps.sh || fail=1
echo "== public surface of the core (issue 19: at most 500 names, no pairs, no mirrors)"
go run ./hack/surface || fail=1
echo "== one home per fact (report only until the known copies are folded into their homes)"
go run ./hack/facts | tail -1 || fail=1
for mod in $(hack/modules.sh); do
	echo "== module $mod"
	(
		cd "$mod"
		unformatted=$(gofmt -l $(git ls-files --cached --others --exclude-standard '*.go') 2>&1 || true)
		if [ -n "$unformatted" ]; then
			echo "gofmt: these files need formatting:"
			echo "$unformatted"
			exit 1
		fi
		go vet ./...
		go test -race -count=1 ./...
	) || fail=1
done
echo "== simulation: 300 seeds without -race (the race detector slows it tenfold; -race runs 10)"
go test -count=1 ./internal/sim -run 'TestSimulation$' -sim.seeds=300 || fail=1
echo "== real control plane: one Job of 100 pods under jobkit-clientgo, killed once halfway (hack/cluster.sh; builds kwok when not cached)"
smoke_dir=$(mktemp -d "${TMPDIR:-/tmp}/jobkit-smoke.XXXXXX")
if JOBKIT_CLUSTER_DIR=$smoke_dir JOBKIT_CLUSTER_PORT=auto hack/bench-cluster.sh --smoke; then
	rm -rf "$smoke_dir"
else
	echo "FAIL: the real control plane smoke (hack/bench-cluster.sh --smoke); logs kept in $smoke_dir/logs"
	fail=1
fi
echo "== generated files are up to date"
hack/generate.sh --check || fail=1
echo "== README quick start"
hack/readme-check.sh || fail=1
echo "== lint: tidy modules, staticcheck"
hack/lint.sh || fail=1
echo "== supported Kubernetes range: the core at the newest release, examples at the floor"
hack/compat.sh || fail=1
[ "$fail" = 0 ] || { echo "FAIL"; exit 1; }
hack/fuzz.sh "${FUZZTIME:-3s}"
echo "PASS"
