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
				corpus="$dir/testdata/fuzz/$t"
				before=$( (ls "$corpus" 2>/dev/null || true) | wc -l)
				if ! go test -run='^$' -fuzz="^${t}\$" -fuzztime="$fuzztime" "$pkg"; then
					# A real failure leaves its input in the corpus; an overloaded machine
					# can also fail the engine itself (context deadline exceeded while
					# gathering coverage, or at the end of -fuzztime), which is worth retrying.
					after=$( (ls "$corpus" 2>/dev/null || true) | wc -l)
					if [ "$after" != "$before" ]; then
						echo "fuzz $t found a failing input in $corpus"
						exit 1
					fi
					# Seen here about once per run on 2 busy cores; two more tries.
					ok=false
					for try in 1 2; do
						echo "fuzz $t: the engine failed without a new input; retry $try of 2"
						if go test -run='^$' -fuzz="^${t}\$" -fuzztime="$fuzztime" "$pkg"; then
							ok=true
							break
						fi
						after=$( (ls "$corpus" 2>/dev/null || true) | wc -l)
						if [ "$after" != "$before" ]; then
							echo "fuzz $t found a failing input in $corpus"
							exit 1
						fi
					done
					$ok || exit 1
				fi
			done
		done
	)
done
