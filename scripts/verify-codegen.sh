#!/usr/bin/env bash
# Fail (exit 1, with a short diff) when any checked-in generated file is stale: the crddemo
# example's client, every golden fixture and the built-in clientset's input tree
# (kubernetes/src/apis, checked by scripts/update-builtin-input.sh --verify-only). Fix with
# scripts/update-codegen.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if ! "$root/scripts/update-codegen.sh" --verify-only; then
  echo "generated code is stale: run scripts/update-codegen.sh and commit the result" >&2
  exit 1
fi
echo "generated code is up to date"
