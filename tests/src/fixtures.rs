//! The golden fixtures under `tests/fixtures/<case>/pkg`, each compiled as a module: the
//! hand-written API types plus everything kube-codegen generated for them.

#[path = "../fixtures/apiserver/pkg/mod.rs"]
pub mod apiserver;
#[path = "../fixtures/apply/pkg/mod.rs"]
pub mod apply;
#[path = "../fixtures/crd/pkg/mod.rs"]
pub mod crd;
#[path = "../fixtures/crd_schema/pkg/mod.rs"]
pub mod crd_schema;
#[path = "../fixtures/externals/pkg/mod.rs"]
pub mod externals;
#[path = "../fixtures/hyphen_group/pkg/mod.rs"]
pub mod hyphen_group;
#[path = "../fixtures/MixedCase/pkg/mod.rs"]
pub mod mixed_case;
#[path = "../fixtures/multiversion/pkg/mod.rs"]
pub mod multiversion;
#[path = "../fixtures/naming/pkg/mod.rs"]
pub mod naming;
#[path = "../fixtures/single/pkg/mod.rs"]
pub mod single;
#[path = "../fixtures/verbs/pkg/mod.rs"]
pub mod verbs;
