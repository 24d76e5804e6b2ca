#!/usr/bin/env bash
# Builds the container image of one example controller without a Docker daemon, as an
# OCI image index (one image per architecture) written as an OCI layout tarball:
#
#   hack/image.sh                    bin/images/<name>.oci.tar for the Dockerfile's
#                                    default CMD (jobkit-controller-runtime)
#   hack/image.sh --check FILE       only check FILE's index and configs (below)
#
#   IMAGE_CMD=clientgo/cmd/jobkit-clientgo   another command of examples/Dockerfile (the
#                                            image is named by its documented -t, built
#                                            through its documented GOWORK if any:
#                                            IMAGE_CMD=kueue/cmd/trainingjob-controller)
#   IMAGE_PLATFORMS=linux/amd64,linux/arm64  the architectures (the default)
#   IMAGE_DIR=dir                            where the tarball goes (default bin/images,
#                                            ignored by git)
#
# examples/Dockerfile is the one description of the image; this script reads it:
#  1. the Dockerfile's `cd examples && ... go build ...` line runs for each platform
#     with CMD, TARGETOS and TARGETARCH set, as `docker buildx build --platform` runs
#     it (cross-compiled, static, -trimpath: a first run compiles every package anew,
#     several minutes per architecture on 2 cores; seconds once cached);
#  2. the final stage's base (distroless static, nonroot) cannot be pulled here: no
#     registry is reachable. The image is built FROM scratch with what that base gives
#     a static Go binary: the CA certificates of this machine
#     (/etc/ssl/certs/ca-certificates.crt), /etc/passwd and /etc/group with root and the
#     non-root user nonroot (65532), /home/nonroot owned by it, /tmp; one layer with
#     those and the binary at the ENTRYPOINT's path (SSL_CERT_FILE names the
#     certificates, as the distroless base does);
#  3. crane (pinned in hack/tools/go.mod) assembles it: a registry of its own on a free
#     loopback port (crane registry serve, stopped at the end) takes one image per
#     platform (crane append onto an empty OCI base, crane mutate for the Dockerfile's
#     USER and ENTRYPOINT and the platform), then their index (crane index append), and
#     crane pull --format oci writes the layout that is tarred;
#  4. --check: the index names every platform of IMAGE_PLATFORMS once, and each image's
#     config has the Dockerfile's ENTRYPOINT and USER, that platform's os and
#     architecture, and a layer whose entrypoint file is a static ELF binary for it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
start=$SECONDS
log() { echo "image: $*" >&2; }
fail() {
	echo "image: FAIL: $*" >&2
	exit 1
}
dockerfile=examples/Dockerfile
platforms=${IMAGE_PLATFORMS:-linux/amd64,linux/arm64}

# The Dockerfile's facts.
default_cmd=$(sed -n 's/^ARG CMD=//p' "$dockerfile")
cmd=${IMAGE_CMD:-$default_cmd}
user=$(sed -n 's/^USER //p' "$dockerfile" | tail -n1)
entrypoint=$(sed -n 's/^ENTRYPOINT \["\([^"]*\)"\]$/\1/p' "$dockerfile" | tail -n1)
# The RUN instruction's go build line, continuation lines joined.
build=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$dockerfile" | sed -n 's/.*\(cd examples && .*go build .*\)$/\1/p')
[ -n "$cmd" ] && [ -n "$user" ] && [ -n "$entrypoint" ] && [ -n "$build" ] ||
	fail "$dockerfile has no ARG CMD, USER, ENTRYPOINT [\"...\"] or 'cd examples && ... go build' line"
# The image's name: the one the Dockerfile's documented `docker build` of CMD tags
# (jobset/upstream/cmd/jobset-controller is jobkit/jobset-upstream), else the
# command's own.
name=$(sed -n "s|^#[[:space:]]*docker build -f examples/Dockerfile --build-arg CMD=$cmd \(--build-arg GOWORK=[^ ]* \)\{0,1\}-t [^/ ]*/\([^/: ]*\):[^ ]* \.\$|\2|p" "$dockerfile" | head -n1)
name=${name:-$(basename "$cmd")}
# The workspace the build line's GOWORK names: the documented docker build's
# --build-arg GOWORK of CMD (examples/kueue's commands build through
# examples/kueue/go.work), its /src the repository here; else empty (the
# repository's go.work).
gowork=$(sed -n "s|^#[[:space:]]*docker build -f examples/Dockerfile --build-arg CMD=$cmd --build-arg GOWORK=/src/\([^ ]*\) -t .*|\1|p" "$dockerfile" | head -n1)
gowork=${gowork:+$repo/$gowork}
out_dir=${IMAGE_DIR:-$repo/bin/images}

# check FILE: step 4.
check() {
	local tar=$1 dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/jobkit-image-check.XXXXXX")
	tar -xf "$tar" -C "$dir"
	python3 - "$dir" "$platforms" "$entrypoint" "$user" <<'EOF'
import gzip, io, json, os, sys, tarfile
root, platforms, entrypoint, user = sys.argv[1], sys.argv[2].split(","), sys.argv[3], sys.argv[4]
def blob(digest):
    algo, hexd = digest.split(":")
    with open(os.path.join(root, "blobs", algo, hexd), "rb") as f:
        return f.read()
bad = []
top = json.load(open(os.path.join(root, "index.json")))
# crane pull writes the pulled index as the one manifest of the layout's index.
idx = json.loads(blob(top["manifests"][0]["digest"]))
seen = []
machines = {"amd64": 62, "arm64": 183, "s390x": 22, "ppc64le": 21, "riscv64": 243}
for m in idx.get("manifests", []):
    p = m.get("platform", {})
    plat = p.get("os", "?") + "/" + p.get("architecture", "?")
    seen.append(plat)
    man = json.loads(blob(m["digest"]))
    cfg = json.loads(blob(man["config"]["digest"]))
    c = cfg.get("config", {})
    if c.get("Entrypoint") != [entrypoint]:
        bad.append(f"{plat}: Entrypoint {c.get('Entrypoint')}, want [{entrypoint!r}]")
    if c.get("User") != user:
        bad.append(f"{plat}: User {c.get('User')!r}, want {user!r}")
    if cfg.get("os") + "/" + cfg.get("architecture") != plat:
        bad.append(f"{plat}: the config says {cfg.get('os')}/{cfg.get('architecture')}")
    found = False
    for layer in man["layers"]:
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob(layer["digest"])))) as t:
            member = next((m for m in t.getmembers() if m.name.lstrip("./") == entrypoint.lstrip("/")), None)
            if member is None:
                continue
            f = t.extractfile(member)
            head = f.read(64)
            found = True
            want = machines.get(p.get("architecture"))
            machine = int.from_bytes(head[18:20], "little")
            if head[:4] != b"\x7fELF" or machine != want:
                bad.append(f"{plat}: {entrypoint} is not an ELF binary for {p.get('architecture')} (e_machine {machine}, want {want})")
            elf = head + f.read()
            phoff = int.from_bytes(elf[32:40], "little")
            phentsize = int.from_bytes(elf[54:56], "little")
            phnum = int.from_bytes(elf[56:58], "little")
            for i in range(phnum):
                if int.from_bytes(elf[phoff + i * phentsize:phoff + i * phentsize + 4], "little") == 3:
                    bad.append(f"{plat}: {entrypoint} is dynamically linked (PT_INTERP)")
    if not found:
        bad.append(f"{plat}: no layer holds {entrypoint}")
if sorted(seen) != sorted(platforms):
    bad.append(f"the index holds {sorted(seen)}, want {sorted(platforms)}")
for b in bad:
    print("image: check:", b, file=sys.stderr)
if bad:
    sys.exit(1)
print(f"image: check: index of {', '.join(seen)}; each with Entrypoint [{entrypoint!r}], User {user!r}, a static ELF binary for its architecture")
EOF
	local rc=$?
	rm -rf "$dir"
	return $rc
}

if [ "${1:-}" = --check ]; then
	[ -f "${2:-}" ] || fail "--check needs the image's OCI layout tarball"
	check "$2" || fail "the image $2 does not match $dockerfile (above)"
	exit 0
fi

crane=$(cd hack/tools && GOWORK=off go tool -n crane) || fail "building crane (hack/tools/go.mod)"
work=$(mktemp -d "${TMPDIR:-/tmp}/jobkit-image.XXXXXX")
registry_pid=
cleanup() {
	if [ -n "$registry_pid" ]; then
		kill -TERM "$registry_pid" 2>/dev/null || true
		wait "$registry_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# 1. One binary per platform, by the Dockerfile's own line.
mkdir -p "$work/out"
IFS=, read -r -a plats <<<"$platforms"
for plat in "${plats[@]}"; do
	os=${plat%%/*}
	arch=${plat#*/}
	t=$SECONDS
	line=${build//\/out\/manager/$work/out/manager-$arch}
	log "$plat: $line (CMD=$cmd)"
	(CMD=$cmd GOWORK=$gowork TARGETOS=$os TARGETARCH=$arch nice -n 10 bash -c "$line") ||
		fail "go build for $plat (above)"
	log "$plat: built in $((SECONDS - t)) s"
done

# 2. The root filesystem of the scratch base, as distroless static nonroot holds it.
rootfs=$work/rootfs
mkdir -p "$rootfs/etc/ssl/certs" "$rootfs/tmp" "$rootfs/home/nonroot"
chmod 1777 "$rootfs/tmp"
certs=/etc/ssl/certs/ca-certificates.crt
[ -s "$certs" ] || fail "$certs is missing (Debian: apt-get install ca-certificates)"
cp "$certs" "$rootfs/etc/ssl/certs/ca-certificates.crt"
uid=${user%%:*}
gid=${user#*:}
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%s:%s:nonroot:/home/nonroot:/sbin/nologin\n' "$uid" "$gid" >"$rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:%s:\n' "$gid" >"$rootfs/etc/group"
# tar FILE DIR ARGS...: a reproducible layer, owned by root but for /home/nonroot.
layer() {
	tar -cf "$1" -C "$2" --sort=name --mtime=@0 --numeric-owner --owner=0 --group=0 \
		--exclude=./home/nonroot "${@:3}" .
	tar -rf "$1" -C "$2" --mtime=@0 --numeric-owner --owner="$uid" --group="$gid" ./home/nonroot
}

# 3. The images and their index, through a registry of crane's own on loopback.
mkdir -p "$work/blobs"
"$crane" registry serve --address 127.0.0.1:0 --disk "$work/blobs" >"$work/registry.log" 2>&1 &
registry_pid=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/registry.log")
	[ -z "$port" ] || break
	kill -0 "$registry_pid" 2>/dev/null || fail "crane registry serve exited: $(cat "$work/registry.log")"
	sleep 0.1
done
[ -n "$port" ] || fail "crane registry serve did not say its port: $(cat "$work/registry.log")"
repo_ref=127.0.0.1:$port/jobkit/$name
export DOCKER_CONFIG=$work/docker-config # no credentials of the machine's are read
refs=()
for plat in "${plats[@]}"; do
	arch=${plat#*/}
	install -m 0755 "$work/out/manager-$arch" "$rootfs$entrypoint"
	layer "$work/layer-$arch.tar" "$rootfs"
	"$crane" append --insecure --oci-empty-base -f "$work/layer-$arch.tar" -t "$repo_ref:$arch" >/dev/null 2>>"$work/crane.log" ||
		fail "crane append for $plat: $(tail -n 5 "$work/crane.log")"
	"$crane" mutate --insecure "$repo_ref:$arch" --entrypoint "$entrypoint" --user "$user" \
		--set-platform "$plat" -e SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt -l org.opencontainers.image.source=https://github.com/jobkit/jobkit \
		-l org.opencontainers.image.title="$name" -t "$repo_ref:$arch" >/dev/null 2>>"$work/crane.log" ||
		fail "crane mutate for $plat: $(tail -n 5 "$work/crane.log")"
	refs+=(-m "$repo_ref:$arch")
done
"$crane" index append --insecure "${refs[@]}" -t "$repo_ref:latest" >/dev/null 2>>"$work/crane.log" ||
	fail "crane index append: $(tail -n 5 "$work/crane.log")"
"$crane" pull --insecure --format oci "$repo_ref:latest" "$work/layout" 2>>"$work/crane.log" ||
	fail "crane pull: $(tail -n 5 "$work/crane.log")"
mkdir -p "$out_dir"
tar -cf "$out_dir/$name.oci.tar.tmp" -C "$work/layout" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner .
mv "$out_dir/$name.oci.tar.tmp" "$out_dir/$name.oci.tar"
digest=$("$crane" digest --insecure "$repo_ref:latest")

# 4.
check "$out_dir/$name.oci.tar" || fail "the image does not match $dockerfile (above)"
log "$out_dir/$name.oci.tar: jobkit/$name:latest@$digest ($platforms; $(du -h "$out_dir/$name.oci.tar" | cut -f1)) in $((SECONDS - start)) s"
