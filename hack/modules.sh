#!/usr/bin/env bash
# Prints the directory of every Go module in the repository, the root first.
set -euo pipefail
cd "$(dirname "$0")/.."
echo .
git ls-files --cached --others --exclude-standard '*/go.mod' | xargs -r -n1 dirname | grep -v '^\.$' | sort
