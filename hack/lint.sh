#!/usr/bin/env bash
# `make lint`: every module's go.mod and go.sum are tidy (hack/tidy.sh --diff: go mod
# tidy -diff with the repository's modules pointed at their directories), and
# staticcheck (pinned in hack/tools/go.mod, run by hack/tool.sh) finds nothing in any module.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fail=0
for mod in $(hack/modules.sh --all); do
	if ! out=$(hack/tidy.sh --diff "$mod" 2>&1); then
		echo "lint: $mod/go.mod is not tidy; run 'hack/tidy.sh $mod':"
		echo "$out" | head -40
		fail=1
	fi
done
for mod in $(hack/modules.sh); do
	echo "== staticcheck $mod"
	(cd "$mod" && "$root/hack/tool.sh" staticcheck ./...) || fail=1
done
[ "$fail" = 0 ] || { echo "lint: FAIL"; exit 1; }
echo "lint: ok"
