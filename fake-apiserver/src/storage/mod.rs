//! Storage, the bottom layer: the object store with its global resourceVersion, the bounded
//! event history that watches and paginated lists read, the selection predicate of lists and
//! watches, and accessors over untyped objects. It depends on nothing above it: only on the
//! crate's `error` (the API `Status`), never on `semantics` or `endpoints`.

pub(crate) mod object;
pub(crate) mod predicate;
pub(crate) mod shard_selector;
pub(crate) mod size;
pub(crate) mod store;
