#!/usr/bin/env bash
# Reconcile capacity of sharded crddemo replicas (issue 31), the reference sharder's method:
# 1, 2, 3 and 4 `crddemo --sharded` processes, and one leader-elected process, under the same
# churn against the in-memory API server; printed as a table with the machine's load.
#
# Usage: scripts/bench-sharding.sh [--replicas 1,2,3,4] [--workers N] [--delay-ms MS]
#                                  [--rate CHANGES_PER_S] [--secs S] [--objects N]
#
#   --replicas   the sharded setups (default 1,2,3,4)
#   --workers    crddemo --workers, max_concurrent_reconciles per replica (default 1)
#   --delay-ms   crddemo --reconcile-delay: the simulated external call per reconcile (default 50)
#   --rate       changes per second, round-robin over the Mydemos (default 100)
#   --secs       how long the churn lasts (default 20)
#   --objects    how many Mydemos (default 200)
#
# Each setup gets a fresh in-memory server (in the benchmark process) and release-built crddemo
# processes; see example-crddemo/benches/sharding_capacity.rs for what is measured. The figures
# depend on the machine and on whatever else runs on it: the load average is printed before and
# after.
set -euo pipefail

die() { echo "bench-sharding: error: $*" >&2; exit 1; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
while (($#)); do
    case $1 in
        --replicas) export SHARDBENCH_REPLICAS=$2; shift ;;
        --workers) export SHARDBENCH_WORKERS=$2; shift ;;
        --delay-ms) export SHARDBENCH_DELAY_MS=$2; shift ;;
        --rate) export SHARDBENCH_RATE=$2; shift ;;
        --secs) export SHARDBENCH_SECS=$2; shift ;;
        --objects) export SHARDBENCH_OBJECTS=$2; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done
command -v cargo >/dev/null || die "'cargo' is required"

cargo bench --quiet --manifest-path "$ROOT/Cargo.toml" -p example-crddemo \
    --bench sharding_capacity --no-run || die "cargo bench --no-run failed"
echo "bench-sharding: load before: $(uptime)"
cargo bench --quiet --manifest-path "$ROOT/Cargo.toml" -p example-crddemo \
    --bench sharding_capacity || die "the benchmark failed"
echo "bench-sharding: load after: $(uptime)"
echo "bench-sharding: $(nproc) CPUs"
