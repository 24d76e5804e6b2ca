#!/usr/bin/env bash
# Runs a tool pinned in hack/tools/go.mod (staticcheck, controller-gen) in the current
# directory, e.g. `hack/tool.sh staticcheck ./...` from any module. hack/tools is not a
# module of go.work (its tools' dependencies would raise the versions the workspace
# builds with) and `go tool -modfile` is refused in workspace mode, so the tool is built
# outside the workspace (GOWORK=off; cached by the go command) and then run here, where
# it loads packages through go.work like any go command.
#
#   hack/tool.sh NAME [ARGS...]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: hack/tool.sh NAME [ARGS...]" >&2; exit 2; }
tools=$(cd "$(dirname "$0")/tools" && pwd)
bin=$(cd "$tools" && GOWORK=off go tool -n "$1") || {
	echo "tool: $1 is not a tool of hack/tools/go.mod (go tool -n $1 failed)" >&2
	exit 2
}
shift
exec "$bin" "$@"
