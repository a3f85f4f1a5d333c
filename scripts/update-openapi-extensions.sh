#!/usr/bin/env bash
# Writes fake-apiserver/src/semantics/builtin_openapi_extensions.json: the list and map
# extensions of the built-in types' properties (`x-kubernetes-list-type`,
# `x-kubernetes-list-map-keys`, `x-kubernetes-patch-merge-key`, `x-kubernetes-patch-strategy`,
# `x-kubernetes-map-type`) as a real kube-apiserver's OpenAPI v3 documents give them, and the
# `default: {}` those documents give a struct field that is not a pointer in Go. The in-memory
# server adds them to its own documents (k8s-openapi's schemas do not carry them), so that
# kubectl computes strategic merge patches with the same merge keys, and reads them to record
# managed fields as kube-apiserver does (atomic structs, and which fields an object's Go zero
# value already has). Also writes builtin_go_null_fields.json beside it: the slice, map and
# pointer fields Go writes as `null` when empty (no `omitempty`), which OpenAPI does not tell,
# from the types themselves (tests/kube-apiserver/gofields, run with the Go toolchain; with
# -scalars, builtin_go_scalar_fields.json: how Go writes bool, number, string and struct
# fields), and
# fake-apiserver/src/endpoints/builtin_protobuf.json: each built-in kind's fields as their
# protobuf and json struct tags give them (tests/kube-apiserver/goprotobuf), from which the
# in-memory server reads protobuf bodies.
#
# Usage: scripts/update-openapi-extensions.sh [--bin DIR]
#   --bin DIR   kube-apiserver, etcd and kubectl (default: scripts/build-kube-apiserver.sh)
set -euo pipefail

die() { echo "update-openapi-extensions: error: $*" >&2; exit 1; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${KUBE_CODEGEN_K8S_BIN:-}
while (($#)); do
    case $1 in
        --bin) BIN=$2; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done
command -v python3 >/dev/null || die "'python3' is required"
command -v go >/dev/null || die "'go' is required (scripts/build-kube-apiserver.sh installs one)"
[[ -n $BIN ]] || BIN=$("$ROOT/scripts/build-kube-apiserver.sh" | tail -n 1)
[[ -x $BIN/kubectl ]] || die "no kubectl in $BIN"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/openapi-extensions.XXXXXX")
"$ROOT/scripts/start-kube-apiserver.sh" --bin "$BIN" >"$WORK/env" 2>"$WORK/log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 120); do [[ -s $WORK/env ]] && break; sleep 1; done
[[ -s $WORK/env ]] || die "kube-apiserver did not start: $(tail -5 "$WORK/log")"
# shellcheck disable=SC1091
source "$WORK/env"

python3 - "$BIN/kubectl" "$KUBECONFIG" "$ROOT/fake-apiserver/src/semantics/builtin_openapi_extensions.json" <<'PY'
import json, subprocess, sys
kubectl, kubeconfig, out = sys.argv[1:4]
KEYS = ("x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-patch-merge-key",
        "x-kubernetes-patch-strategy", "x-kubernetes-map-type")
def raw(path):
    return json.loads(subprocess.check_output([kubectl, "--kubeconfig", kubeconfig, "get", "--raw", path]))
exts = {}
for gv, ref in sorted(raw("/openapi/v3")["paths"].items()):
    if not (gv == "api/v1" or gv.startswith("apis/")):
        continue
    for name, schema in raw(ref["serverRelativeURL"]).get("components", {}).get("schemas", {}).items():
        if not name.startswith("io.k8s."):
            continue
        for prop, ps in (schema.get("properties") or {}).items():
            e = {k: v for k, v in ps.items() if k in KEYS}
            if ps.get("default") == {}:
                e["default"] = {}
            if e:
                exts.setdefault(name, {})[prop] = e
        # The type's own map type: under the empty property name.
        if "x-kubernetes-map-type" in schema:
            exts.setdefault(name, {})[""] = {"x-kubernetes-map-type": schema["x-kubernetes-map-type"]}
with open(out, "w") as f:
    json.dump(exts, f, indent=1, sort_keys=True)
    f.write("\n")
print(f"update-openapi-extensions: {sum(len(v) for v in exts.values())} properties of {len(exts)} types", file=sys.stderr)
PY
NULLS=$ROOT/fake-apiserver/src/semantics/builtin_go_null_fields.json
(cd "$ROOT/tests/kube-apiserver" && go run ./gofields) >"$WORK/nulls" || die "go run ./gofields failed"
mv "$WORK/nulls" "$NULLS"
echo "update-openapi-extensions: wrote $(python3 -c 'import json,sys; print(sum(map(len, json.load(open(sys.argv[1])).values())))' "$NULLS") null-when-empty fields" >&2
SCALARS=$ROOT/fake-apiserver/src/semantics/builtin_go_scalar_fields.json
(cd "$ROOT/tests/kube-apiserver" && go run ./gofields -scalars) >"$WORK/scalars" || die "go run ./gofields -scalars failed"
mv "$WORK/scalars" "$SCALARS"
echo "update-openapi-extensions: wrote the bool, number, string and struct fields of $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$SCALARS") types" >&2
PROTOBUF=$ROOT/fake-apiserver/src/endpoints/builtin_protobuf.json
(cd "$ROOT/tests/kube-apiserver" && go run ./goprotobuf) >"$WORK/protobuf" || die "go run ./goprotobuf failed"
mv "$WORK/protobuf" "$PROTOBUF"
echo "update-openapi-extensions: wrote the protobuf fields of $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["kinds"]))' "$PROTOBUF") kinds" >&2
