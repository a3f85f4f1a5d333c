#!/usr/bin/env bash
# Build (or reuse) a real kube-apiserver, kube-controller-manager, kubectl and etcd for the
# integration tests.
#
# Usage: scripts/build-kube-apiserver.sh [--force] [--no-build] [--regenerate-module vX.Y.Z]
#
#   BIN=$(scripts/build-kube-apiserver.sh | tail -1)    # -> .../k8s-v1.37.1-linux-amd64/bin
#
# The binaries come from the committed wrapper Go module in tests/kube-apiserver/ (go.mod pins
# k8s.io/kubernetes; etcd is the go.etcd.io/etcd/server/v3 of the same module graph). Only the Go
# module proxy is used. Results are cached outside the repository in
#   ${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}/k8s-<version>-<goos>-<goarch>/bin/
# next to a BUILDINFO stamp. When the stamp matches (same k8s/etcd versions, same `go version`,
# same build recipe, same go.mod+go.sum) and the binaries exist, nothing is built.
# The first build takes 6-10 minutes on 2 cores (about 3 GB of GOCACHE, 0.6 GB of GOMODCACHE).
#
# Options:
#   --force                   rebuild even if the cache is valid
#   --no-build                only check the cache: print the bin dir if valid, else exit 3
#   --regenerate-module VER   first regenerate tests/kube-apiserver/go.mod+go.sum for Kubernetes
#                             VER (runs scripts/update-kube-apiserver-module.sh), then build
#
# Environment: KUBE_CODEGEN_CACHE (cache root), KUBE_CODEGEN_GOPROXY (default
# https://proxy.golang.org, never with ",direct"), GOTOOLCHAIN, GOMODCACHE, GOCACHE as usual.
#
# Only the bin dir path goes to stdout (as the last line); everything else goes to stderr.
set -euo pipefail

# Bump when the way binaries are built changes, to invalidate existing caches.
RECIPE="4" # 4: kube-controller-manager added
K8S_TAGS="selinux,notest,grpcnotrace"

trap 'echo "build-kube-apiserver: error: line $LINENO: \`$BASH_COMMAND\` failed" >&2' ERR
exec 3>&1 1>&2 # keep the real stdout on fd 3 for the final line; everything else -> stderr

die() { echo "build-kube-apiserver: error: $*" >&2; exit 1; }
log() { echo "build-kube-apiserver: $*" >&2; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; }

FORCE=0 NO_BUILD=0 REGEN=""
while (($#)); do
    case $1 in
        --force) FORCE=1 ;;
        --no-build) NO_BUILD=1 ;;
        --regenerate-module)
            (($# >= 2)) || die "--regenerate-module needs a Kubernetes version (e.g. v1.37.1)"
            REGEN=$2; shift ;;
        --regenerate-module=*) REGEN=${1#*=} ;;
        -h|--help) usage; exit 0 ;;
        *) usage; die "unknown argument '$1'" ;;
    esac
    shift
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MODDIR=$ROOT/tests/kube-apiserver

# Go >= 1.26: from PATH, /usr/local/go, or installed from the Go module proxy (the official
# toolchain module golang.org/toolchain, the same zip `GOTOOLCHAIN` downloads) into the cache.
GO_FALLBACK=go1.26.8
install_go() {
    local os arch dir zip url
    os=$(uname -s | tr '[:upper:]' '[:lower:]')
    case $(uname -m) in x86_64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
    dir=${KUBE_CODEGEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-codegen}/$GO_FALLBACK.$os-$arch
    if [[ ! -x $dir/bin/go ]]; then
        url=https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-$GO_FALLBACK.$os-$arch.zip
        log "'go' not found: installing $GO_FALLBACK from $url"
        mkdir -p "$(dirname "$dir")"
        zip=$(mktemp "$(dirname "$dir")/go.XXXXXX.zip")
        curl -fsSL --retry 3 -o "$zip" "$url" || die "could not download $url"
        rm -rf "$dir.tmp"
        python3 - "$zip" "$dir.tmp" "golang.org/toolchain@v0.0.1-$GO_FALLBACK.$os-$arch/" <<'PY' || die "could not unpack $zip"
import os, sys, zipfile
zf, dest, prefix = zipfile.ZipFile(sys.argv[1]), sys.argv[2], sys.argv[3]
for info in zf.infolist():
    if info.is_dir() or not info.filename.startswith(prefix):
        continue
    path = os.path.join(dest, info.filename[len(prefix):])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zf.open(info) as src, open(path, "wb") as out:
        out.write(src.read())
    mode = info.external_attr >> 16
    if mode & 0o111 or "/bin/" in path or "/pkg/tool/" in path:
        os.chmod(path, 0o755)
PY
        rm -f "$zip"
        mv "$dir.tmp" "$dir"
    fi
    PATH=$dir/bin:$PATH
}
if ! command -v go >/dev/null; then
    if [[ -x /usr/local/go/bin/go ]]; then PATH=/usr/local/go/bin:$PATH; else install_go; fi
fi

export GOPROXY=${KUBE_CODEGEN_GOPROXY:-https://proxy.golang.org}
[[ $GOPROXY != *direct* ]] || die "GOPROXY must not contain 'direct' (git hosts are not reachable): $GOPROXY"
export GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"
unset GOOS GOARCH # build for the host: the binaries are run here

if [[ -n $REGEN ]]; then
    "$ROOT/scripts/update-kube-apiserver-module.sh" "$REGEN"
fi

for f in go.mod go.sum tools.go; do
    [[ -f $MODDIR/$f ]] || die "$MODDIR/$f is missing (regenerate with scripts/update-kube-apiserver-module.sh <version>)"
done

# Versions straight from the committed go.mod (fast: no go command involved).
modver() { awk -v m="$1" '($1 == m && $2 ~ /^v/) || ($1 == "require" && $2 == m) { print ($1 == "require" ? $3 : $2); exit }' "$MODDIR/go.mod"; }
K8S=$(modver k8s.io/kubernetes)
ETCD=$(modver go.etcd.io/etcd/server/v3)
[[ $K8S =~ ^v1\.([0-9]+)\. ]] || die "cannot read the k8s.io/kubernetes version from $MODDIR/go.mod"
K8S_MINOR=${BASH_REMATCH[1]}
[[ -n $ETCD ]] || die "go.etcd.io/etcd/server/v3 is not required in $MODDIR/go.mod"

if command -v sha256sum >/dev/null; then sha256() { sha256sum | cut -d' ' -f1; }
else sha256() { shasum -a 256 | cut -d' ' -f1; }; fi

# `go version` run inside the module dir, so that a GOTOOLCHAIN switch is reflected.
GO_VERSION=$(cd "$MODDIR" && go version) || die "'go version' failed in $MODDIR (toolchain too old for its go line?)"
{ read -r GOOS && read -r GOARCH; } < <(cd "$MODDIR" && go env GOOS GOARCH) || die "'go env GOOS GOARCH' failed"
MOD_SHA=$(cat "$MODDIR/go.mod" "$MODDIR/go.sum" | sha256)

CACHE=${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}
OUT=$CACHE/k8s-$K8S-$GOOS-$GOARCH
BIN=$OUT/bin
STAMP=$OUT/BUILDINFO
BINARIES=(kube-apiserver kube-controller-manager kubectl etcd)

BUILD_FLAGS="CGO_ENABLED=0 GOFLAGS='$GOFLAGS' go build -trimpath; kube-apiserver,kube-controller-manager,kubectl: -tags=$K8S_TAGS -ldflags='-s -w -X {k8s.io/component-base/version,k8s.io/client-go/pkg/version}.{gitVersion=$K8S,gitMajor=1,gitMinor=$K8S_MINOR,gitTreeState=clean,buildDate=<tag commit time>}'; etcd: -ldflags='-s -w'"
KEY="recipe=$RECIPE
k8s_version=$K8S
etcd_version=$ETCD
go_version=$GO_VERSION
goos=$GOOS
goarch=$GOARCH
build_flags=$BUILD_FLAGS
module_sha256(go.mod+go.sum)=$MOD_SHA"

cache_valid() {
    [[ -f $STAMP ]] || return 1
    local b
    for b in "${BINARIES[@]}"; do [[ -x $BIN/$b ]] || return 1; done
    [[ "$(sed '/^# ---/,$d' "$STAMP")" == "$KEY" ]]
}

if ((!FORCE)) && cache_valid; then
    echo "$BIN" >&3
    exit 0
fi
if ((NO_BUILD)); then
    log "no valid cached build in $OUT (run scripts/build-kube-apiserver.sh to build it)"
    exit 3
fi

mkdir -p "$OUT"
if command -v flock >/dev/null; then
    exec 9>"$OUT/.lock"
    if ! flock -n 9; then
        log "another build holds $OUT/.lock; waiting for it to finish..."
        flock 9
    fi
    # Someone else may have finished the build while we waited.
    if ((!FORCE)) && cache_valid; then
        log "built by a concurrent caller"
        echo "$BIN" >&3
        exit 0
    fi
else
    log "warning: flock(1) not found; concurrent builds are not serialised"
fi

START=$SECONDS
# On CI (CI set, GOCACHE not) the ~3 GB build cache has no later use and a CI machine's disk may
# be small: keep it beside the build and remove it when done, so that only the binaries stay.
BUILD_GOCACHE=
if [[ -n ${CI:-} && -z ${GOCACHE:-} ]]; then
    BUILD_GOCACHE=$OUT/gocache
    export GOCACHE=$BUILD_GOCACHE
fi
cleanup() {
    local rc=$?
    rm -f "$BIN"/*.tmp "$STAMP.tmp"
    if [[ -n $BUILD_GOCACHE ]]; then
        chmod -R u+w "$BUILD_GOCACHE" 2>/dev/null || true
        rm -rf "$BUILD_GOCACHE"
    fi
    if ((rc != 0)); then
        log "FAILED after $((SECONDS - START))s (exit $rc); nothing in $BIN was replaced except complete binaries"
        log "common causes: module proxy unreachable or a version missing on it, an older Go than the go line of $MODDIR/go.mod (GOTOOLCHAIN=$(go env GOTOOLCHAIN)), out of disk space"
    fi
}
trap cleanup EXIT

log "building Kubernetes $K8S (kube-apiserver, kube-controller-manager, kubectl) and etcd $ETCD with $GO_VERSION"
log "output: $BIN (the first build takes 6-10 minutes on 2 cores)"
rm -f "$STAMP" # the binaries are about to change

# Build in a private copy, so that the repository is never written to (GOFLAGS=-mod=mod may
# touch go.mod/go.sum if they are not tidy) and concurrent repo edits do not matter.
SRC=$OUT/src
rm -rf "$SRC"
mkdir -p "$SRC" "$BIN"
cp "$MODDIR/go.mod" "$MODDIR/go.sum" "$MODDIR/tools.go" "$SRC/"
cd "$SRC"

# The commit time of the release tag, which is what upstream uses as buildDate.
JSON=$(go mod download -json "k8s.io/kubernetes@$K8S" 2>&1) || true
if grep -q '"Error"' <<<"$JSON" || ! grep -q '"Info"' <<<"$JSON"; then
    echo "$JSON" >&2
    die "cannot download k8s.io/kubernetes@$K8S from $GOPROXY"
fi
INFO=$(sed -n 's/^[[:space:]]*"Info": "\(.*\)",\{0,1\}$/\1/p' <<<"$JSON")
BUILD_DATE=$(sed -n 's/.*"Time": *"\([^"]*\)".*/\1/p' "$INFO")
BUILD_DATE=${BUILD_DATE%%.*}; BUILD_DATE=${BUILD_DATE%Z}Z
[[ $BUILD_DATE =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]] || die "cannot read the release time from $INFO"

LDFLAGS="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    LDFLAGS+=" -X $p.gitVersion=$K8S -X $p.gitMajor=1 -X $p.gitMinor=$K8S_MINOR"
    LDFLAGS+=" -X $p.gitTreeState=clean -X $p.buildDate=$BUILD_DATE"
done

build() { # name package [go build flags...]
    local name=$1 pkg=$2 t0=$SECONDS
    shift 2
    log "go build $pkg -> $name"
    go build -trimpath "$@" -o "$BIN/$name.tmp" "$pkg"
    log "  $name built in $((SECONDS - t0))s"
}
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver -tags="$K8S_TAGS" -ldflags="$LDFLAGS"
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager -tags="$K8S_TAGS" -ldflags="$LDFLAGS"
build kubectl k8s.io/kubernetes/cmd/kubectl -tags="$K8S_TAGS" -ldflags="$LDFLAGS"
build etcd go.etcd.io/etcd/server/v3 -ldflags="-s -w" # module root is package main

if ! cmp -s go.mod "$MODDIR/go.mod" || ! cmp -s go.sum "$MODDIR/go.sum"; then
    log "warning: the build changed go.mod/go.sum: the committed module in $MODDIR is not tidy;"
    log "         regenerate it with scripts/update-kube-apiserver-module.sh $K8S"
fi

# Sanity checks on the fresh binaries before they replace anything.
v=$("$BIN/kube-apiserver.tmp" --version) || die "kube-apiserver --version failed"
[[ $v == "Kubernetes $K8S" ]] || die "kube-apiserver reports '$v', expected 'Kubernetes $K8S'"
v=$("$BIN/kube-controller-manager.tmp" --version) || die "kube-controller-manager --version failed"
[[ $v == "Kubernetes $K8S" ]] || die "kube-controller-manager reports '$v', expected 'Kubernetes $K8S'"
v=$("$BIN/kubectl.tmp" version --client -o yaml) || die "kubectl version --client failed"
grep -q "gitVersion: $K8S\$" <<<"$v" || die "kubectl reports an unexpected version: $v"
v=$("$BIN/etcd.tmp" --version) || die "etcd --version failed"
grep -q "^etcd Version: ${ETCD#v}\$" <<<"$v" || die "etcd reports an unexpected version: $v"

for b in "${BINARIES[@]}"; do mv -f "$BIN/$b.tmp" "$BIN/$b"; done

{
    echo "$KEY"
    echo "# --- informational (not compared) ---"
    echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "build_seconds=$((SECONDS - START))"
    echo "build_date=$BUILD_DATE"
    echo "ldflags(kube-apiserver,kube-controller-manager,kubectl)=$LDFLAGS"
    echo "goproxy=$GOPROXY"
    for b in "${BINARIES[@]}"; do
        echo "$b=$(wc -c <"$BIN/$b") bytes sha256:$(sha256 <"$BIN/$b")"
    done
} >"$STAMP.tmp"
mv -f "$STAMP.tmp" "$STAMP"

log "done in $((SECONDS - START))s: $("$BIN/kube-apiserver" --version), etcd ${ETCD#v}"
echo "$BIN" >&3
