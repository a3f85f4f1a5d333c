#!/usr/bin/env bash
# Regenerate every checked-in generated file: the crddemo example's client and each golden
# fixture under tests/fixtures/<case>/ (its flags are in tests/fixtures/<case>/codegen.args).
# Extra arguments (e.g. --verify-only) are passed to every run; scripts/verify-codegen.sh does that.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
header=scripts/boilerplate.rs.txt
status=0

scripts/generate-groups.sh all example-crddemo/src/pkg/client example-crddemo/src/pkg/apis "crddemo:v1" \
  --header-file "$header" "$@" || status=1

for dir in tests/fixtures/*/; do
  dir=${dir%/}
  mapfile -t args < <(grep -v '^[[:space:]]*\(#\|$\)' "$dir/codegen.args")
  "${CARGO_TARGET_DIR:-$root/target}/debug/kube-codegen" all \
    --apis-dir "$dir/pkg/apis" --output-dir "$dir/pkg/client" --header-file "$header" \
    "${args[@]}" "$@" || status=1
done
exit $status
