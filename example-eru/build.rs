//! Generates the `mtsre.meitu.com/v1` package code (deep copy, register, CRD impls), the client
//! tree (clientset, listers, informers, fake clientset) and the CRD manifest into `OUT_DIR`
//! through kube-codegen's `build.rs` front door. Nothing generated is checked in except the
//! CRD under `deploy/crds/`, which `tests/crd.rs` keeps equal to the one generated here.

fn main() {
    kube_codegen::Builder::new()
        .apis_dir("src/pkg/apis")
        .groups("mtsre:v1")
        .apis_module("crate::pkg::apis")
        .client_module("crate::pkg::client")
        .header_file("../scripts/boilerplate.rs.txt")
        .crd_file_name("{group}_{plural}_crd.yaml")
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
}
