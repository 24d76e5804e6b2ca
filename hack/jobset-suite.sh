#!/usr/bin/env bash
# JobSet's integration suite of its controller (test/integration/controller of the
# module sigs.k8s.io/jobset, at the version examples/jobset/upstream/go.mod requires)
# run against jobkit's JobSet controller on envtest (`make jobset-suite`). The spec
# file is read from the Go module cache at test time and laid over
# examples/jobset/upstream/suite with go test -overlay: the repository holds no copy
# of it. The suite's start (suite_test.go, build tag jobsetsuite) is jobkit's: it
# starts upstream.Setup's controller where JobSet's starts its reconciler. It prints
# every spec as PASSED, FAILED or SKIPPED, with the reason of each that failed or was
# skipped, and fails when a spec fails.
#
#   hack/jobset-suite.sh                   every spec (about 5 minutes)
#   hack/jobset-suite.sh --quick           the test command's part (hack/test.sh): every
#                                          spec but the 19 that take 10 s or more (each holds
#                                          a Consistently for the specs' full timeout of 10 s;
#                                          the restarts stay covered by the quick ones), 36
#                                          specs in about 30 s
#   hack/jobset-suite.sh -ginkgo.focus=X   go test's and Ginkgo's flags pass through
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
if [ "${1:-}" = --quick ]; then
	shift
	args+=("-ginkgo.skip=does not fail immediately|managed by another controller|not succeed if any job is not completed|success policy .all. with|RestartJobSet|rules order verification|Recreate strategy|parent replicated job is|reaching max restarts")
fi
crd=$(hack/jobset-crd.sh)
specs=${crd%/config/components/crd/bases}/test/integration/controller
[ -f "$specs/jobset_controller_test.go" ] || { echo "jobset-suite: no spec file in $specs" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=$PWD/examples/jobset/upstream/suite
# The overlay adds JobSet's spec file to the package; its suite_test.go, which starts
# JobSet's own controller, is left out for ours.
printf '{"Replace":{"%s":"%s"}}\n' "$dir/jobset_controller_test.go" "$specs/jobset_controller_test.go" >"$work/overlay.json"
cd examples/jobset/upstream
status=0
JOBSET_SUITE_SUMMARY=$work/summary.txt go test -count=1 -tags jobsetsuite -overlay "$work/overlay.json" -timeout 30m ./suite ${args[@]+"${args[@]}"} "$@" || status=$?
echo "== JobSet's integration suite ($specs) against jobkit's JobSet controller"
cat "$work/summary.txt" 2>/dev/null || echo "jobset-suite: no summary: the suite did not run to its end"
exit "$status"
