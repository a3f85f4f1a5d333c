//! kube-codegen (WIP)
pub mod error;
pub mod model;
pub mod namer;
pub mod scan;
pub mod tags;
