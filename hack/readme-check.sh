#!/usr/bin/env bash
# Checks the documentation against the code, so that it cannot drift from the API:
#
# 1. Every Go code block of README.md and docs/*.md is a whole program, named by a
#    marker on the line before its fence, and is built by this check:
#      <!-- NAME -->                 run against the core alone (GOWORK=off, at the
#                                    core's go.mod: the Kubernetes floor, as in an
#                                    operator's module); its output must equal the
#                                    Output block that follows it;
#      <!-- NAME build=MODULE -->    built, not run (it needs a cluster), inside the
#                                    nested module MODULE through go.work.
#    A Go block without a marker fails the check. The program named "plain" (docs,
#    "Without Kubernetes") must also build from the standard library and jobkit's
#    plain/ packages only.
# 2. Every relative link of the repository's top-level Markdown files and docs/*.md
#    names a file or directory that exists, and its #anchor a heading of the target
#    (or of the same file).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off
fail=0
work=$(mktemp -d)
trap 'rm -rf "$work" .readme-check.* */.readme-check.*' EXIT

docs=(README.md docs/*.md)

# extract FILE: writes each Go block of FILE to $work/N.go, the Output block after it
# (if any) to $work/N.want, and one line per block to $work/blocks:
# N<TAB>FILE<TAB>LINE<TAB>NAME<TAB>MODULE (NAME and MODULE "-" when absent).
extract() {
	awk -v file="$1" -v dir="$work" -v start="$(($(cat "$work/count" 2>/dev/null || echo 0)))" '
	function flush_marker() { name = "-"; mod = "-" }
	BEGIN { n = start; state = ""; prev = "" }
	# inside a fence
	state == "go" && /^```/ { close(out); state = "after"; prev = ""; next }
	state == "go" { print > out; next }
	state == "want" && /^```/ { close(out); state = ""; prev = ""; next }
	state == "want" { print > out; next }
	state == "other" && /^```/ { state = ""; prev = ""; next }
	state == "other" { next }
	# outside
	/^```go[[:space:]]*$/ {
		n++; out = dir "/" n ".go"; name = "-"; mod = "-"
		if (match(prev, /^<!-- [a-z0-9-]+( build=[a-zA-Z0-9_\/.-]+)? -->$/)) {
			m = prev; sub(/^<!-- /, "", m); sub(/ -->$/, "", m)
			split(m, parts, " "); name = parts[1]
			if (parts[2] != "") { mod = parts[2]; sub(/^build=/, "", mod) }
		}
		print n "\t" file "\t" NR "\t" name "\t" mod >> (dir "/blocks")
		printf "" > out
		state = "go"; next
	}
	state == "after" && /^Output:[[:space:]]*$/ { state = "output"; next }
	state == "output" && /^```[[:space:]]*$/ { out = dir "/" n ".want"; printf "" > out; state = "want"; next }
	/^```/ { state = "other"; next }
	state == "after" && /[^[:space:]]/ { state = "" }
	state == "output" && /[^[:space:]]/ { state = "" }
	/[^[:space:]]/ { prev = $0 }
	END { print n > (dir "/count") }
	' "$1"
}

: >"$work/blocks"
for f in "${docs[@]}"; do
	extract "$f"
done

declare -A seen=()
while IFS=$'\t' read -r n file line name mod; do
	where="$file:$line"
	if [ "$name" = - ]; then
		echo "$where: a Go block without a marker: name it with <!-- NAME --> (run, Output compared) or <!-- NAME build=MODULE --> (built) on the line before its fence"
		fail=1
		continue
	fi
	if [ -n "${seen[$name]:-}" ]; then
		echo "$where: the name $name is taken by the block at ${seen[$name]}"
		fail=1
		continue
	fi
	seen[$name]=$where
	if [ "$mod" != - ]; then
		if [ ! -f "$mod/go.mod" ]; then
			echo "$where: $name: build=$mod is not a module of this repository"
			fail=1
			continue
		fi
		dir=$(mktemp -d "$PWD/$mod/.readme-check.XXXXXX")
		cp "$work/$n.go" "$dir/main.go"
		if ! (cd "$mod" && GOWORK= go build -o /dev/null "./$(basename "$dir")"); then
			echo "$where: the $name program does not build in module $mod"
			fail=1
		else
			echo "$where: $name builds in module $mod"
		fi
		rm -rf "$dir"
		continue
	fi
	if [ ! -f "$work/$n.want" ]; then
		echo "$where: the $name program has no Output block after it"
		fail=1
		continue
	fi
	dir=$(mktemp -d "$PWD/.readme-check.XXXXXX")
	cp "$work/$n.go" "$dir/main.go"
	if ! go run "./$(basename "$dir")" >"$work/$n.got"; then
		echo "$where: the $name program does not build or run"
		fail=1
		rm -rf "$dir"
		continue
	fi
	if ! diff -u "$work/$n.want" "$work/$n.got"; then
		echo "$where: the $name program's output differs from its Output block (-want +got)"
		fail=1
	fi
	if [ "$name" = plain ]; then
		outside=$(go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' "./$(basename "$dir")" |
			grep -v -e '^github.com/jobkit/jobkit/plain/' -e "^github.com/jobkit/jobkit/$(basename "$dir")\$" || true)
		if [ -n "$outside" ]; then
			echo "$where: the plain program depends on packages outside the standard library and plain/:"
			echo "$outside"
			fail=1
		fi
	fi
	echo "$where: $name runs as shown"
	rm -rf "$dir"
done <"$work/blocks"
for want in quickstart; do
	if [ -z "${seen[$want]:-}" ]; then
		echo "README.md: no <!-- $want --> program"
		fail=1
	fi
done

# anchors FILE: the GitHub anchors of FILE's headings, one a line.
anchors() {
	awk '/^```/ { fence = !fence; next } !fence && /^#+ / { sub(/^#+ /, ""); print }' "$1" |
		tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}

for f in *.md docs/*.md; do
	[ "$f" = CHANGELOG.md ] && continue
	base=$(dirname "$f")
	awk '/^```/ { fence = !fence; next } !fence' "$f" | sed 's/`[^`]*`//g' |
		grep -o '\]([^)[:space:]]*)' | sed -e 's/^](//' -e 's/)$//' | sort -u |
		while read -r target; do
			case "$target" in http://* | https://* | mailto:*) continue ;; esac
			path=${target%%#*}
			anchor=
			[ "$path" != "$target" ] && anchor=${target#*#}
			if [ -z "$path" ]; then
				dest=$f
			else
				dest="$base/$path"
			fi
			if [ ! -e "$dest" ]; then
				echo "$f: link ($target): $dest does not exist"
				echo x >>"$work/linkfail"
				continue
			fi
			if [ -n "$anchor" ] && [ -f "$dest" ] && [[ "$dest" == *.md ]] && ! anchors "$dest" | grep -qxF "$anchor"; then
				echo "$f: link ($target): $dest has no heading #$anchor"
				echo x >>"$work/linkfail"
			fi
		done
done
if [ -s "$work/linkfail" ]; then
	fail=1
else
	echo "links: every relative link resolves"
fi
[ "$fail" = 0 ]
