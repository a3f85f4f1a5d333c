#!/usr/bin/env bash
# Admission round trip through a validating webhook: kube-apiserver v1.37 calling our webhook
# server, a minimal Go controller-runtime v0.25 webhook (scripts/bench/webhook) making the same
# check, and no webhook — measured in one run against one kube-apiserver (tests/benches/admission.rs).
#
# Usage: scripts/bench-webhook.sh [--requests N]
#
#   --requests N  creates per case and round (default 500; three rounds, cases taking turns)
#
# Prints a table: p50 and p99 latency of a create made alone, and creates per second with 8 at
# once. The real server comes from $KUBE_CODEGEN_K8S_BIN or scripts/build-kube-apiserver.sh.
set -euo pipefail

die() { echo "bench-webhook: error: $*" >&2; exit 1; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REQUESTS=500
while (($#)); do
    case $1 in
        --requests) REQUESTS=$2; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done
for tool in go cargo; do command -v "$tool" >/dev/null || die "'$tool' is required"; done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-webhook.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
(cd "$ROOT/scripts/bench/webhook" && go build -o "$WORK/webhookbench" .) || die "go build failed"
WEBHOOK_BENCH_GO="$WORK/webhookbench" WEBHOOK_BENCH_REQUESTS="$REQUESTS" \
    cargo bench --quiet --manifest-path "$ROOT/Cargo.toml" -p tests --bench admission
