#!/usr/bin/env bash
# Regenerate every checked-in generated file: the crddemo example's client and CRD
# (example-crddemo/crd/mydemo.yaml, the seed's file name) and each golden fixture under
# tests/fixtures/<case>/ (its flags are in tests/fixtures/<case>/codegen.args; its CRDs go to
# tests/fixtures/<case>/crd/; a line `#generators: a b …` there runs those generators, one run
# each, instead of `all`).
# Extra arguments (e.g. --verify-only) are passed to every run; scripts/verify-codegen.sh does that.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
header=scripts/boilerplate.rs.txt
status=0

scripts/generate-groups.sh all example-crddemo/src/pkg/client example-crddemo/src/pkg/apis "crddemo:v1,v1alpha1" \
  --header-file "$header" --crd-dir example-crddemo/crd --crd-file-name '{singular}.yaml' "$@" || status=1

for dir in tests/fixtures/*/; do
  dir=${dir%/}
  mapfile -t args < <(grep -v '^[[:space:]]*\(#\|$\)' "$dir/codegen.args")
  read -r -a gens < <(sed -n 's/^#generators://p' "$dir/codegen.args"; echo)
  ((${#gens[@]})) || gens=(all)
  for gen in "${gens[@]}"; do
    "${CARGO_TARGET_DIR:-$root/target}/debug/kube-codegen" "$gen" \
      --apis-dir "$dir/pkg/apis" --output-dir "$dir/pkg/client" --crd-dir "$dir/crd" --header-file "$header" \
      "${args[@]}" "$@" || status=1
  done
done
# --- built-in clientset (issue 15; kept apart from the generator's own steps) ---------------
# The input tree kubernetes/src/apis (k8s-openapi kinds under k8s.io/api's +genclient tags) and
# kubernetes/Cargo.toml's per-group features, from the Go sources: scripts/update-builtin-input.sh.
builtin_args=()
for a in "$@"; do [[ $a == --verify-only ]] && builtin_args+=(--verify-only); done
scripts/update-builtin-input.sh "${builtin_args[@]}" || status=1
# The clientset, listers and informers over that input (kubernetes/src/client), one feature per
# group; Kubernetes' own hack/update-codegen.sh passes the same plural exception to client-gen.
# The clients get typed apply/apply_status over the apply configurations below.
for gen in register client lister informer; do
  "${CARGO_TARGET_DIR:-$root/target}/debug/kube-codegen" "$gen" \
    --apis-dir kubernetes/src/apis --output-dir kubernetes/src/client \
    --apis-module crate::apis --output-module crate::client --header-file "$header" \
    --plural-exceptions Endpoints:Endpoints --group-features --apply-configurations true \
    --apply-configurations-feature apply "$@" || status=1
done
# Apply configurations (kubernetes/src/client/applyconfiguration) over every k8s-openapi struct,
# transcribed by scripts/update-builtin-input.sh into kubernetes/applyconfig-input (with
# k8s.io/api's +listType/+listMapKey/+mapType markers): client-go's applyconfigurations.
"${CARGO_TARGET_DIR:-$root/target}/debug/kube-codegen" applyconfiguration \
  --apis-dir kubernetes/applyconfig-input --output-dir kubernetes/src/client \
  --apis-module crate::apis --output-module crate::client --header-file "$header" \
  --plural-exceptions Endpoints:Endpoints --group-features --apply-configurations-feature apply \
  "$@" || status=1
# --- end of the built-in clientset block -------------------------------------------------------
exit $status
