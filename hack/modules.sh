#!/usr/bin/env bash
# The Go modules of this repository, in one place: the table below. The repository
# develops them together through the committed go.work (one `use` line per module but
# hack/tools, one version-pinned `replace` per module that another one requires; hack/tools
# stays out so that its tools' dependencies do not raise the versions the other modules
# build with, and hack/tool.sh runs its tools); no go.mod holds a
# replace directive, so every module installs and imports from a module proxy as
# published. Adding a module: a line in the table, its `use` line in go.work (and its
# `replace` line there when another module requires it); `hack/modules.sh --check`
# (run by hack/release-check.sh) says what is missing. A module of kind own (kueue and
# examples/kueue, the examples' commands with Kueue: Kueue v0.17 does not build at the
# Kubernetes release go.work is pulled up to) stays out of go.work: its own DIR/go.work uses it and the modules it requires,
# so that its directory builds, tests and lints at its go.mod's versions, its floor.
#
#   hack/modules.sh               the directory of every module that holds packages, the
#                                 root first (hack/tools only pins the tools: left out)
#   hack/modules.sh --own         the modules of kind own
#   hack/modules.sh --floor       the modules of kinds floorlib and own: the release
#                                 check imports each into an operator at that module's
#                                 own floor
#   hack/modules.sh --importable  the modules an operator imports: the release check
#                                 `go get`s each into an operator at the Kubernetes floor
#   hack/modules.sh --commands    the package directory of every command a user installs
#                                 with `go install ...@version` (the release check
#                                 installs them from its module proxy)
#   hack/modules.sh --all         every module, hack/tools included (hack/tidy.sh)
#   hack/modules.sh --replace DIR `go mod edit` arguments that point every module but the
#                                 one in DIR at its directory, relative to DIR (for
#                                 GOWORK=off runs: hack/tidy.sh, throwaway copies)
#   hack/modules.sh --version     the release the modules require each other at
#   hack/modules.sh --set-version vX.Y.Z  the release commit's bump: every such
#                                 requirement and go.work's replace lines set to vX.Y.Z
#   hack/modules.sh --check       go.work, the go.mod files and the table agree
set -euo pipefail
cd "$(dirname "$0")/.."

# dir, kind, commands (package directories inside the module, for kind cmd).
#   lib    imported by users' programs; kept at the core's Kubernetes floor
#   cmd    holds commands users install
#   dev    only for this repository (benchmarks)
#   own    a library at versions of its own (its floor is above the core's): in no
#          go.work but DIR/go.work, which uses DIR and the modules DIR requires
#   floorlib  packages at a floor of their own, above the core's, in go.work (which
#          builds and tests them at the newest release): the examples' libraries, at
#          Kueue's floor because examples/kueue (own) requires them; no command
#          lives there (a command's module is of kind cmd, at the newest release)
#   tools  pins the tools the scripts run (hack/tool.sh), no packages; not in go.work
table=(
	".                  lib"
	"cmd/jobkit         cmd   cmd/jobkit"
	"cmd/jobkit/explain lib"
	"controllerruntime  lib"
	"examples           floorlib"
	"examples/clientgo/cmd          cmd   examples/clientgo/cmd/jobkit-clientgo"
	"examples/controllerruntime/cmd cmd   examples/controllerruntime/cmd/jobkit-controller-runtime"
	"examples/plank/cmd             cmd   examples/plank/cmd/plank"
	"examples/trainingjob/cmd       cmd   examples/trainingjob/cmd/trainingjob-controller"
	"examples/jobset/cmd            cmd   examples/jobset/cmd/jobset-controller"
	"examples/demo                  cmd   examples/demo"
	"examples/jobset/upstream dev"
	"hack/benchcluster  dev"
	"kueue              own"
	"examples/kueue     own"
	"hack/tools         tools"
)

# rows KIND...: the dir of every row of one of the kinds (all kinds when none given).
rows() {
	local row dir kind rest k
	for row in "${table[@]}"; do
		read -r dir kind rest <<<"$row"
		if [ $# -eq 0 ]; then
			echo "$dir"
			continue
		fi
		for k in "$@"; do
			[ "$kind" != "$k" ] || echo "$dir"
		done
	done
}

# modpath DIR: the module path DIR's go.mod declares.
modpath() { sed -n 's/^module[[:space:]]\{1,\}\([^[:space:]]*\).*/\1/p' "$1/go.mod"; }

# requirements: "path version dir" for every requirement of a module of the table on
# another one.
requirements() {
	local dir paths path ver
	paths=$(for dir in $(rows); do modpath "$dir"; done)
	for dir in $(rows); do
		awk '/^require \(/ { b=1; next } b && /^\)/ { b=0; next }
			b { print $1, $2; next } /^require / { print $2, $3 }' "$dir/go.mod" |
			while read -r path ver; do
				! grep -qxF "$path" <<<"$paths" || echo "$path $ver $dir"
			done
	done
}

fail() {
	echo "modules: $*" >&2
	exit 1
}

check() {
	local bad=0 dir found want used required path ver line
	found=$(git ls-files --cached --others --exclude-standard 'go.mod' '*/go.mod' | xargs -r -n1 dirname | sort)
	want=$(rows | sort)
	if [ "$found" != "$want" ]; then
		echo "modules: the go.mod files and the table of hack/modules.sh differ (-table +files):" >&2
		diff <(echo "$want") <(echo "$found") | grep '^[<>]' | sed 's/^</  -/; s/^>/  +/' >&2 || true
		bad=1
	fi
	used=$(GOWORK=$PWD/go.work go work edit -print | awk '
		/^use \(/ { b=1; next } b && /^\)/ { b=0; next }
		b { print $1; next } /^use / { print $2 }' | sed 's#^\./##; s#^$#.#; s#/$##' | sort)
	[ -n "$used" ] || used=.
	want=$(rows lib cmd dev floorlib | sort)
	if [ "$used" != "$want" ]; then
		echo "modules: go.work's use lines and the table of hack/modules.sh differ (-table +go.work):" >&2
		diff <(echo "$want") <(echo "$used") | grep '^[<>]' | sed 's/^</  -/; s/^>/  +/' >&2 || true
		bad=1
	fi
	# Every module another one requires needs go.work's replace at that version: the
	# go command reads the go.mod of a required version even when the workspace holds
	# the module, and no proxy serves an unreleased version.
	local paths=() dirs=()
	for dir in $(rows); do
		paths+=("$(modpath "$dir")")
		dirs+=("$dir")
	done
	local replaces
	replaces=$(GOWORK=$PWD/go.work go work edit -print | awk '
		/^replace \(/ { b=1; next } b && /^\)/ { b=0; next }
		b { print; next } /^replace / { sub(/^replace /, ""); print }' | awk '{print $1, $2, $4}')
	for dir in $(rows); do
		if grep -q '^[[:space:]]*replace\b\|^replace' "$dir/go.mod"; then
			echo "modules: $dir/go.mod has a replace directive: go install and go get from a proxy refuse or ignore it; use go.work" >&2
			bad=1
		fi
		required=$(awk '/^require \(/ { b=1; next } b && /^\)/ { b=0; next }
			b { print $1, $2; next } /^require / { print $2, $3 }' "$dir/go.mod")
		while read -r path ver; do
			[ -n "$path" ] || continue
			local i local_dir=
			for i in "${!paths[@]}"; do
				[ "${paths[i]}" != "$path" ] || local_dir=${dirs[i]}
			done
			[ -n "$local_dir" ] || continue
			line="$path $ver ./$local_dir"
			[ "$local_dir" != . ] || line="$path $ver ./"
			if ! grep -qxF "$line" <<<"$replaces"; then
				echo "modules: $dir requires $path $ver; go.work needs the line: replace ${line/ .\// => .\/}" >&2
				bad=1
			fi
		done <<<"$required"
	done
	# A nested module's path is the core's plus its directory: its tags are <dir>/vX.Y.Z.
	local core
	core=$(modpath .)
	for dir in $(rows); do
		[ "$dir" = . ] || [ "$(modpath "$dir")" = "$core/$dir" ] || {
			echo "modules: $dir/go.mod declares $(modpath "$dir"), want $core/$dir" >&2
			bad=1
		}
	done
	local versions
	versions=$(requirements | awk '{print $2}' | sort -u)
	if [ "$(echo "$versions" | grep -c .)" -gt 1 ]; then
		echo "modules: the modules require each other at different versions ($(echo $versions)); every requirement names the same release:" >&2
		requirements | sed 's/^/  /' >&2
		bad=1
	fi
	for dir in $(rows own); do
		ownwork_check "$dir" || bad=1
	done
	cmdfloor_check || bad=1
	[ "$bad" = 0 ] || exit 1
	echo "modules: the table, go.work and the go.mod files agree"
}

# cmdfloor_check: every module of kind cmd requires k8s.io/api, apimachinery, client-go
# and controller-runtime at the versions go.work selects, the newest release the
# repository builds with. `go install <command>@version` ignores go.work: the command
# is built with its own go.mod's versions, and a pod or Job it creates through older
# API types silently loses the fields added since (issue 36: the commands sat in the
# examples module when its go.mod went down to Kueue's floor, k8s.io v0.35).
cmdfloor_check() {
	local bad=0 dir p want have
	for p in k8s.io/api k8s.io/apimachinery k8s.io/client-go sigs.k8s.io/controller-runtime; do
		want=$(GOWORK=$PWD/go.work go list -m -f '{{.Version}}' "$p")
		for dir in $(rows cmd); do
			have=$(awk -v p="$p" '$1 == p { print $2 } $1 == "require" && $2 == p { print $3 }' "$dir/go.mod" | head -n1)
			[ "$have" = "$want" ] || {
				echo "modules: $dir (kind cmd) requires $p ${have:-not at all}, want $want (what go.work selects): installed alone, its commands would build with older API types" >&2
				bad=1
			}
		done
	done
	return "$bad"
}

# localreqs DIR: "path version dir" of every module of the table that DIR's module
# requires, directly or through another module of the table.
localreqs() {
	local todo=("$1") seen=" $1 " d
	while [ ${#todo[@]} -gt 0 ]; do
		d=${todo[0]}
		todo=("${todo[@]:1}")
		while read -r path ver rdir; do
			[ "$rdir" = "$d" ] || continue
			local i
			for i in $(rows); do
				[ "$(modpath "$i")" = "$path" ] || continue
				echo "$path $ver $i"
				[[ "$seen" == *" $i "* ]] || { seen+="$i "; todo+=("$i"); }
			done
		done < <(requirements)
	done | sort -u
}

# ownwork_check DIR: DIR/go.work uses DIR and every module of the table DIR requires
# (directly or not), each with its replace line at the version required.
ownwork_check() {
	local dir=$1 bad=0 want got rel path ver rdir
	[ -f "$dir/go.work" ] || { echo "modules: $dir is of kind own but has no $dir/go.work" >&2; return 1; }
	want=$(echo .; localreqs "$dir" | while read -r path ver rdir; do realpath -m --relative-to="$dir" "$rdir"; done)
	got=$(cd "$dir" && GOWORK=$PWD/go.work go work edit -print | awk '
		/^use \(/ { b=1; next } b && /^\)/ { b=0; next }
		b { print $1; next } /^use / { print $2 }' | sed 's#^\./##; s#^$#.#; s#/$##')
	if [ "$(sort <<<"$want")" != "$(sort <<<"$got")" ]; then
		echo "modules: $dir/go.work's use lines differ from $dir and the modules it requires (-want +go.work):" >&2
		diff <(sort <<<"$want") <(sort <<<"$got") | grep '^[<>]' | sed 's/^</  -/; s/^>/  +/' >&2 || true
		bad=1
	fi
	local replaces
	replaces=$(cd "$dir" && GOWORK=$PWD/go.work go work edit -print | awk '
		/^replace \(/ { b=1; next } b && /^\)/ { b=0; next }
		b { print; next } /^replace / { sub(/^replace /, ""); print }' | awk '{print $1, $2, $4}' | sed 's#/$##')
	while read -r path ver rdir; do
		[ -n "$path" ] || continue
		rel=$(realpath -m --relative-to="$dir" "$rdir")
		grep -qxF "$path $ver $rel" <<<"$replaces" || {
			echo "modules: $dir/go.work needs the line: replace $path $ver => $rel" >&2
			bad=1
		}
	done < <(localreqs "$dir")
	return "$bad"
}

case "${1:-}" in
"") rows lib cmd dev own floorlib ;;
--importable) rows lib ;;
--own) rows own ;;
--floor) rows floorlib own ;;
--all) rows ;;
--commands)
	for row in "${table[@]}"; do
		read -r dir kind rest <<<"$row"
		[ "$kind" != cmd ] || printf '%s\n' $rest
	done
	;;
--replace)
	[ -n "${2:-}" ] || fail "--replace needs the directory of the module to edit"
	target=$(cd "$2" && pwd)
	for dir in $(rows lib cmd dev own floorlib); do
		abs=$(cd "$dir" && pwd)
		[ "$abs" != "$target" ] || continue
		rel=$(realpath --relative-to="$target" "$abs")
		case "$rel" in .*) ;; *) rel=./$rel ;; esac
		echo "-replace=$(modpath "$dir")=$rel"
	done
	;;
--check) check ;;
--set-version)
	# The release commit's bump: every requirement of a module on another, and go.work's
	# replace lines, set to the new release.
	v=${2:-}
	[[ "$v" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--set-version needs a release version vX.Y.Z, not '$v'"
	requirements | while read -r path old dir; do
		(cd "$dir" && GOWORK=off go mod edit -require="$path@$v")
	done
	GOWORK=$PWD/go.work go work edit -print | awk '
		/^replace \(/ { b=1; next } b && /^\)/ { b=0; next }
		b { print; next } /^replace / { sub(/^replace /, ""); print }' |
		while read -r path old _ dir; do
			GOWORK=$PWD/go.work go work edit -dropreplace="$path@$old" -replace="$path@$v=$dir"
		done
	for own in $(rows own); do
		(cd "$own" && GOWORK=$PWD/go.work go work edit -print | awk '
			/^replace \(/ { b=1; next } b && /^\)/ { b=0; next }
			b { print; next } /^replace / { sub(/^replace /, ""); print }' |
			while read -r path old _ dir; do
				GOWORK=$PWD/go.work go work edit -dropreplace="$path@$old" -replace="$path@$v=$dir"
			done)
	done
	check
	;;
--version)
	# The release the modules require each other at (the one --check keeps single).
	v=$(requirements | awk '{print $2}' | sort -u | head -n1)
	[ -n "$v" ] || fail "no module requires another one"
	echo "$v"
	;;
*) fail "unknown argument $1 (want --importable, --own, --floor, --commands, --all, --replace DIR, --version, --set-version V, --check or nothing)" ;;
esac
