//! The `build.rs` front door, used for real: generates the `single` fixture's package code,
//! client and CRD into `OUT_DIR`, which `tests/build_script.rs` pulls in with
//! `include_package!` and `include_client!`.

fn main() {
    kube_codegen::Builder::new()
        .apis_dir("fixtures/single/pkg/apis")
        .groups("api:v1")
        .apis_module("crate::apis")
        .client_module("crate::client")
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
}
