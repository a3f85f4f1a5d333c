#!/usr/bin/env bash
# Benchmark kube-codegen against Go's k8s.io/code-generator, measured in the same run, and print
# a markdown table on stdout (progress goes to stderr).
#
#   scripts/bench-codegen.sh [--sizes N:K,…] [--reps R] [--skip-go] [--check-build]
#                            [--compile-cost N,…] [--wait-load L] [--rev REV | --kube-codegen BIN]
#                            [--keep-temp]
#
#   --sizes N:K,…   synthetic API trees of N kinds, K per group (default
#                   100:100,1000:100,1000:1000,3000:100: 100 kinds, 1,000 in ten groups and in one
#                   group, 3,000); --kinds N [--per-group K] is the same for one size
#   --compile-cost N,…  also time `cargo build` of a crate with N generated kinds beside the same
#                   types with kube-derive + kube::Api + a reflector per kind
#                   (scripts/bench/compile_cost.py; slow: 10,100 takes about 15 min)
#   --reps R        timed repetitions per tool (default 3); the median is reported. One untimed
#                   warm-up run of every tool comes first.
#   --skip-go       measure kube-codegen only (no Go toolchain needed)
#   --check-build   also `go build ./...` the Go output (slow the first time: compiles client-go)
#   --wait-load L   before each run (warm-up included), wait up to 10 min for the 1-minute load
#                   average to drop below L (other builds on the machine skew the timings)
#   --rev REV       build kube-codegen, and take the crddemo example, from git revision REV
#                   (`git archive`) instead of the working tree, e.g. while others edit it
#   --kube-codegen BIN  measure this kube-codegen binary (no build)
#   --keep-temp     keep the temporary directory and print its path
#
# Inputs: (a) example-crddemo's API (1 kind) and its Go equivalent; (b) synthetic trees of N
# kinds written by scripts/bench/synth.py, in Rust and as a Go module. Each kind has Spec, Status
# and List types, +genclient and +k8s:deepcopy-gen:interfaces=…runtime.Object.
#
# Every timed run works in a directory of its own that no run used before (a copy of the input
# made before the clock starts), so no run pays for deleting or reusing another's files.
#
# Tools: the release build of kube-codegen, as `kube-codegen all` (one process, every generator
# it has) and as one process per generator (deepcopy, register, client, then lister, informer if
# it has them); Go's deepcopy-gen, register-gen, client-gen, then lister-gen, informer-gen, one
# process each as kube_codegen.sh runs them, installed once from the Go module proxy into
# ${KUBE_CODEGEN_CACHE:-~/.cache/kube-codegen}/code-generator-<version>/bin.
# Wall time: bash's EPOCHREALTIME around `/usr/bin/time -v` (which gives user and system CPU
# time and max RSS).
#
# Environment: CARGO_TARGET_DIR (default <repo>/target), KUBE_CODEGEN_CACHE,
# KUBE_CODEGEN_GO_VERSION (default v0.37.1, matching the Kubernetes v1.37.1 the project builds).
set -euo pipefail
export LC_ALL=C

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size_spec="100:100,1000:100,1000:1000,3000:100" kinds="" per_group=100 reps=3 skip_go=0 compile_cost="" check_build=0 keep_temp=0 wait_load="" rev="" kc=""
go_version=${KUBE_CODEGEN_GO_VERSION:-v0.37.1}
cache=${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}
gobin=$cache/code-generator-$go_version/bin
go_tools=(deepcopy-gen register-gen client-gen lister-gen informer-gen)

log() { printf 'bench-codegen: %s\n' "$*" >&2; }
die() {
  printf 'bench-codegen: error: %s\n' "$*" >&2
  exit 1
}
usage() {
  sed -n '2,42p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 wants a positive integer, got '$2'"; }

while (($#)); do
  case $1 in
  --kinds) (($# >= 2)) || usage; posint "$1" "$2"; kinds=$2; shift 2 ;;
  --kinds=*) posint --kinds "${1#*=}"; kinds=${1#*=}; shift ;;
  --per-group) (($# >= 2)) || usage; posint "$1" "$2"; per_group=$2; shift 2 ;;
  --per-group=*) posint --per-group "${1#*=}"; per_group=${1#*=}; shift ;;
  --sizes) (($# >= 2)) || usage; size_spec=$2; shift 2 ;;
  --sizes=*) size_spec=${1#*=}; shift ;;
  --compile-cost) (($# >= 2)) || usage; compile_cost=$2; shift 2 ;;
  --compile-cost=*) compile_cost=${1#*=}; shift ;;
  --reps) (($# >= 2)) || usage; posint "$1" "$2"; reps=$2; shift 2 ;;
  --reps=*) posint --reps "${1#*=}"; reps=${1#*=}; shift ;;
  --skip-go) skip_go=1; shift ;;
  --check-build) check_build=1; shift ;;
  --keep-temp) keep_temp=1; shift ;;
  --wait-load) (($# >= 2)) || usage; wait_load=$2; shift 2 ;;
  --wait-load=*) wait_load=${1#*=}; shift ;;
  --rev) (($# >= 2)) || usage; rev=$2; shift 2 ;;
  --rev=*) rev=${1#*=}; shift ;;
  --kube-codegen) (($# >= 2)) || usage; kc=$2; shift 2 ;;
  --kube-codegen=*) kc=${1#*=}; shift ;;
  -h | --help) usage ;;
  *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[[ -z $kinds ]] || size_spec="$kinds:$per_group"
[[ $size_spec =~ ^[1-9][0-9]*:[1-9][0-9]*(,[1-9][0-9]*:[1-9][0-9]*)*$ ]] ||
  die "--sizes wants N:K[,N:K…], got '$size_spec'"
[[ -z $compile_cost || $compile_cost =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
  die "--compile-cost wants N[,N…], got '$compile_cost'"
[[ -z $wait_load || $wait_load =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
  die "--wait-load wants a number, got '$wait_load'"
[[ -z $rev || -z $kc ]] || die "--rev and --kube-codegen exclude each other"
if [[ -n $kc ]]; then
  [[ -x $kc ]] || die "--kube-codegen $kc is not an executable"
  kc=$(cd "$(dirname "$kc")" && pwd)/$(basename "$kc")
fi

# ---------------------------------------------------------------------------------------------
# Prerequisites

for c in cargo python3 awk find xargs wc; do
  command -v "$c" >/dev/null || die "'$c' is not installed"
done
if ((!skip_go)); then
  command -v go >/dev/null || die "'go' is not installed (or pass --skip-go)"
  command -v gofmt >/dev/null || die "'gofmt' is not on PATH (it ships with Go)"
fi
if [[ ! -x /usr/bin/time ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    log "installing GNU time (apt-get install -y time)"
    { apt-get update -qq && apt-get install -y -qq time; } >&2 || die "could not install GNU time"
  else
    die "/usr/bin/time (GNU time) is missing: apt-get install time"
  fi
fi
# grep without -q reads all input: with pipefail, an early exit would SIGPIPE time -v.
/usr/bin/time -v true 2>&1 | grep 'Maximum resident set size' >/dev/null ||
  die "/usr/bin/time is not GNU time (no -v): apt-get install time"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kube-codegen-bench.XXXXXX")
cleanup() {
  if ((keep_temp)); then log "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------------------------------------
# 1. kube-codegen, release build (of the working tree, or of --rev), unless --kube-codegen

src=$root
git_rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -z $(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null) ]] || git_rev+="+dirty"
if [[ -n $rev ]]; then
  git_rev=$(git -C "$root" rev-parse --short "$rev^{commit}") || die "no git revision '$rev'"
  src=$tmp/src
  mkdir -p "$src"
  git -C "$root" archive --format=tar "$git_rev" | tar -x -C "$src" ||
    die "git archive $git_rev failed"
fi
if [[ -z $kc ]]; then
  target=${CARGO_TARGET_DIR:-$root/target}
  log "cargo build --release -p kube-codegen (${rev:+revision $git_rev, }CARGO_TARGET_DIR=$target)"
  CARGO_TARGET_DIR=$target cargo build --release --quiet --manifest-path "$src/Cargo.toml" \
    -p kube-codegen >&2 || die "cargo build --release -p kube-codegen failed${rev:-; try --rev HEAD}"
  kc=$target/release/kube-codegen
  [[ -x $kc ]] || die "$kc was not built"
  kc_origin="git $git_rev, release build"
else
  kc_origin="binary $kc"
fi
kc_version=$("$kc" --version | awk '{print $2}')
kc_origin+=", sha256 $(sha256sum "$kc" | cut -c1-12)"
rustc_version=$(rustc --version 2>/dev/null | awk '{print $2}' || echo unknown)
# Its subcommands, from --help: deepcopy, register and client are needed; lister and informer
# are measured when present.
mapfile -t kc_cmds < <("$kc" --help | awk '/^Commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 } f && /^$/ { exit }')
for g in deepcopy register client; do
  [[ " ${kc_cmds[*]} " == *" $g "* ]] || die "$kc has no '$g' subcommand"
done
kc_gens=(deepcopy register client)
kc_watch=0
if [[ " ${kc_cmds[*]} " == *" lister "* && " ${kc_cmds[*]} " == *" informer "* ]]; then
  kc_gens+=(lister informer)
  kc_watch=1
fi

# ---------------------------------------------------------------------------------------------
# 2. Inputs: pristine trees under $tmp/in/<case>/{rust,go}; each run gets a fresh copy in $tmp/work

in=$tmp/in work=$tmp/work
mkdir -p "$in/crddemo/rust" "$work"
cp -R "$src/example-crddemo/src/pkg/apis" "$in/crddemo/rust/apis"
find "$in/crddemo/rust/apis" -name 'zz_generated_*.rs' -delete
groups_crddemo="crddemo:v1"
cases=(crddemo)
case_meta="case_crddemo=crddemo (1 kind)"
IFS=, read -ra size_list <<<"$size_spec"
for size in "${size_list[@]}"; do
  n=${size%%:*} k=${size#*:}
  case=synthetic_${n}_$k
  printf -v "groups_$case" '%s' "$(python3 "$root/scripts/bench/synth.py" synthetic --kinds "$n" \
    --per-group "$k" --rust-dir "$in/$case/rust/apis" --go-dir "$in/$case/go" \
    --go-module example.com/bench)" || die "scripts/bench/synth.py failed"
  groups_var=groups_$case
  n_groups=$(wc -w <<<"${!groups_var}")
  cases+=("$case")
  case_meta+=$'\n'"case_$case=$(printf "%'d" "$n") kinds in $n_groups group(s)"
  log "synthetic tree: $n kinds in $n_groups groups"
done
python3 "$root/scripts/bench/synth.py" crddemo --go-dir "$in/crddemo/go" \
  --go-module example.com/crddemo >/dev/null || die "scripts/bench/synth.py crddemo failed"

printf '/*\nCopyright The kube-codegen Authors.\nSPDX-License-Identifier: Apache-2.0\n*/\n\n' \
  >"$tmp/boilerplate.go.txt"

# ---------------------------------------------------------------------------------------------
# 3. Go: code-generator binaries (cached) and the Go modules

if ((!skip_go)); then
  export GOTOOLCHAIN=local GOWORK=off
  missing=0
  for t in "${go_tools[@]}"; do [[ -x $gobin/$t ]] || missing=1; done
  if ((missing)); then
    log "installing k8s.io/code-generator $go_version into $gobin (once)"
    partial=$gobin.partial.$$
    rm -rf "$partial" && mkdir -p "$partial"
    # Every package names the version: `go install a b@v` would leave `a` without one.
    pkgs=("${go_tools[@]/#/k8s.io/code-generator/cmd/}")
    (cd "$tmp" && GOBIN=$partial GOPROXY=https://proxy.golang.org GOFLAGS=-mod=mod \
      go install "${pkgs[@]/%/@$go_version}") >&2 ||
      { rm -rf "$partial"; die "go install k8s.io/code-generator/cmd/...@$go_version failed"; }
    mkdir -p "$gobin"
    for t in "${go_tools[@]}"; do mv -f "$partial/$t" "$gobin/$t"; done
    rm -rf "$partial"
  fi
  got=$(go version -m "$gobin/client-gen" | awk '$1 == "mod" && $2 == "k8s.io/code-generator" {print $3}')
  [[ $got == "$go_version" ]] || die "$gobin/client-gen is code-generator '$got', not $go_version: delete $gobin"
  go_toolchain=$(go env GOVERSION)

  for case in "${cases[@]}"; do
    log "go mod tidy + go build ./pkg/apis/... ($case)"
    (cd "$in/$case/go" &&
      GOPROXY=https://proxy.golang.org GOFLAGS=-mod=mod go get \
        "k8s.io/apimachinery@$go_version" "k8s.io/client-go@$go_version" 2>&1 &&
      GOPROXY=https://proxy.golang.org GOFLAGS=-mod=mod go mod tidy 2>&1 &&
      gofmt -w . && go build ./pkg/apis/... 2>&1) >"$tmp/setup.log" ||
      { cat "$tmp/setup.log" >&2; die "the Go $case module does not build (see above)"; }
    for m in k8s.io/apimachinery k8s.io/client-go; do
      v=$(cd "$in/$case/go" && go list -m -f '{{.Version}}' "$m")
      [[ $v == "$go_version" ]] || die "the Go $case module resolved $m $v, not $go_version"
    done
  done
  # From here on: no network, go.mod as tidied.
  export GOPROXY=off GOFLAGS=-mod=readonly
fi

# ---------------------------------------------------------------------------------------------
# 4. Measurement

results=$tmp/results.tsv sizes=$tmp/sizes.tsv
: >"$results"
: >"$sizes"
: >"$tmp/commands.tsv"
: >"$tmp/loads.tsv"
go_built=""

# timed CASE TOOL REP DIR CMD…: run CMD in DIR under /usr/bin/time -v, append a results row.
timed() {
  local case=$1 tool=$2 rep=$3 dir=$4 t0 t1 rc=0
  shift 4
  cd "$dir"
  t0=$EPOCHREALTIME
  /usr/bin/time -v -o "$tmp/time.txt" "$@" >"$tmp/cmd.log" 2>&1 || rc=$?
  t1=$EPOCHREALTIME
  cd "$root"
  if ((rep == 1)); then # record the command, with $tmp abbreviated
    local a line="cd ${dir/#$tmp/\$TMP} && /usr/bin/time -v"
    for a in "$@"; do
      a=${a//$tmp/\$TMP}
      [[ $a == *' '* ]] && a="'$a'"
      line+=" $a"
    done
    printf '%s\t%s\t%s\n' "$case" "$tool" "$line" >>"$tmp/commands.tsv"
  fi
  if ((rc)); then
    tail -n 40 "$tmp/cmd.log" >&2
    die "$tool failed on $case (exit $rc): $*"
  fi
  awk -F': ' -v c="$case" -v t="$tool" -v r="$rep" -v us=$((${t1/./} - ${t0/./})) '
    /User time \(seconds\)/ { u = $2 }
    /System time \(seconds\)/ { s = $2 }
    /Maximum resident set size/ { m = $2 }
    END { printf "%s\t%s\t%s\t%d\t%d\t%d\t%d\n", c, t, r, us, m, u * 1000 + 0.5, s * 1000 + 0.5 }
  ' "$tmp/time.txt" >>"$results"
}

run_id=0
# fresh CASE LANG NAME: a copy of $in/CASE/LANG in a directory no run used before, named in $dir.
# Nothing is deleted while timing: ext4 is slower at creating thousands of files right where
# thousands were just removed, which would slow every tool's later runs.
fresh() {
  run_id=$((run_id + 1))
  dir=$work/$1/$3-$run_id
  mkdir -p "$work/$1"
  cp -R "$in/$1/$2" "$dir"
}

run_rust() { # CASE REP
  local case=$1 rep=$2 groups_var=groups_$1 g
  local args=(--apis-dir apis --output-dir client --groups "${!groups_var}"
    --apis-module crate::pkg::apis --output-module crate::pkg::client
    --header-file "$root/scripts/boilerplate.rs.txt")
  fresh "$case" rust rust-all
  printf -v "all_dir_$case" '%s' "$dir"
  timed "$case" "kc:all" "$rep" "$dir" "$kc" all "${args[@]}"
  ((rep != reps)) || measure_size "$case" rust-all "$in/$case/rust" "$dir"
  fresh "$case" rust rust
  for g in "${kc_gens[@]}"; do
    timed "$case" "kc:$g" "$rep" "$dir" "$kc" "$g" "${args[@]}"
    if ((rep == reps)) && [[ $g == client ]]; then
      measure_size "$case" rust-core "$in/$case/rust" "$dir"
    fi
  done
  if ((rep == reps && kc_watch)); then
    measure_size "$case" rust-watch "$in/$case/rust" "$dir"
  fi
}

run_go() { # CASE REP
  local case=$1 rep=$2 mod gv dir pkgs=() inputs=()
  mod=$(awk '$1 == "module" {print $2; exit}' "$in/$case/go/go.mod")
  local groups_var=groups_$case
  for gv in ${!groups_var}; do
    pkgs+=("$mod/pkg/apis/${gv%%:*}/${gv#*:}")
    inputs+=(--input "${gv%%:*}/${gv#*:}")
  done
  fresh "$case" go go
  local hdr=(--go-header-file "$tmp/boilerplate.go.txt") out=$mod/pkg/generated
  timed "$case" deepcopy-gen "$rep" "$dir" "$gobin/deepcopy-gen" "${hdr[@]}" \
    --output-file zz_generated.deepcopy.go "${pkgs[@]}"
  timed "$case" register-gen "$rep" "$dir" "$gobin/register-gen" "${hdr[@]}" \
    --output-file zz_generated.register.go "${pkgs[@]}"
  timed "$case" client-gen "$rep" "$dir" "$gobin/client-gen" "${hdr[@]}" \
    --output-dir pkg/generated/clientset --output-pkg "$out/clientset" \
    --clientset-name versioned --input-base "$dir/pkg/apis" "${inputs[@]}"
  ((rep != reps)) || measure_size "$case" go-core "$in/$case/go" "$dir"
  timed "$case" lister-gen "$rep" "$dir" "$gobin/lister-gen" "${hdr[@]}" \
    --output-dir pkg/generated/listers --output-pkg "$out/listers" "${pkgs[@]}"
  timed "$case" informer-gen "$rep" "$dir" "$gobin/informer-gen" "${hdr[@]}" \
    --output-dir pkg/generated/informers --output-pkg "$out/informers" \
    --versioned-clientset-package "$out/clientset/versioned" --listers-package "$out/listers" \
    "${pkgs[@]}"
  ((rep != reps)) || measure_size "$case" go-watch "$in/$case/go" "$dir"
  go_dir=$dir
}

# measure_size CASE SET INPUT OUTPUT: files, lines and bytes in OUTPUT (a copy of INPUT that the
# generators ran in) that are not in INPUT, i.e. the generated files.
measure_size() {
  local case=$1 set=$2 files lines=0 bytes=0
  comm -13 <(cd "$3" && find . -type f | sort) <(cd "$4" && find . -type f | sort) >"$tmp/files"
  files=$(wc -l <"$tmp/files")
  if ((files)); then
    lines=$(cd "$4" && tr '\n' '\0' <"$tmp/files" | xargs -0 cat | wc -l)
    bytes=$(cd "$4" && tr '\n' '\0' <"$tmp/files" | xargs -0 cat | wc -c)
  fi
  printf '%s\t%s\t%d\t%d\t%d\n' "$case" "$set" "$files" "$lines" "$bytes" >>"$sizes"
}

# await_load CASE REP: honour --wait-load, then record the 1-minute load average.
await_load() {
  local start=$SECONDS load
  while [[ -n $wait_load ]]; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    awk -v l="$load" -v m="$wait_load" 'BEGIN { exit !(l >= m) }' || break
    if ((SECONDS - start >= 600)); then
      log "load average $load is still >= $wait_load after 10 min; going on"
      break
    fi
    sleep 5
  done
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$(cut -d' ' -f1 /proc/loadavg)" $((SECONDS - start)) \
    >>"$tmp/loads.tsv"
}

rust_generators() { # which generators `all` ran, from its output
  local d=$1 g=()
  [[ -n $(find "$d/apis" -name zz_generated_deepcopy.rs -print -quit) ]] && g+=(deepcopy)
  [[ -n $(find "$d/apis" -name zz_generated_register.rs -print -quit) ]] && g+=(register)
  [[ -d $d/client/applyconfiguration ]] && g+=(applyconfiguration)
  [[ -d $d/client/clientset ]] && g+=(client)
  [[ -d $d/client/clientset/versioned/fake ]] && g+=(fake)
  [[ -d $d/client/listers ]] && g+=(lister)
  [[ -d $d/client/informers ]] && g+=(informer)
  [[ -d $d/crd || -n $(find "$d/apis" -name zz_generated_crd.rs -print -quit) ]] && g+=(crd)
  local IFS=,
  echo "${g[*]}"
}

for case in "${cases[@]}"; do
  for rep in $(seq 0 "$reps"); do
    if ((rep == 0)); then log "$case: warm-up run"; else log "$case: run $rep/$reps"; fi
    await_load "$case" "$rep"
    run_rust "$case" "$rep"
    ((skip_go)) || run_go "$case" "$rep"
    if ((rep == 0 && !skip_go)); then
      # The Go output must type-check: the API packages with deepcopy + register, and (with
      # --check-build) the whole generated tree.
      (cd "$go_dir" && go build ./pkg/apis/... 2>&1) >"$tmp/check.log" ||
        { cat "$tmp/check.log" >&2; die "Go $case: generated deepcopy/register do not build"; }
      if ((check_build)); then
        log "$case: go build ./... of the Go output"
        (cd "$go_dir" && go build ./... 2>&1) >"$tmp/check.log" ||
          { cat "$tmp/check.log" >&2; die "Go $case: generated code does not build"; }
        go_built+=" $case"
      fi
    fi
  done
  all_dir=all_dir_$case
  printf -v "gens_$case" '%s' "$(rust_generators "${!all_dir}")"
  # The case's files are measured: free the disk before the next, larger case.
  rm -rf "${work:?}/$case"
done

# ---------------------------------------------------------------------------------------------
# 4b. Compile cost (optional)

: >"$tmp/compile.tsv"
if [[ -n $compile_cost ]]; then
  log "compile cost: $compile_cost kinds (scripts/bench/compile_cost.py)"
  python3 "$root/scripts/bench/compile_cost.py" --kinds "$compile_cost" --kube-codegen "$kc" \
    --repo "$src" --work "$tmp/compile" >"$tmp/compile.tsv" ||
    die "scripts/bench/compile_cost.py failed"
fi

load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------------------------------------
# 5. Report

cat >"$tmp/meta" <<EOF
nproc=$(nproc)
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
load_before=$load_before
load_after=$load_after
cases=${cases[*]}
$case_meta
reps=$reps
skip_go=$skip_go
kube_codegen=$kc_version
kc_origin=$kc_origin
kc_watch=$kc_watch
rustc=$rustc_version
go_codegen=$go_version
go_toolchain=${go_toolchain:-}
go_built=${go_built:-}
wait_load=$wait_load
EOF
for case in "${cases[@]}"; do
  gens=gens_$case
  echo "gens_$case=${!gens}" >>"$tmp/meta"
done
python3 "$root/scripts/bench/report.py" "$tmp/meta" "$results" "$sizes" "$tmp/commands.tsv" \
  "$tmp/loads.tsv" "$tmp/compile.tsv"
