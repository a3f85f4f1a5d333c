#!/usr/bin/env bash
# Compile cost of the built-in clientset: how long `cargo build` (debug) of a small program that
# uses only core/v1 and apps/v1 takes with kube-codegen-kubernetes (features core, apps) beside
# the same program written with kube::Api, measured in the same run. Prints a markdown table on
# stdout (progress goes to stderr).
#
#   scripts/bench-builtin-compile.sh [--reps R] [--keep-temp]
#
# Two programs, in one temporary workspace that depends on this repository's crates by path:
#   kube-api   lists pods in every namespace, gets/applies/deletes a deployment, watches pods,
#              with kube::Api<Pod> / kube::Api<Deployment> (kube, k8s-openapi);
#   builtin    the same requests through Clientset::core_v1().pods(..) / apps_v1().deployments(..)
#              (kube-codegen-kubernetes with features core, apps);
#   builtin-all the same source with feature `all` (every one of the 24 API groups): what a
#              controller would pay if the clientset were not split by group.
# Rows (R repetitions each, the two programs alternating, median; one untimed warm-up first):
#   edit, deps warm         every dependency built; the program's crate is touched and rebuilt
#                           (the edit-compile loop, with its incremental cache).
#   program from scratch    every dependency built; the program's crate cleaned (no incremental
#                           cache) and built.
#   with our crates cold    third-party crates (kube, k8s-openapi …) built; the program and, for
#                           the built-in program, kube-codegen-runtime, kube-codegen-kubernetes and
#                           kube-codegen-apimachinery cleaned and built (the kube::Api program has
#                           nothing of ours, so its figure is its "program from scratch" one);
#                           builtin-all is measured the same way in this round, so the last row
#                           compares two groups with all 24.
# Wall time from bash's EPOCHREALTIME. Other builds on the machine skew timings: the table also
# gives the 1-minute load average before each measurement's first run.
#
#   scripts/bench-builtin-compile.sh --crate [--baseline REV] [--reps R]
#
# The cost of the crate itself (issue 32, apply configurations): k8s-openapi alone (v1_37,
# built from scratch), then kube-codegen-kubernetes with kube-codegen-runtime and
# kube-codegen-apimachinery built from scratch with features `core`, `core,apply`, `all` and
# `all,apply`, third-party crates warm; with --baseline, the `core` and `all` builds of the
# crates at REV (`git archive`), e.g. the commit before the apply configurations. Each row gives
# the 1-minute load average before its first run (other builds on the machine skew timings).
# Prints a markdown table.
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
reps=3 keep=0 crate=0 baseline=""
while (($#)); do
    case $1 in
        --reps) reps=$2; shift ;;
        --keep-temp) keep=1 ;;
        --crate) crate=1 ;;
        --baseline) baseline=$2; shift ;;
        *) echo "usage: $0 [--reps R] [--keep-temp] | --crate [--baseline REV] [--reps R]" >&2; exit 2 ;;
    esac
    shift
done
log() { echo "bench-builtin-compile: $*" >&2; }

if ((crate)); then
    tmp=$(mktemp -d)
    ((keep)) || trap 'rm -rf "$tmp"' EXIT
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}/bench-builtin-compile
    # One workspace per source tree (this one, the baseline), each with a program per feature
    # set; the same target dir, so third-party crates are built once.
    # The baseline's programs are those its crate can build: a tree before the `apply` feature
    # has no `core-apply` or `all-apply`.
    workspace() { # dir, crates root, programs
        local dir=$1 src=$2 programs=$3 m members
        mkdir -p "$dir"
        members=$(printf '"%s", ' $programs)
        printf '[workspace]\nresolver = "3"\nmembers = [%s]\n\n[profile.dev.package."*"]\ndebug = false\n' "${members%, }" >"$dir/Cargo.toml"
        cp "$root/Cargo.lock" "$dir/Cargo.lock"
        for m in $programs; do
            mkdir -p "$dir/$m/src"
            echo 'fn main() {}' >"$dir/$m/src/main.rs"
            {
                printf '[package]\nname = "bench-%s"\nversion = "0.1.0"\nedition = "2024"\n\n[dependencies]\n' "$m"
                echo 'k8s-openapi = { version = "0.29", default-features = false, features = ["v1_37"] }'
                if [[ $m != openapi ]]; then
                    features=\"${m%-apply}\"
                    [[ $m == *-apply ]] && features+=', "apply"'
                    echo "kube-codegen-kubernetes = { path = \"$src/kubernetes\", features = [$features] }"
                fi
            } >"$dir/$m/Cargo.toml"
        done
    }
    workspace "$tmp/after" "$root" "openapi core core-apply all all-apply"
    if [[ -n $baseline ]]; then
        mkdir -p "$tmp/src-before"
        git -C "$root" archive "$baseline" | tar -x -C "$tmp/src-before"
        workspace "$tmp/before" "$tmp/src-before" "openapi core all"
    fi
    timed() { # workspace dir, package, crates to clean → seconds of the build
        local dir=$1 pkg=$2 t0 t1
        shift 2
        (cd "$dir" && cargo clean --offline -q "${@/#/-p=}")
        t0=$EPOCHREALTIME
        (cd "$dir" && cargo build --offline -q -p "$pkg" >&2)
        t1=$EPOCHREALTIME
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
    }
    median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    ours="kube-codegen-kubernetes kube-codegen-runtime kube-codegen-apimachinery"
    rows=()
    measure() { # label, dir, package, crates to clean → a table row (median seconds, load)
        local label=$1 dir=$2 pkg=$3 i r="" load
        shift 3
        load=$(cut -d' ' -f1 /proc/loadavg)
        for ((i = 1; i <= reps; i++)); do r+=" $(timed "$dir" "$pkg" "$@")"; done
        log "$label:$r (load before $load, after $(cut -d' ' -f1 /proc/loadavg))"
        rows+=("| $label | $(echo "$r" | median) | $load |")
    }
    log "building every dependency once into $CARGO_TARGET_DIR"
    (cd "$tmp/after" && cargo build --offline -q -p bench-all-apply -p bench-core-apply >&2)
    [[ -z $baseline ]] || (cd "$tmp/before" && cargo build --offline -q -p bench-all >&2)
    k="kube-codegen-kubernetes + runtime + apimachinery"
    measure "k8s-openapi alone (v1_37)" "$tmp/after" bench-openapi k8s-openapi bench-openapi
    if [[ -n $baseline ]]; then
        measure "$k, feature core, at $baseline" "$tmp/before" bench-core bench-core $ours
        measure "$k, feature all, at $baseline" "$tmp/before" bench-all bench-all $ours
    fi
    measure "$k, feature core (apply off)" "$tmp/after" bench-core bench-core $ours
    measure "$k, features core, apply" "$tmp/after" bench-core-apply bench-core-apply $ours
    measure "$k, feature all (apply off)" "$tmp/after" bench-all bench-all $ours
    measure "$k, features all, apply" "$tmp/after" bench-all-apply bench-all-apply $ours
    echo "| debug build from scratch, third-party crates warm (median of $reps) | seconds | 1-min load before |"
    echo "| --- | --- | --- |"
    printf '%s\n' "${rows[@]}"
    exit 0
fi

tmp=$(mktemp -d)
((keep)) || trap 'rm -rf "$tmp"' EXIT
# A target dir of its own below this worktree's, so that third-party crates are built once and
# kept for later runs.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}/bench-builtin-compile

cat >"$tmp/Cargo.toml" <<EOF
[workspace]
resolver = "3"
members = ["kube-api", "builtin", "builtin-all"]

[workspace.dependencies]
kube = { version = "5", default-features = false, features = ["client", "rustls-tls", "ring", "runtime"] }
k8s-openapi = { version = "0.29", default-features = false, features = ["v1_37"] }
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
futures = "0.3"
serde_json = "1"

[profile.dev.package."*"]
debug = false
EOF
cp "$root/Cargo.lock" "$tmp/Cargo.lock"

mkdir -p "$tmp/kube-api/src" "$tmp/builtin/src" "$tmp/builtin-all/src"
cat >"$tmp/kube-api/Cargo.toml" <<'EOF'
[package]
name = "kube-api"
version = "0.1.0"
edition = "2024"

[dependencies]
kube.workspace = true
k8s-openapi.workspace = true
tokio.workspace = true
futures.workspace = true
serde_json.workspace = true
EOF
cat >"$tmp/builtin/Cargo.toml" <<EOF
[package]
name = "builtin"
version = "0.1.0"
edition = "2024"

[dependencies]
kube-codegen-kubernetes = { path = "$root/kubernetes", default-features = false, features = ["core", "apps"] }
kube.workspace = true
k8s-openapi.workspace = true
tokio.workspace = true
futures.workspace = true
serde_json.workspace = true
EOF
sed -e 's/^name = "builtin"/name = "builtin-all"/' -e 's/features = \["core", "apps"\]/features = ["all"]/' \
    "$tmp/builtin/Cargo.toml" >"$tmp/builtin-all/Cargo.toml"
cat >"$tmp/kube-api/src/main.rs" <<'EOF'
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = kube::Client::try_default().await?;
    let pods: Api<Pod> = Api::all(client.clone());
    for p in pods.list(&ListParams::default()).await? {
        println!("{:?} {:?}", p.metadata.namespace, p.metadata.name);
    }
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let web = deployments.get("web").await?;
    let copy: Deployment = serde_json::from_value(serde_json::to_value(&web)?)?;
    deployments.create(&PostParams::default(), &copy).await.ok();
    deployments
        .patch("web", &PatchParams::apply("bench"), &Patch::Apply(&web))
        .await?;
    deployments.delete("web", &DeleteParams::default()).await?;
    let mut events = pods.watch(&WatchParams::default(), "0").await?.boxed();
    if let Some(e) = events.next().await {
        println!("{:?}", e?);
    }
    Ok(())
}
EOF
cat >"$tmp/builtin/src/main.rs" <<'EOF'
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, WatchParams};
use kube_codegen_kubernetes::Clientset;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cs = Clientset::try_default().await?;
    let pods = cs.core_v1().pods("");
    for p in pods.list(&ListParams::default()).await? {
        println!("{:?} {:?}", p.metadata.namespace, p.metadata.name);
    }
    let deployments = cs.apps_v1().deployments("default");
    let web = deployments.get("web", &GetParams::default()).await?;
    let copy: Deployment = serde_json::from_value(serde_json::to_value(&web)?)?;
    deployments.create(&copy, &PostParams::default()).await.ok();
    deployments
        .patch("web", &Patch::Apply(&web), &PatchParams::apply("bench"))
        .await?;
    deployments.delete("web", &DeleteParams::default()).await?;
    let mut events = pods.watch(&WatchParams::default(), "0").await?;
    if let Some(e) = events.next().await {
        println!("{:?}", e?);
    }
    Ok(())
}
EOF

cp "$tmp/builtin/src/main.rs" "$tmp/builtin-all/src/main.rs"

cd "$tmp"
log "building every dependency once (first run: several minutes) into $CARGO_TARGET_DIR"
cargo build --offline -q -p kube-api >&2
cargo build --offline -q -p builtin >&2
cargo build --offline -q -p builtin-all >&2

now() { echo "$EPOCHREALTIME"; }
build_secs() { # package → seconds of one `cargo build -p <package>`
    local t0 t1
    t0=$(now)
    cargo build --offline -q -p "$1" >&2
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
load() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?"; }

clean() { cargo clean --offline -q "${@/#/-p=}" >&2; }
round() { # label, then the setup of each program as a command
    local label=$1 setup_a=$2 setup_b=$3 i
    eval "$setup_a"; build_secs kube-api >/dev/null
    eval "$setup_b"; build_secs builtin >/dev/null
    ra="" rb=""
    for ((i = 1; i <= reps; i++)); do
        eval "$setup_a"; ra+=" $(build_secs kube-api)"
        eval "$setup_b"; rb+=" $(build_secs builtin)"
        log "$label, round $i: kube-api$ra | builtin$rb"
    done
}
load_edit=$(load)
round "edit, deps warm" "touch kube-api/src/main.rs" "touch builtin/src/main.rs"
edit_a=$ra edit_b=$rb
load_scratch=$(load)
round "program from scratch" "clean kube-api" "clean builtin"
scratch_a=$ra scratch_b=$rb
load_cold=$(load)
ours="kube-codegen-kubernetes kube-codegen-runtime kube-codegen-apimachinery"
# kube-api, builtin (core, apps) and builtin-all alternate; one untimed warm-up of each first.
eval "clean kube-api"; build_secs kube-api >/dev/null
eval "clean builtin $ours"; build_secs builtin >/dev/null
eval "clean builtin-all $ours"; build_secs builtin-all >/dev/null
cold_a="" cold_b="" cold_c=""
for ((i = 1; i <= reps; i++)); do
    clean kube-api; cold_a+=" $(build_secs kube-api)"
    clean builtin $ours; cold_b+=" $(build_secs builtin)"
    clean builtin-all $ours; cold_c+=" $(build_secs builtin-all)"
    log "with our crates cold, round $i: kube-api$cold_a | builtin$cold_b | builtin-all$cold_c"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.0f%%", (b / a - 1) * 100 }'; }
row() { # label, times of kube-api, times of builtin, load
    local a b
    a=$(echo "$2" | median) b=$(echo "$3" | median)
    echo "| $1 | ${a} s | ${b} s | $(ratio "$a" "$b") | $4 |"
}
echo "| debug build of a program using core/v1 and apps/v1 (median of $reps) | kube::Api | kube-codegen-kubernetes (core, apps) | difference | load before |"
echo "| --- | --- | --- | --- | --- |"
row "edit, deps warm" "$edit_a" "$edit_b" "$load_edit"
row "program from scratch, deps warm" "$scratch_a" "$scratch_b" "$load_scratch"
row "program and our crates from scratch" "$cold_a" "$cold_b" "$load_cold"
echo
echo "| debug build of the program and our crates from scratch (median of $reps) | kube::Api | kube-codegen-kubernetes, 2 groups (core, apps) | kube-codegen-kubernetes, all 24 groups | 2 groups vs all |"
echo "| --- | --- | --- | --- | --- |"
a=$(echo "$cold_a" | median) b=$(echo "$cold_b" | median) c=$(echo "$cold_c" | median)
echo "| same program, load before $load_cold | ${a} s | ${b} s | ${c} s | $(ratio "$c" "$b") |"
((keep)) && log "kept $tmp"
exit 0
