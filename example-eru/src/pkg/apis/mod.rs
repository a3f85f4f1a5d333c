//! API types, one module per group folder.

pub mod mtsre;
