//! client-go's `kubernetes` clientset for Rust.
#![deny(missing_docs)]

pub mod apis;
