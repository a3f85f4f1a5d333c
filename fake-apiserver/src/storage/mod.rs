//! Storage and watch: the object store with its global resourceVersion, the bounded event
//! history that watches and paginated lists read, and accessors over untyped objects.

pub(crate) mod object;
pub(crate) mod state;
pub(crate) mod watch;
