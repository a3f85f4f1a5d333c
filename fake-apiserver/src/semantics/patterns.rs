//! `pattern`s of structural schemas, compiled once each (Go's RE2 syntax, which the `regex`
//! crate shares).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use regex::Regex;

/// The compiled pattern, or `None` when it does not compile (CRD validation refuses those).
pub(crate) fn compiled(pattern: &str) -> Option<Arc<Regex>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Arc<Regex>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut c = cache.lock();
    if let Some(r) = c.get(pattern) {
        return r.clone();
    }
    let r = Regex::new(pattern).ok().map(Arc::new);
    if c.len() > 4096 {
        c.clear();
    }
    c.insert(pattern.to_string(), r.clone());
    r
}
