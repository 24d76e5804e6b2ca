#!/usr/bin/env bash
# Runs the image of `make image` (hack/image.sh) against the real control plane of
# hack/cluster.sh and checks that it runs one Job to completion.
#
#   hack/image-smoke.sh [IMAGE.oci.tar]   default: bin/images/<name>.oci.tar of
#                                         IMAGE_CMD (hack/image.sh's default)
#
# No container runtime is installed here (no Docker daemon, runc, crun or podman), so
# the smoke does what a runtime would do with the image, minus the isolation:
#  1. it reads the OCI layout: the index's image for this machine's architecture, its
#     config's Entrypoint and User, and unpacks its layers in order into a root
#     filesystem;
#  2. it starts a control plane of its own (hack/cluster.sh with a fresh directory and
#     free loopback ports; stopped at the end) and copies the admin kubeconfig into
#     that root filesystem, as a mounted Secret would be;
#  3. it runs the entrypoint under chroot(8) into that root filesystem as the image's
#     User (--userspec), with the arguments a Deployment gives it (--kubeconfig, no
#     leader election, metrics and probes on loopback ports), sharing the machine's
#     network, PID and mount namespaces (it is root's chroot, not a container);
#  4. it creates an Indexed Job of 4 completions, parallelism 2, handed to the
#     controller through spec.managedBy (the command's default name), whose pods name a
#     kwok node; the Job must reach Complete with 4 succeeded within the timeout, and
#     the controller must stop on SIGTERM.
#
#   IMAGE_SMOKE_TIMEOUT=120   seconds for the Job to complete
# Needs root (chroot). Logs are kept in the cluster directory on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
start=$SECONDS
log() { echo "image-smoke: $*" >&2; }
fail() {
	echo "image-smoke: FAIL: $*" >&2
	exit 1
}
dockerfile=examples/Dockerfile
cmd=${IMAGE_CMD:-$(sed -n 's/^ARG CMD=//p' "$dockerfile")}
name=$(basename "$cmd")
image=${1:-${IMAGE_DIR:-$repo/bin/images}/$name.oci.tar}
timeout=${IMAGE_SMOKE_TIMEOUT:-120}
[ -f "$image" ] || fail "no image at $image (make image first)"
[ "$(id -u)" = 0 ] || fail "chroot needs root"
case "$(uname -m)" in
x86_64) arch=amd64 ;;
aarch64) arch=arm64 ;;
*) arch=$(uname -m) ;;
esac
# The controllers' default spec.managedBy (examples/controllerruntime.DefaultManagedBy,
# jobkit-clientgo's default too).
managed_by=${IMAGE_SMOKE_MANAGED_BY:-jobkit.dev/job-controller}

work=$(mktemp -d "${TMPDIR:-/tmp}/jobkit-image-smoke.XXXXXX")
export JOBKIT_CLUSTER_DIR=$work/cluster JOBKIT_CLUSTER_PORT=auto
controller_pid=
cluster_started=
ok=
cleanup() {
	if [ -n "$controller_pid" ] && kill -0 "$controller_pid" 2>/dev/null; then
		kill -KILL "$controller_pid" 2>/dev/null || true
		wait "$controller_pid" 2>/dev/null || true
	fi
	[ -z "$cluster_started" ] || hack/cluster.sh down >/dev/null 2>&1 || true
	if [ -n "$ok" ]; then
		rm -rf "$work"
	else
		log "logs kept in $work (controller.log, cluster/logs)"
	fi
}
trap cleanup EXIT

# 1. The image's root filesystem and config for this architecture.
mkdir -p "$work/layout" "$work/rootfs"
tar -xf "$image" -C "$work/layout"
python3 - "$work/layout" "$arch" >"$work/image.env" <<'EOF' || fail "reading the image (above)"
import json, os, shlex, sys
root, arch = sys.argv[1], sys.argv[2]
def blob(d):
    algo, hexd = d.split(":")
    return os.path.join(root, "blobs", algo, hexd)
top = json.load(open(os.path.join(root, "index.json")))
idx = json.load(open(blob(top["manifests"][0]["digest"])))
for m in idx["manifests"]:
    p = m.get("platform", {})
    if p.get("os") == "linux" and p.get("architecture") == arch:
        man = json.load(open(blob(m["digest"])))
        cfg = json.load(open(blob(man["config"]["digest"])))["config"]
        print("entrypoint=" + shlex.quote(" ".join(cfg.get("Entrypoint") or [])))
        print("user=" + shlex.quote(cfg.get("User") or "0:0"))
        print("layers=" + shlex.quote(" ".join(blob(l["digest"]) for l in man["layers"])))
        break
else:
    sys.exit(f"the image has no linux/{arch} manifest")
EOF
# shellcheck disable=SC1091
. "$work/image.env"
for l in $layers; do
	tar -xzf "$l" -C "$work/rootfs" --numeric-owner --same-owner
done
[ -x "$work/rootfs$entrypoint" ] || fail "the image's entrypoint $entrypoint is not an executable of its root filesystem"
log "image $image: linux/$arch, entrypoint $entrypoint, user $user, $(echo $layers | wc -w) layer(s) unpacked"

# 2. A control plane of its own.
hack/cluster.sh up >"$work/cluster-up.log" 2>&1 || {
	tail -n 20 "$work/cluster-up.log" >&2
	fail "hack/cluster.sh up"
}
cluster_started=1
port=$(cat "$JOBKIT_CLUSTER_DIR/port")
pki=$JOBKIT_CLUSTER_DIR/pki
api() {
	curl -sS --fail-with-body --max-time 10 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
		-X "$1" -H 'Content-Type: application/json' ${3:+--data "$3"} "https://127.0.0.1:$port$2"
}
mkdir -p "$work/rootfs/var/run/kubeconfig"
install -m 0444 "$JOBKIT_CLUSTER_DIR/kubeconfig" "$work/rootfs/var/run/kubeconfig/kubeconfig"
log "control plane up on 127.0.0.1:$port ($((SECONDS - start)) s)"

# free_port: a loopback port nothing listens on.
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 12000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
	fail "no free port"
}

# 3. The entrypoint, as the image's user, in its root filesystem.
chroot --userspec="$user" "$work/rootfs" "$entrypoint" \
	--kubeconfig /var/run/kubeconfig/kubeconfig --leader-elect=false \
	--metrics-bind-address "127.0.0.1:$(free_port)" --health-probe-bind-address "127.0.0.1:$(free_port)" \
	>"$work/controller.log" 2>&1 &
controller_pid=$!
sleep 1
kill -0 "$controller_pid" 2>/dev/null || fail "the entrypoint exited at once: $(tail -n 20 "$work/controller.log")"
running_as=$(awk '/^Uid:/ {print $2}' "/proc/$controller_pid/status")
log "started $entrypoint (pid $controller_pid, uid $running_as) under chroot"
[ "$running_as" = "${user%%:*}" ] || fail "the controller runs as uid $running_as, want the image's ${user%%:*}"

# 4. One Job to completion.
job='{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"image-smoke","namespace":"default"},
"spec":{"completions":4,"parallelism":2,"completionMode":"Indexed","backoffLimit":6,
"managedBy":"'$managed_by'",
"template":{"spec":{"restartPolicy":"Never","nodeName":"kwok-0","terminationGracePeriodSeconds":0,
"containers":[{"name":"main","image":"registry.invalid/fake:1"}]}}}}'
api POST /apis/batch/v1/namespaces/default/jobs "$job" >/dev/null || fail "creating the Job"
t=$SECONDS
status=
while [ $((SECONDS - t)) -lt "$timeout" ]; do
	kill -0 "$controller_pid" 2>/dev/null || fail "the controller exited: $(tail -n 20 "$work/controller.log")"
	status=$(api GET /apis/batch/v1/namespaces/default/jobs/image-smoke | python3 -c '
import json, sys
s = json.load(sys.stdin).get("status", {})
done = [c["type"] for c in s.get("conditions", []) if c["type"] in ("Complete", "Failed") and c["status"] == "True"]
print((done[0] if done else "-") + " succeeded=" + str(s.get("succeeded", 0)) + " failed=" + str(s.get("failed", 0)) + " completedIndexes=" + s.get("completedIndexes", ""))
') || status=
	case "$status" in
	Complete*) break ;;
	Failed*) fail "the Job failed: $status" ;;
	esac
	sleep 1
done
[[ "$status" == "Complete succeeded=4 failed=0 completedIndexes=0-3" ]] ||
	fail "the Job did not complete in $timeout s: ${status:-no status}; controller log: $(tail -n 20 "$work/controller.log")"
log "Job image-smoke: $status in $((SECONDS - t)) s"

kill -TERM "$controller_pid"
for _ in $(seq 100); do
	kill -0 "$controller_pid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$controller_pid" 2>/dev/null && fail "the controller did not stop within 10 s of SIGTERM"
rc=0
wait "$controller_pid" || rc=$?
controller_pid=
[ "$rc" = 0 ] || fail "the controller exited with status $rc after SIGTERM: $(tail -n 20 "$work/controller.log")"
ok=1
log "ok in $((SECONDS - start)) s (the image's entrypoint under chroot as its user, not a container runtime)"
