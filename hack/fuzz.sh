#!/usr/bin/env bash
# Runs every Fuzz target of every module for FUZZTIME (default 3s) each.
# Usage: hack/fuzz.sh [fuzztime]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-${FUZZTIME:-3s}}
for mod in $(hack/modules.sh); do
	(
		cd "$mod"
		for pkg in $(go list ./...); do
			dir=$(go list -f '{{.Dir}}' "$pkg")
			targets=$(grep -hoE '^func Fuzz[A-Za-z0-9_]+' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' || true)
			for t in $targets; do
				echo "fuzz $pkg $t ($fuzztime)"
				go test -run='^$' -fuzz="^${t}\$" -fuzztime="$fuzztime" "$pkg"
			done
		done
	)
done
