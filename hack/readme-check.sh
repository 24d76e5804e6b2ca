#!/usr/bin/env bash
# Compiles and runs the Go quick start in README.md (the block after the line
# "<!-- quickstart -->") and compares its output with the Output block that follows,
# so the README cannot drift from the API.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d "$PWD/.readme-check.XXXXXX")
trap 'rm -rf "$dir"' EXIT
awk '/<!-- quickstart -->/{f=1; next} f && /^```go/{g=1; next} g && /^```/{exit} g{print}' README.md >"$dir/main.go"
if [ ! -s "$dir/main.go" ]; then
	echo "README.md: no quick start block found after <!-- quickstart -->"
	exit 1
fi
awk '/<!-- quickstart -->/{f=1; next} f && /^Output:/{o=1; next} o && /^```$/ && !g{g=1; next} g && /^```/{exit} g{print}' README.md >"$dir/want.txt"
go run "./$(basename "$dir")" >"$dir/got.txt"
if ! diff -u "$dir/want.txt" "$dir/got.txt"; then
	echo "README.md: the quick start's output differs from the Output block (-want +got)"
	exit 1
fi
cat "$dir/got.txt"
