#!/usr/bin/env python3
"""Compile cost of generated code beside kube-derive, for scripts/bench-codegen.sh.

    compile_cost.py --kinds 10,100 --per-group 100 --kube-codegen BIN --repo ROOT --work DIR

For each kind count N, three library crates over the same synthetic types (scripts/bench/synth.py,
N kinds, K per group), each built with `cargo build` (debug, the crate alone: its dependencies
are built first, untimed, with an empty lib.rs):

* `ours`: the types plus what kube-codegen's deepcopy, register, client, lister, informer and
  crd generators write for them (no apply configurations and no fake clientset, which
  kube-derive has no peer of);
* `ours+use`: the same, plus one public function per kind that gets an object with the kind's
  typed client and lists it from the kind's shared informer (so every kind's client and
  informer is compiled);
* `kube`: the same types with kube-derive's `#[derive(CustomResource, JsonSchema)]`, plus one
  public function per kind that gets an object through `kube::Api` and runs a reflector over a
  watcher (the peer of `ours+use`).

Then one field is added to one kind's spec (and, for ours, the generator rerun: it rewrites only
the files that changed) and the crate rebuilt: the edit-rebuild time. Every crate has its own
workspace and shares one target dir, so dependencies are built once. Prints one TSV row per
crate and kind count: variant, kinds, build s (wall), build user s, rebuild s (wall).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import synth  # noqa: E402


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def cargo_toml(name: str, deps: str) -> str:
    return f"""[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
path = "src/lib.rs"

[dependencies]
{deps}
[workspace]
"""


def timed_build(crate: Path, target: Path, log: Path) -> tuple[float, float]:
    """`cargo build` of `crate`: (wall seconds, user+sys CPU seconds of cargo and rustc)."""
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    before = os.times()
    t0 = time.monotonic()
    with log.open("a") as out:
        rc = subprocess.call(
            ["cargo", "build", "--quiet", "--manifest-path", str(crate / "Cargo.toml")],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    wall = time.monotonic() - t0
    after = os.times()
    if rc != 0:
        sys.exit(f"compile_cost.py: cargo build failed in {crate} (see {log})")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def kinds_of(n: int, per_group: int) -> list[tuple[str, str, bool]]:
    """(group dir, kind, cluster-scoped) as synth.py lays them out."""
    groups = -(-n // per_group)
    width = max(2, len(str(groups - 1)))
    kwidth = max(3, len(str(per_group - 1)))
    out, left = [], n
    for g in range(groups):
        m = min(per_group, left)
        left -= m
        for k in range(m):
            out.append((f"group{g:0{width}d}", f"Kind{k:0{kwidth}d}", k % 10 == 9))
    return out


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# ---------------------------------------------------------------------------------------------
# ours


def ours(root: Path, n: int, per_group: int, repo: Path, kc: str, use: bool) -> None:
    deps = f"""kube-codegen-runtime = {{ path = "{repo / 'codegen-runtime'}" }}
k8s-openapi = {{ version = "0.29", default-features = false, features = ["v1_37"] }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
"""
    write(root / "Cargo.toml", cargo_toml("cc_ours", deps))
    apis = root / "src" / "pkg" / "apis"
    args = argparse.Namespace(
        kinds=n,
        per_group=per_group,
        rust_dir=str(apis),
        go_dir=str(root / "go-unused"),
        go_module="example.com/unused",
    )
    groups = synth.synthetic(args)
    shutil.rmtree(root / "go-unused")
    generate(root, groups, kc)
    write(root / "src" / "pkg" / "mod.rs", "pub mod apis;\npub mod client;\n")
    lib = "//! Generated code for the compile-cost benchmark.\n#![allow(missing_docs)]\npub mod pkg;\n"
    if use:
        lib += "pub mod uses;\n"
        fns = []
        for g, k, cluster in kinds_of(n, per_group):
            plural = snake(k) + "s"
            client = f"cs.{g}_v1().{plural}()" if cluster else f'cs.{g}_v1().{plural}("default")'
            fns.append(
                f"""/// Gets a `{k}` and lists them from the shared informer.
pub async fn use_{g}_{snake(k)}(cs: &Clientset, factory: &SharedInformerFactory) -> usize {{
    let _ = {client}.get("x", &Default::default()).await;
    factory.{g}().v1().{plural}().lister().list(&Selector::everything()).len()
}}
"""
            )
        write(
            root / "src" / "uses.rs",
            "use crate::pkg::client::clientset::versioned::Clientset;\n"
            "use crate::pkg::client::informers::externalversions::SharedInformerFactory;\n"
            "use kube_codegen_runtime::labels::Selector;\n\n" + "\n".join(fns),
        )
    write(root / "src" / "lib.rs", lib)


GENERATORS = ["deepcopy", "register", "client", "lister", "informer", "crd"]


def generate(root: Path, groups: str, kc: str) -> None:
    # The generators the comparison is about, one run each (a run keeps the others' files);
    # `all` would add apply configurations, which kube-derive has no peer of.
    for generator in GENERATORS:
        subprocess.check_call(
            [
                kc,
                generator,
                "--apis-dir",
                "src/pkg/apis",
                "--output-dir",
                "src/pkg/client",
                "--crd-dir",
                "crd",
                "--groups",
                groups,
                "--fake-clientset",
                "false",
            ],
            cwd=root,
        )


# ---------------------------------------------------------------------------------------------
# kube-derive


def kube_types(group: str, kinds: list[tuple[str, bool]]) -> str:
    out = [
        "use std::collections::BTreeMap;\n\n"
        "use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;\n"
        "use kube::CustomResource;\n"
        "use schemars::JsonSchema;\n"
        "use serde::{Deserialize, Serialize};\n"
    ]
    for k, cluster in kinds:
        scope = "" if cluster else ", namespaced"
        out.append(
            f"""
/// The desired state of a `{k}`.
#[derive(CustomResource, Debug, Default, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(group = "{group}.bench.example.com", version = "v1", kind = "{k}"{scope}, status = "{k}Status")]
#[serde(rename_all = "camelCase")]
pub struct {k}Spec {{
    /// How many replicas.
    #[serde(default)]
    pub replicas: i32,
    /// A name.
    #[serde(default)]
    pub target_name: String,
    /// Free-form labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub selector: BTreeMap<String, String>,
    /// A list of values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// An optional timeout in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i64>,
}}

/// The observed state of a `{k}`.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct {k}Status {{
    /// The `metadata.generation` last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}}
"""
        )
    return "".join(out)


def kube(root: Path, n: int, per_group: int) -> None:
    deps = """kube = { version = "5", default-features = false, features = ["client", "rustls-tls", "ring", "runtime", "derive"] }
k8s-openapi = { version = "0.29", default-features = false, features = ["v1_37", "schemars"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
serde_json = "1"
futures = "0.3"
"""
    write(root / "Cargo.toml", cargo_toml("cc_kube", deps))
    by_group: dict[str, list[tuple[str, bool]]] = {}
    for g, k, cluster in kinds_of(n, per_group):
        by_group.setdefault(g, []).append((k, cluster))
    for g, kinds in by_group.items():
        write(root / "src" / "apis" / g / "v1.rs", kube_types(g, kinds))
        write(root / "src" / "apis" / f"{g}.rs", "pub mod v1;\n")
    write(root / "src" / "apis.rs", "".join(f"pub mod {g};\n" for g in by_group))
    fns = []
    for g, k, cluster in kinds_of(n, per_group):
        api = "Api::all(client.clone())" if cluster else 'Api::namespaced(client.clone(), "default")'
        fns.append(
            f"""/// Gets a `{k}` and lists them from a reflector's store.
pub async fn use_{g}_{snake(k)}(client: Client) -> usize {{
    let api: Api<crate::apis::{g}::v1::{k}> = {api};
    let _ = api.get("x").await;
    let (reader, writer) = reflector::store();
    let stream = reflector(writer, watcher(Api::<crate::apis::{g}::v1::{k}>::all(client), watcher::Config::default()));
    futures::pin_mut!(stream);
    let _ = stream.next().await;
    reader.state().len()
}}
"""
        )
    write(
        root / "src" / "uses.rs",
        "use futures::StreamExt;\nuse kube::runtime::{reflector, watcher};\n"
        "use kube::{Api, Client};\n\n" + "\n".join(fns),
    )
    write(
        root / "src" / "lib.rs",
        "//! kube-derive types for the compile-cost benchmark.\n#![allow(missing_docs)]\npub mod apis;\npub mod uses;\n",
    )


def edit_one_field(root: Path, pattern: str) -> Path:
    """Adds a field to the first kind's spec in the first file matching `pattern`."""
    path = sorted(root.glob(pattern))[0]
    text = path.read_text()
    marker = "    pub target_name: String,\n"
    if marker not in text:
        sys.exit(f"compile_cost.py: no spec field to edit in {path}")
    text = text.replace(
        marker, marker + "    /// Added by the benchmark.\n    #[serde(default)]\n    pub extra: i32,\n", 1
    )
    path.write_text(text)
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kinds", default="10,100")
    p.add_argument("--per-group", type=int, default=100)
    p.add_argument("--kube-codegen", required=True)
    p.add_argument("--repo", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--variants", default="ours,ours+use,kube")
    a = p.parse_args()
    repo = Path(a.repo).resolve()
    work = Path(a.work).resolve()
    target = work / "target"
    log = work / "cargo.log"
    work.mkdir(parents=True, exist_ok=True)
    lock = repo / "Cargo.lock"
    for n in [int(x) for x in a.kinds.split(",")]:
        for variant in a.variants.split(","):
            root = work / f"{variant.replace('+', '-')}-{n}"
            if root.exists():
                shutil.rmtree(root)
            if variant == "kube":
                kube(root, n, a.per_group)
            else:
                ours(root, n, a.per_group, repo, a.kube_codegen, variant == "ours+use")
            # The workspace's lock pins the dependencies ours and kube share.
            shutil.copy(lock, root / "Cargo.lock")
            real_lib = (root / "src" / "lib.rs").read_text()
            write(root / "src" / "lib.rs", "")
            print(f"compile_cost.py: {variant} {n}: dependencies", file=sys.stderr)
            timed_build(root, target, log)
            write(root / "src" / "lib.rs", real_lib)
            print(f"compile_cost.py: {variant} {n}: build", file=sys.stderr)
            wall, cpu = timed_build(root, target, log)
            if variant == "kube":
                edit_one_field(root, "src/apis/*/v1.rs")
            else:
                edit_one_field(root, "src/pkg/apis/*/v1/types.rs")
                generate(root, " ".join(f"{g.name}:v1" for g in sorted((root / "src/pkg/apis").iterdir()) if g.is_dir()), a.kube_codegen)
            print(f"compile_cost.py: {variant} {n}: rebuild after an edit", file=sys.stderr)
            rewall, _ = timed_build(root, target, log)
            print(f"{variant}\t{n}\t{wall:.1f}\t{cpu:.1f}\t{rewall:.1f}", flush=True)


if __name__ == "__main__":
    main()
