//! The compact form of a cached object ([`InformerOptions::compact`](crate::InformerOptions::compact)):
//! the JSON text the server sent, without `metadata.managedFields` when the informer drops them,
//! plus where the object's name, namespace and resourceVersion lie in it — what the store needs
//! to key, index and compare the object without decoding it. Reads decode the text again with
//! the informer's own decode (transforms included), so a read returns what the informer would
//! have cached whole.

use serde::Deserialize;
use serde_json::value::RawValue;

/// A span of [`Compact::json`]: `start..end` in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span(u32, u32);

impl Span {
    fn get(self, text: &str) -> &str {
        text.get(self.0 as usize..self.1 as usize).unwrap_or("")
    }

    /// The span after `removed` bytes before it were cut out.
    fn shifted(self, cut_at: usize, removed: usize) -> Span {
        if (self.0 as usize) < cut_at {
            self
        } else {
            // Both fit in u32: they index a text no longer than the original.
            Span(self.0 - removed as u32, self.1 - removed as u32)
        }
    }
}

/// One object kept as JSON text.
#[derive(Debug)]
pub(crate) struct Compact {
    json: Box<str>,
    name: Span,
    namespace: Option<Span>,
    resource_version: Option<Span>,
}

/// What a compact entry needs from the object's metadata, borrowed from its text (a name or
/// namespace with JSON escapes cannot be borrowed; such an object is kept decoded instead).
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow)]
    metadata: ProbeMeta<'a>,
}

#[derive(Deserialize)]
struct ProbeMeta<'a> {
    #[serde(borrow, default)]
    name: Option<&'a str>,
    #[serde(borrow, default)]
    namespace: Option<&'a str>,
    #[serde(borrow, default, rename = "resourceVersion")]
    resource_version: Option<&'a str>,
    #[serde(borrow, default, rename = "managedFields")]
    managed_fields: Option<&'a RawValue>,
}

/// Where `part` (a slice of `whole`) lies in it.
fn span_in(whole: &str, part: &str) -> Option<Span> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= whole.len()).then_some(Span(u32::try_from(start).ok()?, u32::try_from(end).ok()?))
}

/// The byte range of the member `"managedFields": <value>` in `text`, with the comma that
/// separates it from its neighbour, given the value's span; `None` if the text around the value
/// is not that plain member (then nothing is cut).
fn member_range(text: &str, value: Span) -> Option<(usize, usize)> {
    const KEY: &str = "\"managedFields\"";
    let before = text.get(..value.0 as usize)?.trim_end();
    let before = before.strip_suffix(':')?.trim_end();
    let key_start = before.strip_suffix(KEY)?.len();
    let ahead = text.get(..key_start)?.trim_end();
    if ahead.ends_with(',') {
        // `…, "managedFields": […]`: cut from the comma to the value's end.
        Some((ahead.len() - 1, value.1 as usize))
    } else if ahead.ends_with('{') {
        // `{"managedFields": […], …`: cut the member and the comma after it.
        let rest = text.get(value.1 as usize..)?;
        let trimmed = rest.trim_start();
        let after = match trimmed.strip_prefix(',') {
            Some(r) => text.len() - r.trim_start().len(),
            None => value.1 as usize,
        };
        Some((key_start, after))
    } else {
        None
    }
}

impl Compact {
    /// `raw` (one object's JSON) kept compact, without `metadata.managedFields` if
    /// `drop_managed_fields`; `None` if its name, namespace or resourceVersion cannot be read
    /// from the text as is (the caller keeps the decoded object instead).
    pub(crate) fn new(raw: &str, drop_managed_fields: bool) -> Option<Compact> {
        let probe: Probe<'_> = serde_json::from_str(raw).ok()?;
        let meta = probe.metadata;
        let mut name = span_in(raw, meta.name.filter(|n| !n.is_empty())?)?;
        let mut namespace = match meta.namespace.filter(|n| !n.is_empty()) {
            Some(ns) => Some(span_in(raw, ns)?),
            None => None,
        };
        let mut resource_version = match meta.resource_version {
            Some(rv) => Some(span_in(raw, rv)?),
            None => None,
        };
        let cut = match meta.managed_fields.filter(|_| drop_managed_fields) {
            Some(mf) => span_in(raw, mf.get()).and_then(|v| member_range(raw, v)),
            None => None,
        };
        let json: Box<str> = match cut {
            Some((from, to)) => {
                let removed = to - from;
                name = name.shifted(from, removed);
                namespace = namespace.map(|s| s.shifted(from, removed));
                resource_version = resource_version.map(|s| s.shifted(from, removed));
                let mut text = String::with_capacity(raw.len() - removed);
                text.push_str(raw.get(..from)?);
                text.push_str(raw.get(to..)?);
                text.into_boxed_str()
            }
            None => raw.into(),
        };
        Some(Compact {
            json,
            name,
            namespace,
            resource_version,
        })
    }

    /// The JSON text kept.
    pub(crate) fn json(&self) -> &str {
        &self.json
    }

    /// `(namespace, name)`; the namespace is empty for cluster-scoped objects.
    pub(crate) fn parts(&self) -> (&str, &str) {
        (
            self.namespace.map_or("", |s| s.get(&self.json)),
            self.name.get(&self.json),
        )
    }

    pub(crate) fn resource_version(&self) -> Option<&str> {
        self.resource_version.map(|s| s.get(&self.json))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn managed_fields_dropped(raw: &str) -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_str(raw).unwrap();
        v["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        v
    }

    #[test]
    fn cuts_managed_fields_wherever_they_stand() {
        for raw in [
            r#"{"kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"7","managedFields":[{"manager":"m","fieldsV1":{"f:data":{}}}]},"data":{"k":"v"}}"#,
            r#"{"metadata":{"managedFields":[{"manager":"m"}],"name":"a","namespace":"ns","resourceVersion":"7"},"data":{"k":"v"}}"#,
            r#"{ "metadata" : { "name" : "a" , "managedFields" : [ ] , "namespace" : "ns", "resourceVersion": "7" } }"#,
            r#"{"metadata":{"managedFields":[],"name":"a","namespace":"ns","resourceVersion":"7"}}"#,
        ] {
            let c = Compact::new(raw, true).unwrap();
            assert!(!c.json().contains("managedFields"), "{}", c.json());
            let back: serde_json::Value = serde_json::from_str(c.json()).unwrap();
            assert_eq!(back, managed_fields_dropped(raw), "{raw}");
            assert_eq!(c.parts(), ("ns", "a"));
            assert_eq!(c.resource_version(), Some("7"));
        }
    }

    #[test]
    fn keeps_everything_unless_asked_to_drop() {
        let raw = r#"{"metadata":{"name":"n","managedFields":[{"manager":"m"}]}}"#;
        let c = Compact::new(raw, false).unwrap();
        assert_eq!(c.json(), raw);
        assert_eq!(c.parts(), ("", "n"));
        assert_eq!(c.resource_version(), None);
    }

    #[test]
    fn refuses_what_it_cannot_key_from_the_text() {
        // No name; a name with an escape (not borrowable); not JSON.
        assert!(Compact::new(r#"{"metadata":{}}"#, true).is_none());
        assert!(Compact::new(r#"{"metadata":{"name":"a\u0062"}}"#, true).is_none());
        assert!(Compact::new("nope", true).is_none());
    }
}
