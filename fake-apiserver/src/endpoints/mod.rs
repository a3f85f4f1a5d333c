//! The HTTP surface: routing a request to a resource and verb, encoding responses (objects,
//! lists, tables, watch streams), discovery documents, and serving over HTTPS with bearer tokens.

pub(crate) mod body;
pub(crate) mod discovery;
pub(crate) mod handler;
pub(crate) mod negotiation;
pub(crate) mod openapi;
pub(crate) mod render;
pub(crate) mod serve;
pub(crate) mod tls;
