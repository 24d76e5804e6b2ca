#!/usr/bin/env bash
# Runs hack/benchcluster on the local control plane (hack/cluster.sh). Brings the
# cluster up when it is not, and down again at the end if it did.
#
#   hack/bench-cluster.sh [benchcluster flags]   the Kubernetes Job controller
#       (kube-controller-manager --controllers=job) and jobkit-clientgo on the same
#       Jobs, interleaved (--cases, --qps, --rounds, --kcm-content-type)
#   hack/bench-cluster.sh chaos [chaos flags]    the chaos run: mixed Jobs under
#       jobkit-clientgo, killed with SIGKILL again and again, kube-apiserver restarted
#       once, then the checks (--seed, --jobs, --kills, --timeout); then groups of
#       mixed shapes (JobSets) under the example's JobSet controller and
#       jobkit-clientgo, both killed the same way (--groups, --group-kills)
#   hack/bench-cluster.sh --smoke                the test command's smoke: one Indexed
#       Job of 100 pods, one kill of jobkit-clientgo halfway, exact counts; then one
#       group restarted once, each controller killed once (chaos --smoke); then one
#       lifecycle family (podFailurePolicy FailJob) under the kube-controller-
#       manager and jobkit-clientgo, jobkit's writes no more of any kind (families
#       --smoke)
#   hack/bench-cluster.sh groups [groups flags]  groups of roles: JobSet's controller
#       (hack/cluster-bins.sh --jobset) with the kube-controller-manager's Job
#       controller, jobkit's JobSet controller (examples/jobset/upstream, --api
#       jobset.x-k8s.io) with jobkit-clientgo, and the TrainingJob controller as one
#       owner of the roles' pods, on the same cases, interleaved (--cases, --sides,
#       --qps, --rounds); JobSet's CRD from the module cache (hack/jobset-crd.sh)
#   hack/bench-cluster.sh queued [queued flags]  owners queued by Kueue: 50 owners of
#       20 pods through one ClusterQueue whose quota admits 10 at a time, under
#       Kueue's manager (hack/cluster-bins.sh --kueue) with the kube-controller-
#       manager's Job controller, with jobkit-clientgo (spec.managedBy), and as
#       TrainingJobs under examples/kueue's trainingjob-controller --kueue,
#       interleaved (--owners, --pods, --admitted, --sides, --qps, --rounds); Kueue's
#       CRDs from the module cache
#   hack/bench-cluster.sh families [families flags]  the lifecycle families of the
#       latency model's TestFamilyWrites (a Job of 4 pods each: completion, retries,
#       pod failure policy, success policy, suspension, deletion, a released pod, a
#       deadline) under the kube-controller-manager's Job controller and under
#       jobkit-clientgo, interleaved: their writes by kind (--families, --rounds,
#       --smoke)
#
# The chaos run needs no kube-controller-manager and does not build it; the smoke's
# families part does when it is not cached (hack/cluster-bins.sh).
# The tables and reports go to stdout, the per-run logs to CLUSTER-DIR/logs.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${JOBKIT_CLUSTER_DIR:-${TMPDIR:-/tmp}/jobkit-cluster}
export JOBKIT_CLUSTER_DIR=$dir
mode=bench
smoke=
case "${1:-}" in
chaos)
	mode=chaos
	shift
	;;
groups)
	mode=groups
	shift
	;;
queued)
	mode=queued
	shift
	;;
families)
	mode=families
	shift
	;;
--smoke)
	mode=chaos
	smoke=1
	shift
	set -- --smoke "$@"
	;;
esac
fail() {
	echo "bench-cluster: FAIL: $*" >&2
	exit 1
}
started=
if ! hack/cluster.sh status >/dev/null 2>&1; then
	hack/cluster.sh up >&2 || fail "the control plane did not come up (hack/cluster.sh up; logs in $dir/logs)"
	started=1
fi
cleanup() { [ -z "$started" ] || hack/cluster.sh down >&2; }
trap cleanup EXIT
tools=$dir/tools
mkdir -p "$tools"
(cd examples && nice -n 10 go build -o "$tools/jobkit-clientgo" ./clientgo/cmd/jobkit-clientgo) || fail "building jobkit-clientgo"
(cd hack/benchcluster && nice -n 10 go build -o "$tools/benchcluster" .) || fail "building hack/benchcluster"
if [ "$mode" = chaos ]; then
	# The groups' part: the example's JobSet controller (its upstream command serves
	# both APIs, --api) and the JobSet CRDs, the example's and JobSet's own.
	(cd examples/jobset/upstream && nice -n 10 go build -o "$tools/jobset-controller" ./cmd/jobset-controller) || fail "building the JobSet controller"
	crds=$PWD/examples/jobset/config/crd/jobset.examples.jobkit.dev_jobsets.yaml
	crds=$crds,$(hack/jobset-crd.sh)/jobset.x-k8s.io_jobsets.yaml || fail "finding JobSet's CRD (hack/jobset-crd.sh)"
	"$tools/benchcluster" chaos --jobkit "$tools/jobkit-clientgo" --cluster-dir "$dir" \
		--jobset "$tools/jobset-controller" --group-crds "$crds" \
		--cluster-script "$PWD/hack/cluster.sh" "$@" || fail "benchcluster chaos $* (the lines above say which check; logs in $dir/logs)"
	if [ -n "$smoke" ]; then
		# One lifecycle family under the kube-controller-manager and jobkit-clientgo:
		# jobkit writes no more of any kind (benchcluster families --smoke).
		bin=$(hack/cluster-bins.sh) || fail "building kube-controller-manager (hack/cluster-bins.sh)"
		"$tools/benchcluster" families --smoke --kcm "$bin/kube-controller-manager" --jobkit "$tools/jobkit-clientgo" \
			--cluster-dir "$dir" || fail "benchcluster families --smoke (the table above says which kind; logs in $dir/logs)"
	fi
	exit 0
fi
bin=$(hack/cluster-bins.sh) || fail "building kube-controller-manager (hack/cluster-bins.sh)"
if [ "$mode" = groups ]; then
	jobset=$(hack/cluster-bins.sh --jobset) || fail "building JobSet's controller (hack/cluster-bins.sh --jobset)"
	crd=$(hack/jobset-crd.sh) || fail "finding JobSet's CRD (hack/jobset-crd.sh)"
	(cd examples && nice -n 10 go build -o "$tools/trainingjob-controller" ./trainingjob/cmd/trainingjob-controller) ||
		fail "building trainingjob-controller"
	(cd examples/jobset/upstream && nice -n 10 go build -o "$tools/jobkit-jobset-controller" ./cmd/jobset-controller) ||
		fail "building examples/jobset/upstream's jobset-controller"
	"$tools/benchcluster" groups --kcm "$bin/kube-controller-manager" --jobkit "$tools/jobkit-clientgo" \
		--jobset "$jobset" --jobkit-jobset "$tools/jobkit-jobset-controller" --trainingjob "$tools/trainingjob-controller" \
		--crds "$crd/jobset.x-k8s.io_jobsets.yaml,$PWD/examples/trainingjob/config/crd/ml.examples.jobkit.dev_trainingjobs.yaml" \
		--cluster-dir "$dir" "$@" || fail "benchcluster groups $* (the lines above say which check; logs in $dir/logs)"
	exit 0
fi
if [ "$mode" = families ]; then
	"$tools/benchcluster" families --kcm "$bin/kube-controller-manager" --jobkit "$tools/jobkit-clientgo" \
		--cluster-dir "$dir" "$@" || fail "benchcluster families $* (the lines above say which family; logs in $dir/logs)"
	exit 0
fi
if [ "$mode" = queued ]; then
	kueue=$(hack/cluster-bins.sh --kueue) || fail "building Kueue's manager (hack/cluster-bins.sh --kueue)"
	version=$(awk '$1 == "sigs.k8s.io/kueue" { print $2 }' kueue/go.mod)
	kdir=$(cd kueue && GOWORK=off go mod download -json "sigs.k8s.io/kueue@$version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	[ -d "$kdir/config/components/crd/bases" ] || fail "finding Kueue's CRDs in the module cache (sigs.k8s.io/kueue@$version)"
	crds=$(printf '%s,' "$kdir"/config/components/crd/bases/*.yaml)
	(cd examples/kueue && nice -n 10 go build -o "$tools/kueue-trainingjob-controller" ./cmd/trainingjob-controller) ||
		fail "building examples/kueue's trainingjob-controller"
	"$tools/benchcluster" queued --kcm "$bin/kube-controller-manager" --jobkit "$tools/jobkit-clientgo" \
		--kueue "$kueue" --trainingjob "$tools/kueue-trainingjob-controller" \
		--crds "$crds$PWD/examples/trainingjob/config/crd/ml.examples.jobkit.dev_trainingjobs.yaml" \
		--cluster-dir "$dir" "$@" || fail "benchcluster queued $* (the lines above say which check; logs in $dir/logs)"
	exit 0
fi
"$tools/benchcluster" --kcm "$bin/kube-controller-manager" --jobkit "$tools/jobkit-clientgo" --cluster-dir "$dir" "$@" ||
	fail "benchcluster $* (the lines above say which check; logs in $dir/logs)"
