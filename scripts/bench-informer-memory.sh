#!/usr/bin/env bash
# Informer memory per cached object beside client-go's informer and kube-rs's reflector,
# measured in the same run against the same in-memory API server, printed as a table.
#
# Usage: scripts/bench-informer-memory.sh [--scenarios "KIND:N ..."] [--rounds N] [--breakdown]
#
#   --scenarios  what to cache, one server each (default
#                "configmaps:10000 configmaps:100000 pods:10000"): ConfigMaps of 1 KiB data
#                (configuration text, different in each) created by server-side apply (one managedFields entry each), or Pods as a
#                ReplicaSet makes them, applied by the controller, the scheduler and the kubelet
#                (three managedFields entries each), or statefulset-pods: the same Pods as a
#                StatefulSet makes them, whose name and index among their labels give each
#                Pod a label set of its own (informed on as pods)
#   --rounds N   measure each informer N times, alternating (default 3; the median is kept)
#   --breakdown  also print where one object's bytes go in our decoded object and store
#
# Ours: codegen-runtime/benches/informer_memory.rs (also the server, in its own process).
# client-go: scripts/bench/informer-memory (k8s.io/client-go v0.37). Each informer runs in a
# process of its own; a cell is the growth of live heap bytes (ours and kube-rs: counted by the
# global allocator; Go: HeapAlloc after a GC) and of VmRSS from before the informer starts to
# after its cache synced, divided by the objects cached.
set -euo pipefail

die() { echo "bench-informer-memory: error: $*" >&2; exit 1; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCENARIOS="configmaps:10000 configmaps:100000 pods:10000" ROUNDS=3 BREAKDOWN=""
while (($#)); do
    case $1 in
        --scenarios) SCENARIOS=$2; shift ;;
        --breakdown) BREAKDOWN=1 ;;
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
    if [[ -n $SERVER ]]; then kill -TERM "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; fi
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

for scenario in $SCENARIOS; do
    KIND=${scenario%%:*} OBJECTS=${scenario#*:}
    case $KIND in
        configmaps | pods) RESOURCE=$KIND ;;
        statefulset-pods) RESOURCE=pods ;;
        *) die "--scenarios: unknown kind '$KIND' in '$scenario'" ;;
    esac
    [[ $OBJECTS =~ ^[0-9]+$ ]] || die "--scenarios: '$scenario' is not KIND:COUNT"
    echo "bench-informer-memory: seeding $OBJECTS $KIND ($(uptime))" >&2
    rm -f "$WORK/url"
    "$OURS" serve "$KIND" "$OBJECTS" "$WORK/kubeconfig" >"$WORK/url" 2>"$WORK/server.log" &
    SERVER=$!
    until [[ -s $WORK/url ]]; do
        kill -0 "$SERVER" 2>/dev/null || die "the server exited: $(cat "$WORK/server.log")"
        sleep 0.2
    done
    [[ -n $BREAKDOWN ]] && "$OURS" breakdown "$RESOURCE" "$WORK/kubeconfig" >&2
    for ((r = 1; r <= ROUNDS; r++)); do
        echo "bench-informer-memory: $KIND:$OBJECTS round $r/$ROUNDS ($(uptime))" >&2
        for mode in ours ours-keep-managed-fields ours-decoded ours-decoded-keep-managed-fields \
            ours-metadata kube-rs; do
            "$OURS" "$mode" "$RESOURCE" "$WORK/kubeconfig" | sed "s/^/$KIND /" >>"$WORK/results" ||
                die "$mode failed"
        done
        for strip in "" -strip-managed-fields; do
            "$WORK/informermemory" -kubeconfig "$WORK/kubeconfig" -kind "$RESOURCE" $strip |
                sed "s/^/$KIND /" >>"$WORK/results" || die "client-go failed"
        done
    done
    kill -TERM "$SERVER" 2>/dev/null
    wait "$SERVER" 2>/dev/null || true # killed: its status is 143
    SERVER=""
done
echo "bench-informer-memory: done ($(uptime))" >&2

python3 - "$WORK/results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kind, mode, n, heap, rss = line.split()
    rows.setdefault((kind, int(n)), {}).setdefault(mode, []).append((int(heap), int(rss)))
print("| kind | objects | informer | heap B/object (median) | heap rounds | RSS B/object (median) | ÷ client-go heap |")
print("| --- | ---: | --- | ---: | --- | ---: | ---: |")
for (kind, n), modes in rows.items():
    base = statistics.median(h for h, _ in modes.get("client-go", [(0, 0)])) or float("nan")
    for mode, v in modes.items():
        heap = statistics.median(h for h, _ in v)
        rss = statistics.median(r for _, r in v)
        print(f"| {kind} | {n} | {mode} | {heap:.0f} | {' / '.join(str(h) for h, _ in v)} | {rss:.0f} | {heap / base:.2f} |")
PY
