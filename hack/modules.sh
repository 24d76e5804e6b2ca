#!/usr/bin/env bash
# Prints the directory of every Go module in the repository that holds packages, the
# root first. hack/tools only pins the tools the scripts run (go tool ...) and is left out.
set -euo pipefail
cd "$(dirname "$0")/.."
echo .
git ls-files --cached --others --exclude-standard '*/go.mod' | xargs -r -n1 dirname | grep -v -e '^\.$' -e '^hack/tools$' | sort
