#!/usr/bin/env bash
# `make lint`: every module's go.mod and go.sum are tidy (`go mod tidy -diff`), and
# staticcheck (pinned in hack/tools/go.mod) finds nothing in any module.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fail=0
for mod in $(hack/modules.sh) hack/tools; do
	if ! out=$(cd "$mod" && go mod tidy -diff 2>&1); then
		echo "lint: $mod/go.mod is not tidy; run 'go mod tidy' there:"
		echo "$out" | head -40
		fail=1
	fi
done
for mod in $(hack/modules.sh); do
	echo "== staticcheck $mod"
	(cd "$mod" && go tool -modfile="$root/hack/tools/go.mod" staticcheck ./...) || fail=1
done
[ "$fail" = 0 ] || { echo "lint: FAIL"; exit 1; }
echo "lint: ok"
