//! The `mtsre.meitu.com` API group.

pub mod v1;
