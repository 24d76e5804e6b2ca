#!/usr/bin/env bash
# Fails when a package under plain/ imports, directly or transitively, anything outside
# the standard library (the plain layer's promise: see plain/doc.go). Prints, for each
# offending package, the imports that break it.
set -euo pipefail
cd "$(dirname "$0")/.."
# The core alone (go.work would make `go list -m` name every module of the workspace).
export GOWORK=off
module=$(go list -m)
fail=0
for pkg in $(go list ./plain/...); do
	# Standard-library packages are the ones go list marks Standard; the plain layer's
	# own packages are allowed too (they are checked in their own turn).
	bad=$(go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' "$pkg" |
		grep -v "^${module}/plain\(/\|\$\)" || true)
	if [ -n "$bad" ]; then
		# The direct imports are what to fix; the rest follows from them.
		direct=$(go list -f '{{join .Imports "\n"}}' "$pkg" | grep -Fx -f <(echo "$bad") || true)
		echo "plain-deps: $pkg imports $(echo "$bad" | wc -l) packages outside the standard library"
		echo "  directly: $(echo $direct)"
		echo "  in all:"
		echo "$bad" | sed 's/^/    /'
		fail=1
	fi
done
if [ "$fail" != 0 ]; then
	echo "plain-deps: packages under plain/ may import only the standard library"
	exit 1
fi
echo "plain-deps: every package under plain/ imports only the standard library"
