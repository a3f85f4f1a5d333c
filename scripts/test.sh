#!/usr/bin/env bash
# The project's test command (README "Set up"; CI runs it through .ci/run): formatting, lints,
# every test of the workspace, and the freshness of all checked-in generated code.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

step() { printf '\n==> %s\n' "$*" >&2; }

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test --workspace"
cargo test --workspace

step "scripts/verify-codegen.sh"
scripts/verify-codegen.sh
