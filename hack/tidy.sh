#!/usr/bin/env bash
# `go mod tidy` for the modules of this repository. go mod tidy ignores go.work, and a
# nested module requires the core (and the nested modules it imports) at a version no
# proxy serves before the release is tagged, so a plain `go mod tidy` there fails. This
# script runs it with GOWORK=off after pointing, for the duration of the run, every
# other module of the repository at its directory (`go mod edit -replace`, from
# hack/modules.sh --replace), then removes those replace lines again. A directory
# replacement has no checksum, so go.sum gets no line for the repository's own modules
# (a user's go.sum gets them from the checksum database once the release is tagged);
# every other line is what `go mod tidy` writes.
#
#   hack/tidy.sh              tidy every module (hack/modules.sh --all)
#   hack/tidy.sh DIR...       tidy those modules only
#   hack/tidy.sh --diff [DIR...]  change nothing; print what tidying would change and
#                             fail when anything would (go mod tidy -diff)
set -euo pipefail
cd "$(dirname "$0")/.."
diff=
if [ "${1:-}" = --diff ]; then
	diff=-diff
	shift
fi
mods=("$@")
[ ${#mods[@]} -gt 0 ] || mapfile -t mods < <(hack/modules.sh --all)
fail=0
for mod in "${mods[@]}"; do
	[ -f "$mod/go.mod" ] || { echo "tidy: $mod/go.mod does not exist" >&2; exit 2; }
	mapfile -t replaces < <(hack/modules.sh --replace "$mod")
	(
		cd "$mod"
		cp go.mod .go.mod.tidy-backup
		# Whatever happens, go.mod gets its own lines back (tidy may have rewritten it:
		# then only the temporary replace lines are dropped).
		restore() {
			if [ -n "$diff" ]; then
				mv .go.mod.tidy-backup go.mod
				return
			fi
			local drops=() r
			for r in "${replaces[@]}"; do
				r=${r#-replace=}
				drops+=("-dropreplace=${r%%=*}")
			done
			GOWORK=off go mod edit "${drops[@]}"
			rm -f .go.mod.tidy-backup
		}
		trap restore EXIT
		GOWORK=off go mod edit "${replaces[@]}"
		GOWORK=off go mod tidy $diff
	) || {
		echo "tidy: $mod: go mod tidy $diff failed or found changes (above)" >&2
		fail=1
	}
done
exit "$fail"
