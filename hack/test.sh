#!/usr/bin/env bash
# The test command (`make test`): gofmt, go vet, go test -race and short fuzz runs in
# every module of the repository, 300 seeds of the fault simulation (internal/sim) without
# -race, the Go programs and links of the README and docs/, lint (hack/lint.sh), the supported Kubernetes range
# (hack/compat.sh), the generated files (hack/generate.sh --check), a check that
# the plain layer imports only the standard library (hack/plain-deps.sh) and the release
# check (hack/release-check.sh: every command installed and the importable modules
# fetched at the Kubernetes floor from a local module proxy, offline) and the container
# image of examples/Dockerfile built without a daemon and checked (hack/image.sh:
# about 20 s once cached; a first run cross-compiles the controller for two
# architectures with -trimpath, about 4 minutes each on a busy 2-core machine; the
# image is not run: `make image-smoke` does that). Builds the
# kube-apiserver and etcd binaries for the integration tests when they are not cached
# (hack/envtest-bins.sh, ~12 minutes cold), and a smoke of the real control plane
# (hack/bench-cluster.sh --smoke: etcd, kube-apiserver, kwok and jobkit-clientgo, one
# Indexed Job of 100 pods, the controller killed once halfway, exact counts; then one
# JobSet restarted once under the example's JobSet controller, each controller
# killed once; then one lifecycle family, podFailurePolicy FailJob, under
# kube-controller-manager and jobkit-clientgo, jobkit's writes no more of any kind,
# about 20 s; ~3 minutes more cold to build kwok and ~10 for kube-controller-manager,
# ~2 minutes warm). The smoke's cluster has a directory of its own and free ports, so that
# concurrent runs never share one. The kueue module (kind own in hack/modules.sh) is tested
# in its directory, through its own kueue/go.work at Kueue's versions: its envtest tests run
# Kueue's controllers and scheduler (a cold -race build of Kueue's dependencies takes
# several minutes on a loaded 2-core machine; the tests about a minute).
# JobSet's own integration suite of its controller runs
# against jobkit's JobSet controller on envtest, its quick part (hack/jobset-suite.sh
# --quick: 36 of its 58 specs (3 more skipped), read from the module cache; about 50 s warm on a loaded
# 2-core machine; a cold run first compiles the 97 packages no other module builds:
# Ginkgo, Gomega, zap, parts of x/tools and 8 of JobSet's).
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
failures=()
# step NAME CMD...: runs CMD with its output shown and kept; a failed step is listed
# at the end with the last lines it printed, where a log cut to its tail still shows it.
step() {
	local name=$1 log
	shift
	log=$logs/${#failures[@]}-$RANDOM.log
	if ! "$@" 2>&1 | tee "$log"; then
		fail=1
		failures+=("$name|$log")
	fi
}
if [ -f examples/go.mod ] && [ -z "${KUBEBUILDER_ASSETS:-}" ]; then
	# The integration tests in examples/ run a real kube-apiserver and etcd through
	# envtest; build them from the Go module proxy when they are not cached yet.
	echo "== envtest binaries"
	KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh)
	export KUBEBUILDER_ASSETS
	echo "using $KUBEBUILDER_ASSETS"
fi
echo "== plain layer: standard library only"
step "plain layer imports" hack/plain-deps.sh
echo "== public surface of every importable module (issues 19, 33: budgets per module, no pairs, no mirrors)"
step "surface count" go run ./hack/surface -strict
echo "== one home per fact"
step "facts check" go run ./hack/facts -strict
# module DIR: gofmt, vet and test one module. It runs as a step, in an if, where set -e
# does not apply: every command's status is checked by hand.
module() {
	(
		cd "$1" || exit 1
		# The core requires no other module of the repository: it is tested alone, at
		# its own go.mod (the Kubernetes floor), not at the versions go.work selects
		# for the whole workspace (the newest release, which hack/compat.sh covers).
		[ "$1" != . ] || export GOWORK=off
		unformatted=$(gofmt -l $(git ls-files --cached --others --exclude-standard '*.go') 2>&1 || true)
		if [ -n "$unformatted" ]; then
			echo "gofmt: these files need formatting:"
			echo "$unformatted"
			exit 1
		fi
		go vet ./... && go test -race -count=1 ./...
	)
}
echo "== tools: kustomize built once (several test packages render kustomize bases in parallel)"
step "build kustomize (hack/tools)" env GOWORK=off bash -c 'cd hack/tools && go tool -n kustomize'
for mod in $(hack/modules.sh); do
	echo "== module $mod"
	step "module $mod (gofmt, vet or go test)" module "$mod"
done
echo "== JobSet's integration suite against jobkit's JobSet controller, its quick part (make jobset-suite runs every spec)"
step "JobSet's integration suite, quick (hack/jobset-suite.sh --quick)" hack/jobset-suite.sh --quick
echo "== simulation: 300 seeds without -race (the race detector slows it tenfold; -race runs 10)"
step "simulation, 300 seeds" env GOWORK=off go test -count=1 ./internal/sim -run 'TestSimulation$' -sim.seeds=300
echo "== real control plane: one Job of 100 pods under jobkit-clientgo, killed once halfway; one group; one lifecycle family beside kube-controller-manager (hack/cluster.sh; builds kwok and kube-controller-manager when not cached)"
smoke_dir=$(mktemp -d "${TMPDIR:-/tmp}/jobkit-smoke.XXXXXX")
smoke() { JOBKIT_CLUSTER_DIR=$smoke_dir JOBKIT_CLUSTER_PORT=auto hack/bench-cluster.sh --smoke; }
step "real control plane smoke (logs kept in $smoke_dir/logs)" smoke
[ "$fail" != 0 ] || rm -rf "$smoke_dir"
echo "== generated files are up to date"
step "generated files" hack/generate.sh --check
echo "== README and docs: Go programs built, run and compared; relative links resolve"
step "README and docs programs and links" hack/readme-check.sh
echo "== lint: tidy modules, staticcheck"
step "lint" hack/lint.sh
echo "== supported Kubernetes range: the core at the newest release, examples at the floor"
step "supported Kubernetes range" hack/compat.sh
echo "== release check: the modules served as a tag would publish them, installed and imported offline"
step "release check" hack/release-check.sh
echo "== container image: examples/Dockerfile's image built without a daemon, its index and configs checked (hack/image.sh)"
image_dir=$(mktemp -d "${TMPDIR:-/tmp}/jobkit-image-test.XXXXXX")
step "container image (hack/image.sh)" env IMAGE_DIR="$image_dir" hack/image.sh
rm -rf "$image_dir"
if [ "$fail" != 0 ]; then
	for f in "${failures[@]}"; do
		echo "== FAILED: ${f%%|*}; its last lines:"
		grep -v '^ok ' "${f#*|}" | tail -n 25
	done
	echo "FAIL:"
	for f in "${failures[@]}"; do echo "  - ${f%%|*}"; done
	exit 1
fi
hack/fuzz.sh "${FUZZTIME:-3s}"
echo "PASS"
