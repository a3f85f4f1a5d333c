//! The HTTP surface: a request parsed once into what it asks for (`request`), its way in
//! (`handler`), one handler per verb (`handlers/`), responses and their encodings (objects,
//! lists, tables, watch streams), discovery and OpenAPI documents, and serving over HTTPS with
//! bearer tokens.

pub(crate) mod body;
pub(crate) mod discovery;
pub(crate) mod handler;
pub(crate) mod handlers;
pub(crate) mod negotiation;
pub(crate) mod openapi;
pub(crate) mod protobuf;
pub(crate) mod render;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod serve;
pub(crate) mod tls;
