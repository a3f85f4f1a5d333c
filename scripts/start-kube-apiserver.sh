#!/usr/bin/env bash
# Start a throw-away etcd + kube-apiserver on 127.0.0.1 for manual experiments.
#
# Usage: scripts/start-kube-apiserver.sh [--bin DIR] [--dir DIR] [--keep]
#
#   --bin DIR   directory with kube-apiserver, etcd and kubectl (default: the output of
#               scripts/build-kube-apiserver.sh, which builds them on first use: 6-10 min)
#   --dir DIR   data directory; must not exist or be empty (default: a fresh
#               ${TMPDIR:-/tmp}/kube-codegen-apiserver.XXXXXX)
#   --keep      keep the data directory (etcd data, certs, logs, kubeconfig) on exit
#
# Both servers listen on free loopback ports. Authentication is a static bearer token for the
# user "admin" in group system:masters (tokens.csv); authorization is RBAC. When /readyz answers
# 200 the script writes <dir>/kubeconfig, prints `export KUBECONFIG=...` on stdout and stays in
# the foreground. Ctrl-C (or SIGTERM) stops both servers and removes the data directory.
set -euo pipefail

die() { echo "start-kube-apiserver: error: $*" >&2; exit 1; }
log() { echo "start-kube-apiserver: $*" >&2; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="" DIR="" KEEP=0
while (($#)); do
    case $1 in
        --bin) (($# >= 2)) || die "--bin needs a directory"; BIN=$2; shift ;;
        --dir) (($# >= 2)) || die "--dir needs a directory"; DIR=$2; shift ;;
        --keep) KEEP=1 ;;
        -h|--help) usage; exit 0 ;;
        *) usage; die "unknown argument '$1'" ;;
    esac
    shift
done

for tool in openssl curl base64; do
    command -v "$tool" >/dev/null || die "'$tool' is required but not found in PATH"
done

if [[ -z $BIN ]]; then
    BIN=$("$ROOT/scripts/build-kube-apiserver.sh" | tail -1) || die "scripts/build-kube-apiserver.sh failed"
fi
for b in etcd kube-apiserver; do
    [[ -x $BIN/$b ]] || die "$BIN/$b not found (build it with scripts/build-kube-apiserver.sh)"
done

if [[ -z $DIR ]]; then
    DIR=$(mktemp -d "${TMPDIR:-/tmp}/kube-codegen-apiserver.XXXXXX")
else
    if [[ -e $DIR ]] && [[ -n "$(ls -A "$DIR")" ]]; then die "--dir $DIR exists and is not empty"; fi
    mkdir -p "$DIR"
fi
DIR=$(cd "$DIR" && pwd)
chmod 700 "$DIR"

ETCD_PID="" KAS_PID=""
stop() { # pid name
    local pid=$1 name=$2 i
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "$name (pid $pid) did not stop within 10s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    stop "$KAS_PID" kube-apiserver
    stop "$ETCD_PID" etcd
    if ((KEEP)); then
        log "kept $DIR"
    elif ((rc != 0)); then
        log "failed: kept $DIR for inspection (delete it when done)"
    else
        rm -rf "$DIR"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'log "stopping..."; exit 0' INT TERM HUP

# A free TCP port on 127.0.0.1 (racy by nature, but both servers bind right away).
USED_PORTS=" "
free_port() {
    local p i
    for ((i = 0; i < 200; i++)); do
        p=$((20000 + RANDOM % 40000))
        [[ $USED_PORTS == *" $p "* ]] && continue
        # A refused connection means nobody listens there.
        if ! (exec 5<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            USED_PORTS+="$p "
            echo "$p"
            return 0
        fi
    done
    die "could not find a free port on 127.0.0.1"
}
ETCD_PORT=$(free_port); USED_PORTS+="$ETCD_PORT "
ETCD_PEER_PORT=$(free_port); USED_PORTS+="$ETCD_PEER_PORT "
KAS_PORT=$(free_port)

# Credentials: a static admin token and a service-account signing key.
TOKEN=$(openssl rand -hex 32)
printf '%s,admin,admin,"system:masters"\n' "$TOKEN" >"$DIR/tokens.csv"
openssl genrsa -out "$DIR/sa.key" 2048 2>/dev/null || die "openssl genrsa failed"
chmod 600 "$DIR/tokens.csv" "$DIR/sa.key"
mkdir -p "$DIR/pki"

log "data dir $DIR"
log "starting etcd on 127.0.0.1:$ETCD_PORT"
"$BIN/etcd" \
    --data-dir="$DIR/etcd" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="default=http://127.0.0.1:$ETCD_PEER_PORT" \
    --log-level=warn \
    --unsafe-no-fsync=true \
    </dev/null >"$DIR/etcd.log" 2>&1 &
ETCD_PID=$!

T0=$(date +%s.%N)
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

wait_for() { # name pid url timeout-seconds log [curl args...]
    local name=$1 pid=$2 url=$3 timeout=$4 logf=$5 deadline
    shift 5
    deadline=$((SECONDS + timeout))
    until curl -fsS -o /dev/null --max-time 2 "$@" "$url" 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 30 "$logf" >&2 || true
            die "$name exited during start-up (log: $logf)"
        fi
        if ((SECONDS >= deadline)); then
            tail -n 30 "$logf" >&2 || true
            die "$name not ready after ${timeout}s (log: $logf)"
        fi
        sleep 0.2
    done
}
wait_for etcd "$ETCD_PID" "http://127.0.0.1:$ETCD_PORT/health" 30 "$DIR/etcd.log"
log "etcd ready after $(elapsed)s"

log "starting kube-apiserver on https://127.0.0.1:$KAS_PORT"
"$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 \
    --secure-port="$KAS_PORT" \
    --advertise-address=127.0.0.1 \
    --cert-dir="$DIR/pki" \
    --token-auth-file="$DIR/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$DIR/sa.key" \
    --service-account-signing-key-file="$DIR/sa.key" \
    --service-cluster-ip-range=10.0.0.0/16 \
    --disable-admission-plugins=ServiceAccount \
    --endpoint-reconciler-type=none \
    --v=1 \
    </dev/null >"$DIR/kube-apiserver.log" 2>&1 &
KAS_PID=$!

# /readyz is readable anonymously (system:public-info-viewer). The serving cert does not
# exist before start-up, hence -k here; the kubeconfig below pins it.
wait_for kube-apiserver "$KAS_PID" "https://127.0.0.1:$KAS_PORT/readyz" 120 "$DIR/kube-apiserver.log" -k
log "kube-apiserver ready after $(elapsed)s"

CRT=$DIR/pki/apiserver.crt
[[ -s $CRT ]] || die "$CRT not found: kube-apiserver did not write its self-signed certificate"
cat >"$DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kube-codegen
  cluster:
    server: https://127.0.0.1:$KAS_PORT
    certificate-authority-data: $(base64 <"$CRT" | tr -d '\n')
users:
- name: admin
  user:
    token: $TOKEN
contexts:
- name: kube-codegen
  context:
    cluster: kube-codegen
    user: admin
current-context: kube-codegen
EOF
chmod 600 "$DIR/kubeconfig"

log "kube-apiserver https://127.0.0.1:$KAS_PORT (pid $KAS_PID), etcd http://127.0.0.1:$ETCD_PORT (pid $ETCD_PID)"
log "serving certificate (leaf + its self-signed CA): $CRT"
log "logs: $DIR/kube-apiserver.log $DIR/etcd.log"
[[ -x $BIN/kubectl ]] && log "kubectl: $BIN/kubectl"
log "press Ctrl-C to stop both servers$( ((KEEP)) || echo " and delete $DIR")"
echo "export KUBECONFIG=$DIR/kubeconfig"

# Stay in the foreground until a signal arrives or one of the servers dies.
set +e
wait -n "$ETCD_PID" "$KAS_PID"
rc=$?
set -e
if ! kill -0 "$ETCD_PID" 2>/dev/null; then
    tail -n 20 "$DIR/etcd.log" >&2 || true
    die "etcd exited unexpectedly (status $rc); log: $DIR/etcd.log"
fi
tail -n 20 "$DIR/kube-apiserver.log" >&2 || true
die "kube-apiserver exited unexpectedly (status $rc); log: $DIR/kube-apiserver.log"
