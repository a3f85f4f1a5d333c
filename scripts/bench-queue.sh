#!/usr/bin/env bash
# Work queue throughput beside client-go's queues and controller-runtime's priority queue,
# measured in the same run, printed as a table.
#
# Usage: scripts/bench-queue.sh [--rounds N] [--go-rounds N]
#
#   --rounds N     alternate the Go and the Rust benchmark N times (default 2)
#   --go-rounds N  runs per Go case and round (default 30; the median is kept)
#
# Each case adds 10,000 distinct keys and lets 1 or 4 workers get and finish them (ours:
# codegen-runtime/benches/workqueue.rs under criterion; Go: scripts/bench/queue, pinned to
# k8s.io/client-go v0.37 and sigs.k8s.io/controller-runtime v0.25). The priority queues add
# every other key at the low priority (-100). A cell is the median over rounds of ns per item
# (add + get + done); the last column is client-go's plain queue with the same workers divided
# by the row's figure (higher is faster).
set -euo pipefail

die() { echo "bench-queue: error: $*" >&2; exit 1; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=2 GO_ROUNDS=30
while (($#)); do
    case $1 in
        --rounds) ROUNDS=$2; shift ;;
        --go-rounds) GO_ROUNDS=$2; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done
for tool in go cargo python3; do command -v "$tool" >/dev/null || die "'$tool' is required"; done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-queue.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
(cd "$ROOT/scripts/bench/queue" && go build -o "$WORK/queuebench" .) || die "go build failed"
cargo bench --quiet --manifest-path "$ROOT/Cargo.toml" -p kube-codegen-runtime --bench workqueue \
    --no-run 2>/dev/null || die "cargo bench --no-run failed"

for ((r = 1; r <= ROUNDS; r++)); do
    echo "bench-queue: round $r/$ROUNDS: Go" >&2
    "$WORK/queuebench" -rounds "$GO_ROUNDS" >>"$WORK/results" || die "the Go benchmark failed"
    echo "bench-queue: round $r/$ROUNDS: Rust" >&2
    cargo bench --quiet --manifest-path "$ROOT/Cargo.toml" -p kube-codegen-runtime \
        --bench workqueue -- --noplot 'kube-codegen' >"$WORK/rust.$r" 2>&1 ||
        die "cargo bench failed: $(tail -5 "$WORK/rust.$r")"
    # "…/kube-codegen Queue/1" then "time: [low median high]" for 10,000 items.
    python3 - "$WORK/rust.$r" >>"$WORK/results" <<'PY'
import re, sys
units = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
name = None
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"^\S.*?/(kube-codegen [^/]+)/(\d+)\s*$", line.rstrip()) or re.match(r"^\S.*?/(kube-codegen [^/]+)/(\d+)\s+time:", line)
    if m:
        name = (m.group(1).replace(" ", "-"), m.group(2))
    t = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", line)
    if t and name:
        print(f"rust {name[0]} {name[1]} {float(t.group(1)) * units[t.group(2)] / 10000:.1f}")
        name = None
PY
done

python3 - "$WORK/results" <<'PY'
import statistics, sys
cells = {}
for line in open(sys.argv[1]):
    lang, name, workers, ns = line.split()
    cells.setdefault((lang, name, int(workers)), []).append(float(ns))
base = {w: statistics.median(v) for (l, n, w), v in cells.items() if n == "client-go-Typed"}
print("| queue | workers | ns/item (median of rounds) | rounds | client-go Typed ÷ this |")
print("| --- | ---: | ---: | --- | ---: |")
for (lang, name, w), v in sorted(cells.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
    med = statistics.median(v)
    rounds = " / ".join(f"{x:.0f}" for x in v)
    print(f"| {lang}: {name} | {w} | {med:.0f} | {rounds} | {base.get(w, float('nan')) / med:.2f}× |")
PY
