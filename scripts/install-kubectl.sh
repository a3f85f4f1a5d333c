#!/usr/bin/env bash
# Print the path of a kubectl to use for the tests, obtaining one if needed.
#
# Usage: KUBECTL=$(scripts/install-kubectl.sh | tail -1)
#
# Order of preference:
#   1. $KUBECTL, if set and executable;
#   2. $KUBE_CODEGEN_K8S_BIN/kubectl, if that variable is set (scripts/test.sh sets it to the
#      bin dir of scripts/build-kube-apiserver.sh, so tests use the pinned version);
#   3. `kubectl` on PATH;
#   4. the kubectl that scripts/build-kube-apiserver.sh builds next to kube-apiserver from the
#      Go module proxy (k8s.io/kubernetes/cmd/kubectl, cached in
#      ${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}/k8s-*/bin/kubectl). A cached build is
#      reused; otherwise the build runs (10-25 minutes on 2 cores) unless --no-build is given.
#
# Options:
#   --no-build   never build: exit 3 when no kubectl is available without building
#
# Only the path goes to stdout (last line); messages go to stderr. Exit status is non-zero when
# no kubectl could be found or built.
set -euo pipefail

die() { echo "install-kubectl: error: $*" >&2; exit "${2:-1}"; }
log() { echo "install-kubectl: $*" >&2; }

NO_BUILD=0
while (($#)); do
    case $1 in
        --no-build) NO_BUILD=1 ;;
        -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done

if [[ -n ${KUBECTL:-} ]]; then
    [[ -x $KUBECTL ]] || die "KUBECTL=$KUBECTL is not executable"
    echo "$KUBECTL"
    exit 0
fi

if [[ -n ${KUBE_CODEGEN_K8S_BIN:-} ]]; then
    [[ -x $KUBE_CODEGEN_K8S_BIN/kubectl ]] || die "KUBE_CODEGEN_K8S_BIN=$KUBE_CODEGEN_K8S_BIN has no executable kubectl"
    echo "$KUBE_CODEGEN_K8S_BIN/kubectl"
    exit 0
fi

if command -v kubectl >/dev/null 2>&1; then
    command -v kubectl
    exit 0
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/scripts/build-kube-apiserver.sh
[[ -x $BUILD ]] || die "no kubectl on PATH and $BUILD is missing"

if BIN=$("$BUILD" --no-build 2>/dev/null | tail -1) && [[ -x $BIN/kubectl ]]; then
    echo "$BIN/kubectl"
    exit 0
fi
((NO_BUILD)) && die "no kubectl on PATH and none cached (run without --no-build to build one)" 3

log "no kubectl on PATH: building one from the Go module proxy with $BUILD (this takes a while)"
BIN=$("$BUILD" | tail -1) || die "$BUILD failed"
[[ -x $BIN/kubectl ]] || die "$BUILD did not produce $BIN/kubectl"
echo "$BIN/kubectl"
