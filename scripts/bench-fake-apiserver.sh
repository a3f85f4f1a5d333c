#!/usr/bin/env bash
# Start-up time and memory of the kube-fake-apiserver binary beside kube-apiserver + etcd
# (scripts/start-kube-apiserver.sh), measured in the same run, printed as a table.
#
# Usage: scripts/bench-fake-apiserver.sh [--runs N] [--bin DIR] [--fake PATH]
#
#   --runs N     start each server N times (default 3); the table shows the median
#   --bin DIR    directory with kube-apiserver and etcd (default: scripts/build-kube-apiserver.sh)
#   --fake PATH  the kube-fake-apiserver binary (default: built with `cargo build --release`)
#
# Start-up is the time from launching until /readyz answers 200 (the fake: until it also wrote
# its kubeconfig). Memory is the resident set (VmRSS) of the server processes once ready, and
# again after one `GET /openapi/v3/apis/apps/v1` (which makes the fake build its documents).
set -euo pipefail

die() { echo "bench-fake-apiserver: error: $*" >&2; exit 1; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=3 BIN="" FAKE=""
while (($#)); do
    case $1 in
        --runs) RUNS=$2; shift ;;
        --bin) BIN=$2; shift ;;
        --fake) FAKE=$2; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done
for tool in curl awk; do command -v "$tool" >/dev/null || die "'$tool' is required"; done
if [[ -z $FAKE ]]; then
    cargo build --release --quiet -p kube-fake-apiserver --bin kube-fake-apiserver \
        --manifest-path "$ROOT/Cargo.toml" || die "cargo build failed"
    FAKE="$ROOT/target/release/kube-fake-apiserver"
fi
[[ -x $FAKE ]] || die "$FAKE is not executable"
if [[ -z $BIN ]]; then
    BIN=$("$ROOT/scripts/build-kube-apiserver.sh" | tail -1) || die "build-kube-apiserver.sh failed"
fi

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
rss_kib() { # pids...: summed VmRSS in KiB
    local total=0 p v
    for p in "$@"; do
        v=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)
        total=$((total + ${v:-0}))
    done
    echo "$total"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
kc_field() { awk -v k="$2:" '$1 == k { gsub(/"/, "", $2); print $2; exit }' "$1"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-fake-apiserver.XXXXXX")
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

fake_run() { # -> "start rss_ready rss_openapi"
    local d="$WORK/fake-$1" t0 pid url token
    mkdir -p "$d"
    t0=$(now)
    "$FAKE" --port 0 --kubeconfig "$d/kc" --log warn >"$d/url" 2>"$d/log" &
    pid=$!
    PIDS+=("$pid")
    until [[ -s $d/kc ]] && url=$(head -1 "$d/url") && [[ -n $url ]] \
        && curl -fsk -o /dev/null "$url/readyz"; do
        kill -0 "$pid" 2>/dev/null || die "kube-fake-apiserver exited: $(cat "$d/log")"
        sleep 0.005
    done
    local start rss1 rss2
    start=$(since "$t0")
    rss1=$(rss_kib "$pid")
    token=$(kc_field "$d/kc" token)
    curl -fsk -o /dev/null -H "Authorization: Bearer $token" "$url/openapi/v3/apis/apps/v1"
    rss2=$(rss_kib "$pid")
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
    echo "$start $rss1 $rss2"
}

real_run() { # -> "start rss_ready rss_openapi"
    local d="$WORK/real-$1" t0 pid kids url token
    t0=$(now)
    "$ROOT/scripts/start-kube-apiserver.sh" --bin "$BIN" --dir "$d" >"$WORK/real-$1.out" 2>"$WORK/real-$1.err" &
    pid=$!
    PIDS+=("$pid")
    until grep -q '^export KUBECONFIG=' "$WORK/real-$1.out" 2>/dev/null; do
        kill -0 "$pid" 2>/dev/null || die "start-kube-apiserver.sh exited: $(tail -5 "$WORK/real-$1.err")"
        sleep 0.05
    done
    local start rss1 rss2
    start=$(since "$t0")
    kids=$(pgrep -P "$pid" | tr '\n' ' ')
    # shellcheck disable=SC2086
    rss1=$(rss_kib $kids)
    url=$(kc_field "$d/kubeconfig" server)
    token=$(kc_field "$d/kubeconfig" token)
    curl -fsk -o /dev/null -H "Authorization: Bearer $token" "$url/openapi/v3/apis/apps/v1"
    # shellcheck disable=SC2086
    rss2=$(rss_kib $kids)
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
    echo "$start $rss1 $rss2"
}

declare -a FS FR FO RS RR RO
for ((i = 1; i <= RUNS; i++)); do
    read -r s r o < <(fake_run "$i"); FS+=("$s"); FR+=("$r"); FO+=("$o")
    read -r s r o < <(real_run "$i"); RS+=("$s"); RR+=("$r"); RO+=("$o")
done
m() { printf '%s\n' "$@" | median; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
echo
echo "| server (median of $RUNS runs, same machine, same run) | start-up to /readyz | RSS when ready | RSS after GET /openapi/v3/apis/apps/v1 |"
echo "| --- | --- | --- | --- |"
printf '| kube-fake-apiserver (%s) | %s s | %s MiB | %s MiB |\n' "$(basename "$(dirname "$FAKE")")" \
    "$(m "${FS[@]}")" "$(mib "$(m "${FR[@]}")")" "$(mib "$(m "${FO[@]}")")"
printf '| kube-apiserver + etcd (start-kube-apiserver.sh) | %s s | %s MiB | %s MiB |\n' \
    "$(m "${RS[@]}")" "$(mib "$(m "${RR[@]}")")" "$(mib "$(m "${RO[@]}")")"
