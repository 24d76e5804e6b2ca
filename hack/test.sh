#!/usr/bin/env bash
# The test command (`make test`): gofmt, go vet, go test -race and short fuzz runs in
# every module of the repository. Installs nothing outside the Go module cache.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
for mod in $(hack/modules.sh); do
	echo "== module $mod"
	(
		cd "$mod"
		unformatted=$(gofmt -l $(git ls-files --cached --others --exclude-standard '*.go') 2>&1 || true)
		if [ -n "$unformatted" ]; then
			echo "gofmt: these files need formatting:"
			echo "$unformatted"
			exit 1
		fi
		go vet ./...
		go test -race -count=1 ./...
	) || fail=1
done
echo "== README quick start"
hack/readme-check.sh || fail=1
[ "$fail" = 0 ] || { echo "FAIL"; exit 1; }
hack/fuzz.sh "${FUZZTIME:-3s}"
echo "PASS"
