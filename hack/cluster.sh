#!/usr/bin/env bash
# A real control plane on this machine, on loopback addresses only: etcd, kube-apiserver
# (its own certificates, an admin kubeconfig, a service-account signing key) and kwok
# running a few fake nodes whose pods go Pending -> Running -> Succeeded, or Failed with
# the exit code their pod template asks for (hack/cluster/kwok.yaml says how). No
# scheduler and no controller runs: pods name their node (spec.nodeName), and the Job
# controllers to compare (kube-controller-manager --controllers=job, jobkit-clientgo) are
# started by whoever uses the cluster (hack/benchcluster does, one at a time).
#
#   hack/cluster.sh up        build what is missing (hack/cluster-bins.sh), start, wait ready
#   hack/cluster.sh status    what runs, whether the API server is ready, the nodes
#   hack/cluster.sh down      stop exactly the processes `up` started (pid files), drop the data
#   hack/cluster.sh env       print the variables a client needs (KUBECONFIG, ...)
#   hack/cluster.sh restart-apiserver   stop kube-apiserver and start it again, same
#                             flags and data (the chaos run does this once)
#
#   JOBKIT_CLUSTER_DIR=dir    state: certificates, kubeconfig, data, logs, pids
#                             (default ${TMPDIR:-/tmp}/jobkit-cluster)
#   JOBKIT_CLUSTER_PORT=n     first of the three loopback ports used (default 36440:
#                             kube-apiserver n, etcd clients n+1, etcd peers n+2);
#                             "auto": three free ones below the ephemeral range, so
#                             that concurrent runs (each with its own dir) never clash.
#                             `up` records it in dir/port; the other commands read it.
#   JOBKIT_CLUSTER_NODES=n    fake nodes kwok-0 ... kwok-(n-1) (default 4)
#   JOBKIT_CLUSTER_BIN=dir    take the binaries from dir instead of hack/cluster-bins.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${JOBKIT_CLUSTER_DIR:-${TMPDIR:-/tmp}/jobkit-cluster}
nodes=${JOBKIT_CLUSTER_NODES:-4}
pki=$dir/pki

log() { echo "cluster: $*" >&2; }

# in_use PORT: something listens on 127.0.0.1:PORT.
in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# set_ports PORT: the three ports from the first one.
set_ports() {
	port=$1
	api_port=$port
	etcd_port=$((port + 1))
	peer_port=$((port + 2))
	server=https://127.0.0.1:$api_port
}

# pick_ports: three consecutive free ports in 20000-32000, below Linux's ephemeral
# range (32768-60999), where no outgoing connection takes them by chance.
pick_ports() {
	local p i
	for i in $(seq 50); do
		p=$((20000 + (RANDOM % 4000) * 3))
		in_use "$p" || in_use $((p + 1)) || in_use $((p + 2)) || { echo "$p"; return; }
	done
	log "no three free consecutive ports found in 20000-32000"
	exit 1
}

if [ -n "${JOBKIT_CLUSTER_PORT:-}" ] && [ "$JOBKIT_CLUSTER_PORT" != auto ]; then
	set_ports "$JOBKIT_CLUSTER_PORT"
elif [ -f "$dir/port" ]; then
	set_ports "$(cat "$dir/port")"
elif [ "${JOBKIT_CLUSTER_PORT:-}" = auto ] && [ "${1:-}" = up ]; then
	picked=$(pick_ports) || exit 1
	set_ports "$picked"
else
	set_ports 36440
fi

# die MESSAGE [LOG]: the message, the last lines of the log that says why (a CI run
# shows only its tail), and a failed `up` stops what it had started.
die() {
	log "$*"
	if [ -n "${2:-}" ] && [ -f "$2" ]; then
		log "last lines of $2:"
		tail -n 15 "$2" | sed 's/^/  | /' >&2
	fi
	[ -z "${starting:-}" ] || down
	exit 1
}

# alive NAME: the process of NAME's pid file runs and is still the binary we started
# (a pid reused by another process after a crash is not ours to stop).
alive() {
	local pidfile=$dir/pids/$1.pid pid exe
	[ -f "$pidfile" ] || return 1
	pid=$(cat "$pidfile")
	exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
	[ "$(basename "$exe")" = "$(cat "$dir/pids/$1.bin")" ]
}

# start NAME BINARY ARGS...: runs BINARY in the background with its output in
# logs/NAME.log and records its pid.
start() {
	local name=$1 binary=$2
	shift 2
	mkdir -p "$dir/logs" "$dir/pids"
	basename "$(readlink -f "$binary")" >"$dir/pids/$name.bin"
	"$binary" "$@" >"$dir/logs/$name.log" 2>&1 &
	echo $! >"$dir/pids/$name.pid"
}

# stop NAME: SIGTERM, then SIGKILL after 10 s, for the process of NAME's pid file only.
stop() {
	local name=$1 pid i
	if alive "$name"; then
		pid=$(cat "$dir/pids/$name.pid")
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "$name (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		log "stopped $name (pid $pid)"
	fi
	rm -f "$dir/pids/$name.pid" "$dir/pids/$name.bin"
}

# api METHOD PATH [BODY]: one request to kube-apiserver as the admin.
api() {
	curl -sS --fail-with-body --max-time 10 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
		-X "$1" -H 'Content-Type: application/json' ${3:+--data "$3"} "$server$2"
}

certs() {
	mkdir -p "$pki"
	cd "$pki"
	openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=jobkit-cluster-ca \
		-keyout ca.key -out ca.crt 2>/dev/null
	# sign NAME SUBJECT [SAN]: a key and a certificate signed by the CA.
	sign() {
		openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
		printf 'extendedKeyUsage=%s\n%s' "$4" "${3:+subjectAltName=$3}" >"$1.ext"
		openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
			-extfile "$1.ext" -out "$1.crt" 2>/dev/null
		rm -f "$1.csr" "$1.ext"
	}
	sign apiserver /CN=kube-apiserver "IP:127.0.0.1,DNS:localhost" serverAuth
	sign admin "/O=system:masters/CN=jobkit-cluster-admin" "" clientAuth
	openssl genrsa -out sa.key 2048 2>/dev/null
	openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	cd - >/dev/null
	b64() { base64 -w0 <"$pki/$1"; }
	cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: jobkit
  cluster:
    server: $server
    certificate-authority-data: $(b64 ca.crt)
users:
- name: admin
  user:
    client-certificate-data: $(b64 admin.crt)
    client-key-data: $(b64 admin.key)
contexts:
- name: jobkit
  context: {cluster: jobkit, user: admin}
current-context: jobkit
EOF
}

up() {
	if alive kube-apiserver; then
		log "already up (hack/cluster.sh down first to start afresh)"
		status
		return
	fi
	# Whatever a crashed or half-finished `up` left running goes first.
	local name
	for name in kwok kube-apiserver etcd; do
		stop "$name"
	done
	local bin p
	# The control plane needs no kube-controller-manager: the benchmark builds it.
	bin=${JOBKIT_CLUSTER_BIN:-$("$repo/hack/cluster-bins.sh" --no-kcm)} || die "building the binaries failed (hack/cluster-bins.sh)"
	for p in "$api_port:kube-apiserver" "$etcd_port:etcd clients" "$peer_port:etcd peers"; do
		in_use "${p%%:*}" && die "port ${p%%:*} (${p#*:}) on 127.0.0.1 is in use by another process: set JOBKIT_CLUSTER_PORT to another first port, or to auto"
	done
	rm -rf "$dir/etcd" "$pki"
	mkdir -p "$dir/logs" "$dir/pids"
	echo "$bin" >"$dir/bin"
	echo "$port" >"$dir/port"
	certs
	starting=1
	start etcd "$bin/etcd" --name jobkit --data-dir "$dir/etcd" \
		--listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
		--listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-cluster "jobkit=http://127.0.0.1:$peer_port" --unsafe-no-fsync --quota-backend-bytes 8589934592
	start_apiserver "$bin"
	local i
	for i in $(seq 0 $((nodes - 1))); do
		api POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"kwok-$i\",\"labels\":{\"type\":\"kwok\"}}}" >/dev/null
	done
	start kwok "$bin/kwok" --kubeconfig "$dir/kubeconfig" --config "$repo/hack/cluster/kwok.yaml" \
		--manage-all-nodes=false --manage-nodes-with-label-selector type=kwok
	for i in $(seq 60); do
		[ "$(ready_nodes)" = "$nodes" ] && break
		alive kwok || die "kwok exited" "$dir/logs/kwok.log"
		sleep 1
	done
	[ "$(ready_nodes)" = "$nodes" ] || die "kwok did not make the $nodes nodes Ready in 60 s" "$dir/logs/kwok.log"
	starting=
	status
}

# start_apiserver BIN: starts kube-apiserver from BIN and waits until it is ready.
start_apiserver() {
	local i log=$dir/logs/kube-apiserver.log
	# ServiceAccount admission is off: no token controller runs, and the benchmarks'
	# pods need no credentials. The Job controllers authenticate as the admin.
	# --profiling (the default) serves /debug/pprof/ to the admin only:
	# benchcluster --profile takes kube-apiserver's profiles beside the controller's.
	start kube-apiserver "$1/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
		--tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
		--client-ca-file "$pki/ca.crt" --authorization-mode RBAC \
		--service-account-issuer "$server" --service-account-key-file "$pki/sa.pub" \
		--service-account-signing-key-file "$pki/sa.key" --service-cluster-ip-range 10.96.0.0/24 \
		--disable-admission-plugins ServiceAccount --endpoint-reconciler-type none --profiling
	for i in $(seq 120); do
		api GET /readyz >/dev/null 2>&1 && return
		alive kube-apiserver || die "kube-apiserver exited" "$log"
		sleep 1
	done
	api GET /readyz >/dev/null || die "kube-apiserver not ready after 120 s" "$log"
}

restart_apiserver() {
	alive kube-apiserver || die "kube-apiserver is not running (hack/cluster.sh up first)"
	stop kube-apiserver
	# Keep the first run's log: the restart's goes after it.
	cat "$dir/logs/kube-apiserver.log" >>"$dir/logs/kube-apiserver.before-restart.log"
	start_apiserver "$(cat "$dir/bin")"
	log "kube-apiserver restarted (pid $(cat "$dir/pids/kube-apiserver.pid"))"
}

# ready_nodes: how many nodes have the Ready condition True.
ready_nodes() {
	# The API server indents its JSON for curl: a condition's status follows its type.
	api GET /api/v1/nodes 2>/dev/null | grep -A1 '"type": "Ready"' | grep -c '"status": "True"' || true
}

status() {
	local name code=0
	for name in etcd kube-apiserver kwok; do
		if alive "$name"; then
			echo "$name: running (pid $(cat "$dir/pids/$name.pid"))"
		else
			echo "$name: not running"
			code=1
		fi
	done
	if api GET /readyz >/dev/null 2>&1; then
		echo "kube-apiserver: ready at $server, nodes Ready: $(ready_nodes)"
	else
		echo "kube-apiserver: not ready"
		code=1
	fi
	show_env
	return $code
}

show_env() {
	echo "KUBECONFIG=$dir/kubeconfig"
	echo "JOBKIT_CLUSTER_DIR=$dir"
	echo "JOBKIT_CLUSTER_PORT=$port"
	echo "JOBKIT_CLUSTER_BIN=$(cat "$dir/bin" 2>/dev/null || true)"
}

down() {
	local name
	for name in kwok kube-apiserver etcd; do
		stop "$name"
	done
	rm -rf "$dir/etcd" "$pki" "$dir/kubeconfig" "$dir/port"
	log "down (logs kept in $dir/logs)"
}

case "${1:-}" in
up) up ;;
down) down ;;
status) status ;;
env) show_env ;;
restart-apiserver) restart_apiserver ;;
*)
	sed -n '2,26p' "$0" >&2
	exit 2
	;;
esac
