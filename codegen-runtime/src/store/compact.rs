//! The compact form of a cached object (the informer default, see
//! [`InformerOptions::compact`](crate::InformerOptions::compact)): the JSON text the server sent,
//! without `metadata.managedFields` when the informer drops them, compressed with LZ4 against a
//! dictionary shared by the whole store (the text of the first objects it kept, whose field
//! names, label keys, owner references and managedFields entries most objects of a kind repeat),
//! beside the object's namespace, name and resourceVersion in the clear — what the store needs to
//! key, index and compare the object without decoding it. Reads decompress and decode the text
//! again with the informer's own decode (transforms included), so a read returns what the
//! informer would have cached whole.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::value::RawValue;

/// A span of [`Compact::json`]: `start..end` in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span(u32, u32);

/// One object kept compact: one allocation holding a header (the lengths of the parts), the
/// namespace, name and resourceVersion, then the LZ4 block of the object's JSON text.
#[derive(Debug)]
pub(crate) struct Compact {
    bytes: Box<[u8]>,
}

/// Bytes before the namespace: the namespace's, name's and resourceVersion's lengths (`u16`
/// each) and the text's length (`u32`), little-endian.
const HEADER: usize = 10;

/// The dictionary's size limit: LZ4 looks back at most 64 KiB, and a larger dictionary makes
/// each compression slower (the dictionary is hashed each time) for little gain.
const DICT_MAX: usize = 16 * 1024;

/// Why a compact entry could not be turned back into its text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExpandError {
    #[error("the compact entry's block does not decompress: {0}")]
    Decompress(#[from] lz4_flex::block::DecompressError),
    #[error("the compact entry decompressed to {got} bytes, not the {want} it recorded")]
    Length { got: usize, want: usize },
    #[error("the compact entry's text is not UTF-8: {0}")]
    Utf8(#[from] std::string::FromUtf8Error),
    #[error("the compact entry has no dictionary to decompress with")]
    NoDictionary,
    #[error("the compact entry's text no longer decodes: {0}")]
    Decode(#[from] serde_json::Error),
}

/// How one store's objects are made compact and read back: whether `managedFields` are cut,
/// and the dictionary every entry of the store is compressed against.
#[derive(Debug)]
pub(crate) struct Codec {
    drop_managed_fields: bool,
    dict: OnceLock<Box<[u8]>>,
}

impl Codec {
    pub(crate) fn new(drop_managed_fields: bool) -> Self {
        Codec {
            drop_managed_fields,
            dict: OnceLock::new(),
        }
    }

    /// The dictionary: the text of the first object kept (its first [`DICT_MAX`] bytes), then
    /// fixed for the store's life. One object of a kind already holds what its kind's objects
    /// share: field names, label and annotation keys, owner references, managedFields entries.
    fn dict(&self, text: &str) -> &[u8] {
        self.dict
            .get_or_init(|| text.as_bytes()[..text.len().min(DICT_MAX)].into())
    }

    /// `raw` (one object's JSON) kept compact, without `metadata.managedFields` if the codec
    /// drops them; `None` if its name, namespace or resourceVersion cannot be read from the
    /// text as is or are too long to record (the caller keeps the decoded object instead).
    pub(crate) fn compact(&self, raw: &str) -> Option<Compact> {
        let probe: Probe<'_> = serde_json::from_str(raw).ok()?;
        let meta = probe.metadata;
        let name = meta.name.filter(|n| !n.is_empty())?;
        let namespace = meta.namespace.unwrap_or("");
        let resource_version = meta.resource_version.unwrap_or("");
        let cut = match meta.managed_fields.filter(|_| self.drop_managed_fields) {
            Some(mf) => span_in(raw, mf.get()).and_then(|v| member_range(raw, v)),
            None => None,
        };
        let text: std::borrow::Cow<'_, str> = match cut {
            Some((from, to)) => {
                let mut text = String::with_capacity(raw.len() - (to - from));
                text.push_str(raw.get(..from)?);
                text.push_str(raw.get(to..)?);
                text.into()
            }
            None => raw.into(),
        };
        let lens = [
            u16::try_from(namespace.len()).ok()?,
            u16::try_from(name.len()).ok()?,
            u16::try_from(resource_version.len()).ok()?,
        ];
        let text_len = u32::try_from(text.len()).ok()?;
        let dict = self.dict(&text);
        let mut block = vec![0; lz4_flex::block::get_maximum_output_size(text.len())];
        let n = lz4_flex::block::compress_into_with_dict(text.as_bytes(), &mut block, dict).ok()?;
        let keys = namespace.len() + name.len() + resource_version.len();
        let mut bytes = Vec::with_capacity(HEADER + keys + n);
        for l in lens {
            bytes.extend_from_slice(&l.to_le_bytes());
        }
        bytes.extend_from_slice(&text_len.to_le_bytes());
        bytes.extend_from_slice(namespace.as_bytes());
        bytes.extend_from_slice(name.as_bytes());
        bytes.extend_from_slice(resource_version.as_bytes());
        bytes.extend_from_slice(&block[..n]);
        Some(Compact {
            bytes: bytes.into_boxed_slice(),
        })
    }

    /// The JSON text `c` keeps (decompressed).
    pub(crate) fn text(&self, c: &Compact) -> Result<String, ExpandError> {
        let dict = self.dict.get().ok_or(ExpandError::NoDictionary)?;
        let want = c.text_len();
        let text = lz4_flex::block::decompress_with_dict(c.block(), want, dict)?;
        if text.len() != want {
            return Err(ExpandError::Length {
                got: text.len(),
                want,
            });
        }
        Ok(String::from_utf8(text)?)
    }
}

impl Compact {
    fn len_at(&self, i: usize) -> usize {
        let b = &self.bytes;
        usize::from(u16::from_le_bytes([b[2 * i], b[2 * i + 1]]))
    }

    fn text_len(&self) -> usize {
        let b = &self.bytes;
        u32::from_le_bytes([b[6], b[7], b[8], b[9]]) as usize
    }

    /// The `i`th clear part (0 namespace, 1 name, 2 resourceVersion).
    fn part(&self, i: usize) -> &str {
        let start = HEADER + (0..i).map(|j| self.len_at(j)).sum::<usize>();
        self.bytes
            .get(start..start + self.len_at(i))
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("")
    }

    fn block(&self) -> &[u8] {
        let start = HEADER + (0..3).map(|j| self.len_at(j)).sum::<usize>();
        self.bytes.get(start..).unwrap_or(&[])
    }

    /// `(namespace, name)`; the namespace is empty for cluster-scoped objects.
    pub(crate) fn parts(&self) -> (&str, &str) {
        (self.part(0), self.part(1))
    }

    pub(crate) fn resource_version(&self) -> Option<&str> {
        Some(self.part(2)).filter(|rv| !rv.is_empty())
    }

    /// The bytes this entry holds on the heap (for tests).
    #[cfg(test)]
    pub(crate) fn heap_len(&self) -> usize {
        self.bytes.len()
    }
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
            let codec = Codec::new(true);
            let c = codec.compact(raw).unwrap();
            let text = codec.text(&c).unwrap();
            assert!(!text.contains("managedFields"), "{text}");
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, managed_fields_dropped(raw), "{raw}");
            assert_eq!(c.parts(), ("ns", "a"));
            assert_eq!(c.resource_version(), Some("7"));
        }
    }

    #[test]
    fn keeps_every_byte_unless_asked_to_drop() {
        let codec = Codec::new(false);
        let raw = r#"{"metadata":{"name":"n","managedFields":[{"manager":"m"}]}}"#;
        let c = codec.compact(raw).unwrap();
        assert_eq!(codec.text(&c).unwrap(), raw);
        assert_eq!(c.parts(), ("", "n"));
        assert_eq!(c.resource_version(), None);
    }

    #[test]
    fn later_objects_compress_against_the_first() {
        let codec = Codec::new(false);
        let object = |i: usize| {
            format!(
                r#"{{"metadata":{{"name":"web-{i:05}","namespace":"prod","resourceVersion":"{rv}","labels":{{"app.kubernetes.io/name":"web","app.kubernetes.io/part-of":"shop"}},"managedFields":[{{"manager":"kubectl","operation":"Apply","apiVersion":"v1","time":"2026-11-01T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{{"f:data":{{"f:config.yaml":{{}}}}}}}}]}},"data":{{"config.yaml":"listen: 0.0.0.0:{port}\nworkers: {w}\n"}}}}"#,
                rv = 1000 + i,
                port = 8000 + i,
                w = i % 7
            )
        };
        let first = codec.compact(&object(0)).unwrap();
        for i in 1..50 {
            let raw = object(i);
            let c = codec.compact(&raw).unwrap();
            assert_eq!(codec.text(&c).unwrap(), raw);
            assert!(
                c.heap_len() * 3 < raw.len(),
                "{} bytes kept for {} of text",
                c.heap_len(),
                raw.len()
            );
        }
        assert_eq!(codec.text(&first).unwrap(), object(0));
    }

    #[test]
    fn refuses_what_it_cannot_key_from_the_text() {
        // No name; a name with an escape (not borrowable); not JSON.
        let codec = Codec::new(true);
        assert!(codec.compact(r#"{"metadata":{}}"#).is_none());
        assert!(
            codec
                .compact(r#"{"metadata":{"name":"a\u0062"}}"#)
                .is_none()
        );
        assert!(codec.compact("nope").is_none());
    }
}
