#!/usr/bin/env bash
# Informer memory per cached object beside client-go's informer and kube-rs's reflector,
# measured in the same run against the same in-memory API server, printed as a table.
#
# Usage: scripts/bench-informer-memory.sh [--objects N] [--rounds N]
#
#   --objects N  ConfigMaps to cache (default 10000), each of 1 KiB data, created by
#                server-side apply (one managedFields entry each)
#   --rounds N   measure each informer N times, alternating (default 3; the median is kept)
#
# Ours: codegen-runtime/benches/informer_memory.rs (also the server, in its own process).
# client-go: scripts/bench/informer-memory (k8s.io/client-go v0.37). Each informer runs in a
# process of its own; a cell is the growth of live heap bytes (ours and kube-rs: counted by the
# global allocator; Go: HeapAlloc after a GC) and of VmRSS from before the informer starts to
# after its cache synced, divided by the objects cached.
set -euo pipefail

die() { echo "bench-informer-memory: error: $*" >&2; exit 1; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OBJECTS=10000 ROUNDS=3
while (($#)); do
    case $1 in
        --objects) OBJECTS=$2; shift ;;
        --rounds) ROUNDS=$2; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done
for tool in go cargo python3; do command -v "$tool" >/dev/null || die "'$tool' is required"; done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-informer-memory.XXXXXX")
SERVER=""
cleanup() {
    [[ -n $SERVER ]] && kill -TERM "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
(cd "$ROOT/scripts/bench/informer-memory" && go build -o "$WORK/informermemory" .) ||
    die "go build failed"
OURS=$(cargo bench --quiet --manifest-path "$ROOT/Cargo.toml" -p kube-codegen-runtime \
    --features fake --bench informer_memory --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "informer_memory" and m.get("executable"):
        print(m["executable"])') || die "cannot find the informer_memory binary"
[[ -x $OURS ]] || die "no informer_memory binary"

echo "bench-informer-memory: seeding $OBJECTS ConfigMaps" >&2
"$OURS" serve "$OBJECTS" "$WORK/kubeconfig" >"$WORK/url" 2>"$WORK/server.log" &
SERVER=$!
until [[ -s $WORK/url ]]; do
    kill -0 "$SERVER" 2>/dev/null || die "the server exited: $(cat "$WORK/server.log")"
    sleep 0.2
done

for ((r = 1; r <= ROUNDS; r++)); do
    echo "bench-informer-memory: round $r/$ROUNDS" >&2
    for mode in ours ours-keep-managed-fields ours-metadata kube-rs; do
        "$OURS" "$mode" "$WORK/kubeconfig" >>"$WORK/results" || die "$mode failed"
    done
    "$WORK/informermemory" -kubeconfig "$WORK/kubeconfig" >>"$WORK/results" || die "client-go failed"
    "$WORK/informermemory" -kubeconfig "$WORK/kubeconfig" -strip-managed-fields \
        >>"$WORK/results" || die "client-go failed"
done

python3 - "$WORK/results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, n, heap, rss = line.split()
    rows.setdefault(mode, []).append((int(n), int(heap), int(rss)))
base = statistics.median(h for _, h, _ in rows.get("client-go", [(0, 0, 0)])) or float("nan")
print("| informer | objects | heap B/object (median) | heap rounds | RSS B/object (median) | ÷ client-go heap |")
print("| --- | ---: | ---: | --- | ---: | ---: |")
for mode, v in rows.items():
    heap = statistics.median(h for _, h, _ in v)
    rss = statistics.median(r for _, _, r in v)
    print(f"| {mode} | {v[0][0]} | {heap:.0f} | {' / '.join(str(h) for _, h, _ in v)} | {rss:.0f} | {heap / base:.2f} |")
PY
