#!/usr/bin/env bash
# Regenerates the code and manifests that controller-gen derives from the examples'
# API types: DeepCopy methods (zz_generated.deepcopy.go beside the types) and the
# CustomResourceDefinitions (config/crd); and the RBAC of the controllers from their
# +kubebuilder:rbac markers (rbac.go in each controller package, config/rbac/role.yaml).
# controller-gen is pinned in hack/tools (run through hack/tool.sh). Then dist/: the
# install manifests and Helm charts that hack/deploy renders from the kustomize bases.
#
#   hack/generate.sh          rewrite the generated files in place
#   hack/generate.sh --check  regenerate into a temporary directory and fail, naming
#                             each stale file, when any differs from what is committed
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

check=false
case "${1:-}" in
"") ;;
--check) check=true ;;
*)
	echo "usage: $0 [--check]" >&2
	exit 2
	;;
esac

# One line per API package: its module, the package directory inside that module,
# the directory inside that module that holds its CRDs, and optionally the crd
# generator's options (JobSet's embeds PersistentVolumeClaim templates, whose
# metadata the schema must spell out or the API server prunes it). The JobSet
# CRD is then given its child Job template's schema and update rules
# (post_process below).
targets=(
	"examples plank/api/v1alpha1 plank/config/crd"
	"examples trainingjob/api/v1alpha1 trainingjob/config/crd"
	"examples jobset/api/v1alpha2 jobset/config/crd crd:crdVersions=v1,generateEmbeddedObjectMeta=true"
)

# One line per controller package with +kubebuilder:rbac markers: its module, the
# package directory inside that module and the directory of its role.yaml (the
# ClusterRole manager-role and the namespaced leader-election-role).
rbac_targets=(
	"examples controllerruntime controllerruntime/config/rbac"
	"examples clientgo clientgo/config/rbac"
	"examples trainingjob/controller trainingjob/config/rbac"
	"examples jobset/controller jobset/config/rbac"
	"examples plank/controller plank/config/rbac"
	"examples/jobset/upstream . config/rbac"
)

controller_gen() {
	"$root/hack/tool.sh" controller-gen "$@"
}

# post_process gives the JobSet CRD in directory $2 of module $1 the shallow
# schema of its schemaless child Job template and the rules that let exactly
# JobSet's mutable template fields change (examples/internal/templateschema).
post_process() {
	local f="$2/jobset.examples.jobkit.dev_jobsets.yaml"
	[ -e "$f" ] || return 0
	(cd "$1" && go run ./internal/templateschema "$f")
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stale=()
for target in "${targets[@]}"; do
	read -r module pkg crddir crdgen <<<"$target"
	crdgen=${crdgen:-crd:crdVersions=v1}
	if ! $check; then
		(cd "$module" && controller_gen object paths="./$pkg" "$crdgen" paths="./$pkg" output:crd:dir="$crddir")
		post_process "$module" "$root/$module/$crddir"
		echo "generated $module/$pkg/zz_generated.deepcopy.go and $module/$crddir"
		continue
	fi
	out="$tmp/$module/$pkg"
	mkdir -p "$out/obj" "$out/crd"
	(cd "$module" && controller_gen object paths="./$pkg" "$crdgen" \
		output:object:dir="$out/obj" output:crd:dir="$out/crd")
	post_process "$module" "$out/crd"
	# A file is stale when its generated content differs or it is missing; a CRD
	# that is no longer generated is stale too.
	pairs=("$out/obj/zz_generated.deepcopy.go" "$module/$pkg/zz_generated.deepcopy.go")
	for f in "$out"/crd/*.yaml; do
		pairs+=("$f" "$module/$crddir/$(basename "$f")")
	done
	for ((i = 0; i < ${#pairs[@]}; i += 2)); do
		if ! diff -q "${pairs[i]}" "${pairs[i + 1]}" >/dev/null 2>&1; then
			stale+=("${pairs[i + 1]}")
		fi
	done
	for f in "$module/$crddir"/*.yaml; do
		[ -e "$f" ] || continue
		[ -e "$out/crd/$(basename "$f")" ] || stale+=("$f (no longer generated)")
	done
done
for target in "${rbac_targets[@]}"; do
	read -r module pkg rbacdir <<<"$target"
	if ! $check; then
		(cd "$module" && controller_gen rbac:roleName=manager-role paths="./$pkg" output:rbac:dir="$rbacdir")
		echo "generated $module/$rbacdir/role.yaml"
		continue
	fi
	out="$tmp/$module/$pkg/rbac"
	mkdir -p "$out"
	(cd "$module" && controller_gen rbac:roleName=manager-role paths="./$pkg" output:rbac:dir="$out")
	if ! diff -q "$out/role.yaml" "$module/$rbacdir/role.yaml" >/dev/null 2>&1; then
		stale+=("$module/$rbacdir/role.yaml")
	fi
done
# The install manifests and Helm charts of dist/, rendered from the kustomize
# bases (which hold the role.yaml files above): hack/deploy.
if ! $check; then
	go run ./hack/deploy
elif ! go run ./hack/deploy -check; then
	stale+=("dist/ (run make build-installer)")
fi
if [ ${#stale[@]} -gt 0 ]; then
	echo "generated files are stale (run hack/generate.sh):" >&2
	printf '  %s\n' "${stale[@]}" >&2
	exit 1
fi
$check && echo "generated files are up to date"
exit 0
