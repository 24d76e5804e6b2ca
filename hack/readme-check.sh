#!/usr/bin/env bash
# Compiles and runs the Go programs of README.md and compares each one's output with
# the Output block that follows it, so the README cannot drift from the API:
#   <!-- quickstart -->  the quick start (the Kubernetes layer);
#   <!-- owner -->       "Use with your own resource", a custom resource's controller
#                        in memory;
#   <!-- roles -->       "Which shape is mine", an owner of roles in memory;
#   <!-- childjobs -->   the same group as child Jobs, one sync planned;
#   <!-- plain -->       "Use without Kubernetes", which must also build from the
#                        standard library and jobkit's plain/ packages only.
set -euo pipefail
cd "$(dirname "$0")/.."
# The programs build against the core alone, at its own go.mod (the Kubernetes floor),
# as in an operator's module; go.work would raise them to the newest release.
export GOWORK=off
fail=0
for marker in quickstart owner roles childjobs plain; do
	dir=$(mktemp -d "$PWD/.readme-check.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
	awk -v m="<!-- $marker -->" '$0==m{f=1; next} f && /^```go/{g=1; next} g && /^```/{exit} g{print}' README.md >"$dir/main.go"
	if [ ! -s "$dir/main.go" ]; then
		echo "README.md: no Go block found after <!-- $marker -->"
		fail=1
		continue
	fi
	awk -v m="<!-- $marker -->" '$0==m{f=1; next} f && /^Output:/{o=1; next} o && /^```$/ && !g{g=1; next} g && /^```/{exit} g{print}' README.md >"$dir/want.txt"
	go run "./$(basename "$dir")" >"$dir/got.txt"
	if ! diff -u "$dir/want.txt" "$dir/got.txt"; then
		echo "README.md: the $marker program's output differs from its Output block (-want +got)"
		fail=1
	fi
	if [ "$marker" = plain ]; then
		outside=$(go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' "./$(basename "$dir")" |
			grep -v -e '^github.com/jobkit/jobkit/plain/' -e "^github.com/jobkit/jobkit/$(basename "$dir")\$" || true)
		if [ -n "$outside" ]; then
			echo "README.md: the plain program depends on packages outside the standard library and plain/:"
			echo "$outside"
			fail=1
		fi
	fi
	cat "$dir/got.txt"
	rm -rf "$dir"
done
[ "$fail" = 0 ]
