#!/usr/bin/env bash
# Generate Kubernetes client code for Rust API types, in the argument order of code-generator's
# generate-groups.sh:
#
#   scripts/generate-groups.sh <generators> <output-dir> <apis-dir> "<group>:<v1>,<v2> <group2>:<v1>" [flags…]
#
#   <generators>  "all", or a comma-separated list of: deepcopy, register, applyconfiguration,
#                 client, lister, informer, crd (with applyconfiguration in the list, the typed
#                 clients get apply verbs over the apply configurations)
#   <output-dir>  where the client tree goes (e.g. example-crddemo/src/pkg/client)
#   <apis-dir>    the root of the API types, <apis-dir>/<group>/<version>/*.rs
#   flags         passed to every kube-codegen run, e.g. --header-file F, --plural-exceptions
#                 Kind:plural, --apis-module crate::pkg::apis, --output-module crate::pkg::client,
#                 --crd-dir DIR, --crd-file-name TEMPLATE,
#                 --verify-only. See `cargo run -p kube-codegen -- all --help`.
set -euo pipefail

usage() {
  sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
[[ $# -ge 4 ]] || usage
generators=$1 output_dir=$2 apis_dir=$3 group_versions=$4
shift 4

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cargo build --quiet --manifest-path "$root/Cargo.toml" -p kube-codegen
bin="${CARGO_TARGET_DIR:-$root/target}/debug/kube-codegen"

extra=()
if [[ $generators == all ]]; then
  list=(all)
else
  IFS=, read -ra list <<<"$generators"
  # Separate runs: tell the client run that apply configurations are generated too.
  for g in "${list[@]}"; do
    [[ $g == applyconfiguration ]] && extra=(--apply-configurations true)
  done
fi
for g in "${list[@]}"; do
  "$bin" "$g" --apis-dir "$apis_dir" --output-dir "$output_dir" --groups "$group_versions" "${extra[@]+"${extra[@]}"}" "$@"
done
