#!/usr/bin/env python3
"""Write equivalent Rust and Go API trees for scripts/bench-codegen.sh.

    synth.py synthetic --kinds N [--per-group K] --rust-dir DIR --go-dir DIR --go-module M
    synth.py crddemo --go-dir DIR --go-module M

`synthetic` writes N kinds spread over ceil(N/K) groups (`group00`, `group01`, … with group names
`groupNN.bench.example.com`, version v1). Every kind has a Spec, a Status and a List type and the
tags kube-codegen and Go's code-generator read: `+genclient` and
`+k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object`; every tenth kind is
`+genclient:nonNamespaced`. The Rust tree has the layout of example-crddemo
(`<group>/v1/{mod.rs,types.rs}` under an `apis` folder); the Go tree is a module with
`pkg/apis/<group>/v1/{doc.go,types.go}` (register.go is left to register-gen).

`crddemo` writes the Go equivalent of example-crddemo's `Mydemo` (the Rust side is the example
itself). In both modes, the Go module's go.mod has no requirements yet: the caller runs
`go get k8s.io/apimachinery@V k8s.io/client-go@V` and `go mod tidy` (internal/deps keeps client-go
in go.mod), then gofmt. The group list, as kube-codegen's --groups wants it ("group00:v1 group01:v1"), is
printed on stdout.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

GO_VERSION = "1.26"

RUST_HEADER = "// Synthetic API types for scripts/bench-codegen.sh.\n\n"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# The client-go packages that client-gen, lister-gen and informer-gen output imports. Importing
# them here keeps k8s.io/client-go (at the version the caller `go get`s) in go.mod through
# `go mod tidy`, so that the generated tree builds. The generators never load this package.
GO_DEPS = """// Package deps pins the client-go packages that generated clients, listers and informers import.
package deps

import (
	_ "k8s.io/client-go/discovery"
	_ "k8s.io/client-go/discovery/fake"
	_ "k8s.io/client-go/gentype"
	_ "k8s.io/client-go/kubernetes/scheme"
	_ "k8s.io/client-go/listers"
	_ "k8s.io/client-go/rest"
	_ "k8s.io/client-go/testing"
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/client-go/util/flowcontrol"
)
"""


def go_mod(go_dir: Path, module: str) -> None:
    write(go_dir / "go.mod", f"module {module}\n\ngo {GO_VERSION}\n")
    write(go_dir / "internal" / "deps" / "deps.go", GO_DEPS)


# --------------------------------------------------------------------------------------------
# Rust


def rust_kind(kind: str, cluster_scoped: bool) -> str:
    scope = "// +genclient:nonNamespaced\n" if cluster_scoped else ""
    return f"""// +genclient
{scope}// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

/// `{kind}` is a synthetic kind.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct {kind} {{
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: {kind}Spec,
    /// The observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<{kind}Status>,
}}

/// The desired state of a [`{kind}`].
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct {kind}Spec {{
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

/// The observed state of a [`{kind}`].
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct {kind}Status {{
    /// The `metadata.generation` last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

/// A list of [`{kind}`] objects.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct {kind}List {{
    /// Standard list metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The objects.
    pub items: Vec<{kind}>,
}}
"""


def rust_package(vdir: Path, group_name: str, kinds: list[tuple[str, bool]]) -> None:
    write(
        vdir / "mod.rs",
        f"""// +k8s:deepcopy-gen=package
// +groupName={group_name}

//! Version `v1` of the `{group_name}` API.

mod types;
#[rustfmt::skip]
mod zz_generated_deepcopy;
#[rustfmt::skip]
mod zz_generated_register;
#[rustfmt::skip]
mod zz_generated_crd;

pub use types::*;
pub use zz_generated_register::*;
""",
    )
    body = "\n".join(rust_kind(k, c) for k, c in kinds)
    write(
        vdir / "types.rs",
        RUST_HEADER
        + "use std::collections::BTreeMap;\n\n"
        + "use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ListMeta, ObjectMeta};\n"
        + "use serde::{Deserialize, Serialize};\n\n"
        + body,
    )


# --------------------------------------------------------------------------------------------
# Go


def go_doc(group_name: str) -> str:
    return f"""// +k8s:deepcopy-gen=package
// +groupName={group_name}

// Package v1 is version v1 of the {group_name} API.
package v1
"""


def go_kind(kind: str, cluster_scoped: bool) -> str:
    scope = "// +genclient:nonNamespaced\n" if cluster_scoped else ""
    return f"""// +genclient
{scope}// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// {kind} is a synthetic kind.
type {kind} struct {{
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   {kind}Spec    `json:"spec"`
	Status {kind}Status  `json:"status,omitempty"`
}}

// {kind}Spec is the desired state of a {kind}.
type {kind}Spec struct {{
	Replicas       int32             `json:"replicas"`
	TargetName     string            `json:"targetName"`
	Selector       map[string]string `json:"selector,omitempty"`
	Values         []string          `json:"values,omitempty"`
	TimeoutSeconds *int64            `json:"timeoutSeconds,omitempty"`
}}

// {kind}Status is the observed state of a {kind}.
type {kind}Status struct {{
	ObservedGeneration *int64             `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// {kind}List is a list of {kind} objects.
type {kind}List struct {{
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []{kind} `json:"items"`
}}
"""


def go_package(vdir: Path, group_name: str, kinds: list[tuple[str, bool]]) -> None:
    write(vdir / "doc.go", go_doc(group_name))
    body = "\n".join(go_kind(k, c) for k, c in kinds)
    write(
        vdir / "types.go",
        "package v1\n\nimport (\n\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n)\n\n" + body,
    )


GO_CRDDEMO = """package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Mydemo asks for an address, ip:port, to be exposed in the cluster.
type Mydemo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MydemoSpec    `json:"spec"`
	Status *MydemoStatus `json:"status,omitempty"`
}

// MydemoSpec is the desired state of a Mydemo.
type MydemoSpec struct {
	IP   string `json:"ip"`
	Port int32  `json:"port"`
}

// MydemoStatus is the observed state of a Mydemo.
type MydemoStatus struct {
	ObservedGeneration *int64             `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	ServiceName        *string            `json:"serviceName,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// MydemoList is a list of Mydemo objects.
type MydemoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Mydemo `json:"items"`
}
"""


# --------------------------------------------------------------------------------------------


def synthetic(args: argparse.Namespace) -> str:
    if args.kinds < 1 or args.per_group < 1:
        sys.exit("synth.py: --kinds and --per-group must be at least 1")
    groups = math.ceil(args.kinds / args.per_group)
    width = max(2, len(str(groups - 1)))
    kwidth = max(3, len(str(args.per_group - 1)))
    rust_apis = Path(args.rust_dir)
    go_dir = Path(args.go_dir)
    go_mod(go_dir, args.go_module)
    group_dirs = []
    left = args.kinds
    for g in range(groups):
        n = min(args.per_group, left)
        left -= n
        gdir = f"group{g:0{width}d}"
        group_name = f"{gdir}.bench.example.com"
        kinds = [(f"Kind{k:0{kwidth}d}", k % 10 == 9) for k in range(n)]
        rust_package(rust_apis / gdir / "v1", group_name, kinds)
        write(rust_apis / gdir / "mod.rs", f"//! The `{group_name}` API group.\n\npub mod v1;\n")
        go_package(go_dir / "pkg" / "apis" / gdir / "v1", group_name, kinds)
        group_dirs.append(gdir)
    write(
        rust_apis / "mod.rs",
        "//! API types, one module per group folder.\n\n"
        + "".join(f"pub mod {g};\n" for g in group_dirs),
    )
    return " ".join(f"{g}:v1" for g in group_dirs)


def crddemo(args: argparse.Namespace) -> str:
    go_dir = Path(args.go_dir)
    go_mod(go_dir, args.go_module)
    vdir = go_dir / "pkg" / "apis" / "crddemo" / "v1"
    write(vdir / "doc.go", go_doc("crddemo.k8s.io"))
    write(vdir / "types.go", GO_CRDDEMO)
    return "crddemo:v1"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("synthetic")
    s.add_argument("--kinds", type=int, required=True)
    s.add_argument("--per-group", type=int, default=100)
    s.add_argument("--rust-dir", required=True, help="the Rust apis dir to create")
    s.add_argument("--go-dir", required=True, help="the Go module root to create")
    s.add_argument("--go-module", required=True)
    c = sub.add_parser("crddemo")
    c.add_argument("--go-dir", required=True)
    c.add_argument("--go-module", required=True)
    args = p.parse_args()
    print(synthetic(args) if args.mode == "synthetic" else crddemo(args))


if __name__ == "__main__":
    main()
