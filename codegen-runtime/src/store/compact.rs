//! The compact form of a cached object (the informer default, see
//! [`InformerOptions::compact`](crate::InformerOptions::compact)): the JSON text the server sent,
//! without `metadata.managedFields` when the informer drops them, compressed with LZ4 against a
//! dictionary shared by the whole store (the text of the first objects it kept, whose field
//! names, label keys, owner references and managedFields entries most objects of a kind repeat),
//! beside the object's namespace, name and resourceVersion in the clear — what the store needs to
//! key, index and compare the object without decoding it — and its labels, interned store-wide
//! ([`LabelSet`]), so that a label selector is evaluated without decoding. Reads decompress (into
//! a per-thread buffer) and decode the text again with the informer's own decode (transforms
//! included), so a read returns what the informer would have cached whole.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use ahash::AHashSet;
use parking_lot::Mutex;

use serde::Deserialize;
use serde_json::value::RawValue;

/// A span of [`Compact::json`]: `start..end` in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span(u32, u32);

/// One object kept compact: one allocation holding a header (the lengths of the parts), the
/// namespace, name and resourceVersion, then the LZ4 block of the object's JSON text; and its
/// labels, shared with every object of the store that has the same ones.
#[derive(Debug)]
pub(crate) struct Compact {
    bytes: Box<[u8]>,
    /// `None` when the object has no labels.
    labels: Option<Arc<LabelSet>>,
}

/// The labels of an object, sorted by key: kept once per store for every object that has the
/// same ones (the objects of one owner, app or shard mostly do), so an object pays a pointer.
/// One allocation, so that a set of its own (a StatefulSet's Pod, with its name and index among
/// its labels) costs little more than its text: the number of labels and each one's key and
/// value lengths (`u16`, little-endian), then every key and value, one after another.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct LabelSet(Box<[u8]>);

impl LabelSet {
    /// `None` if there are more than `u16::MAX` labels or one is longer than that (the object
    /// is then kept decoded).
    fn new(labels: &BTreeMap<String, String>) -> Option<Self> {
        let text: usize = labels.iter().map(|(k, v)| k.len() + v.len()).sum();
        let mut bytes = Vec::with_capacity(2 + 4 * labels.len() + text);
        bytes.extend_from_slice(&u16::try_from(labels.len()).ok()?.to_le_bytes());
        for (k, v) in labels {
            bytes.extend_from_slice(&u16::try_from(k.len()).ok()?.to_le_bytes());
            bytes.extend_from_slice(&u16::try_from(v.len()).ok()?.to_le_bytes());
        }
        for (k, v) in labels {
            bytes.extend_from_slice(k.as_bytes());
            bytes.extend_from_slice(v.as_bytes());
        }
        Some(LabelSet(bytes.into_boxed_slice()))
    }

    /// The value of label `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        let b = &*self.0;
        let number = |at: usize| {
            b.get(at..at + 2)
                .map_or(0, |n| usize::from(u16::from_le_bytes([n[0], n[1]])))
        };
        let count = number(0);
        let mut at = 2 + 4 * count;
        for i in 0..count {
            let (k, v) = (number(2 + 4 * i), number(4 + 4 * i));
            if b.get(at..at + k)? == key.as_bytes() {
                return std::str::from_utf8(b.get(at + k..at + k + v)?).ok();
            }
            at += k + v;
        }
        None
    }
}

/// Labels a [`LabelSet`] cannot record (a count or a length beyond `u16`).
#[derive(Debug)]
struct LabelsTooLong;

/// The store's distinct label sets. A set no entry holds any longer is forgotten when the table
/// has doubled since it was last swept, so the table stays within twice the sets in use.
#[derive(Debug, Default)]
struct LabelSets {
    sets: AHashSet<Arc<LabelSet>>,
    sweep_at: usize,
}

impl LabelSets {
    /// The shared set of `labels` (`Ok(None)` for none); `Err` if they cannot be recorded.
    fn intern(
        &mut self,
        labels: &BTreeMap<String, String>,
    ) -> Result<Option<Arc<LabelSet>>, LabelsTooLong> {
        if labels.is_empty() {
            return Ok(None);
        }
        let set = LabelSet::new(labels).ok_or(LabelsTooLong)?;
        if let Some(known) = self.sets.get(&set) {
            return Ok(Some(known.clone()));
        }
        if self.sets.len() >= self.sweep_at {
            self.sets.retain(|s| Arc::strong_count(s) > 1);
            self.sweep_at = (2 * self.sets.len()).max(64);
        }
        let set = Arc::new(set);
        self.sets.insert(set.clone());
        Ok(Some(set))
    }
}

thread_local! {
    /// The buffer a read decompresses into, kept between reads on a thread (taken out during a
    /// read, so a read nested in a decode's transform gets a buffer of its own).
    static TEXT: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A read buffer larger than this is not kept for the next read.
const KEEP_BUFFER_MAX: usize = 256 * 1024;

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
    Utf8(#[from] std::str::Utf8Error),
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
    labels: Mutex<LabelSets>,
}

impl Codec {
    pub(crate) fn new(drop_managed_fields: bool) -> Self {
        Codec {
            drop_managed_fields,
            dict: OnceLock::new(),
            labels: Mutex::default(),
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
    /// drops them, with `labels` (those of the object as the informer decodes it, transforms
    /// included) in the clear; `None` if its name, namespace or resourceVersion cannot be read
    /// from the text as is or are too long to record (the caller keeps the decoded object
    /// instead).
    pub(crate) fn compact(
        &self,
        raw: &str,
        labels: Option<&BTreeMap<String, String>>,
    ) -> Option<Compact> {
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
        let labels = match labels {
            Some(l) => self.labels.lock().intern(l).ok()?,
            None => None,
        };
        Some(Compact {
            bytes: bytes.into_boxed_slice(),
            labels,
        })
    }

    /// `read` of the JSON text `c` keeps, decompressed into this thread's read buffer (no
    /// allocation once the buffer has grown to the store's objects).
    pub(crate) fn read<T>(
        &self,
        c: &Compact,
        read: impl FnOnce(&str) -> Result<T, ExpandError>,
    ) -> Result<T, ExpandError> {
        let dict = self.dict.get().ok_or(ExpandError::NoDictionary)?;
        let want = c.text_len();
        let mut buf = TEXT.take();
        if buf.len() < want {
            buf.resize(want, 0);
        }
        let out = buf.get_mut(..want).unwrap_or_default();
        let result = match lz4_flex::block::decompress_into_with_dict(c.block(), out, dict) {
            Ok(got) if got != want => Err(ExpandError::Length { got, want }),
            Ok(_) => std::str::from_utf8(out)
                .map_err(ExpandError::from)
                .and_then(read),
            Err(e) => Err(e.into()),
        };
        if buf.len() <= KEEP_BUFFER_MAX {
            TEXT.set(buf);
        }
        result
    }

    /// The JSON text `c` keeps (decompressed).
    #[cfg(test)]
    pub(crate) fn text(&self, c: &Compact) -> Result<String, ExpandError> {
        self.read(c, |t| Ok(t.to_string()))
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

    /// The value of label `key` (as the informer decodes the object).
    pub(crate) fn label(&self, key: &str) -> Option<&str> {
        self.labels.as_deref()?.get(key)
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
            let c = codec.compact(raw, None).unwrap();
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
        let c = codec.compact(raw, None).unwrap();
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
        let first = codec.compact(&object(0), None).unwrap();
        for i in 1..50 {
            let raw = object(i);
            let c = codec.compact(&raw, None).unwrap();
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
    fn objects_with_the_same_labels_share_one_set_and_unused_sets_are_swept() {
        let codec = Codec::new(false);
        let labels = |i: usize| BTreeMap::from([("app".to_string(), format!("app-{i}"))]);
        let raw = |i: usize| format!(r#"{{"metadata":{{"name":"o-{i}"}}}}"#);
        let a = codec.compact(&raw(1), Some(&labels(1))).unwrap();
        let b = codec.compact(&raw(2), Some(&labels(1))).unwrap();
        assert!(matches!((&a.labels, &b.labels), (Some(x), Some(y)) if Arc::ptr_eq(x, y)));
        assert_eq!(a.label("app"), Some("app-1"));
        assert_eq!(a.label("tier"), None);
        let empty = codec.compact(&raw(3), Some(&BTreeMap::new())).unwrap();
        assert!(empty.labels.is_none() && empty.label("app").is_none());
        // Thousands of sets made and dropped: the table keeps about what is in use.
        for i in 0..5_000 {
            drop(codec.compact(&raw(i), Some(&labels(i + 10))));
        }
        let kept = codec.labels.lock().sets.len();
        assert!(kept <= 2 * 64, "{kept} sets kept");
        assert_eq!(a.label("app"), Some("app-1"));
        let c = codec.compact(&raw(4), Some(&labels(1))).unwrap();
        assert_eq!(c.label("app"), Some("app-1"));
    }

    #[test]
    fn a_label_set_reads_back_every_label_and_refuses_what_it_cannot_record() {
        let codec = Codec::new(false);
        let raw = r#"{"metadata":{"name":"web-3"}}"#;
        let labels = BTreeMap::from(
            [
                ("app", "web"),
                ("apps.kubernetes.io/pod-index", "3"),
                ("empty", ""),
                ("statefulset.kubernetes.io/pod-name", "web-3"),
                ("unicode", "größe-ü"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        let c = codec.compact(raw, Some(&labels)).unwrap();
        for (k, v) in &labels {
            assert_eq!(c.label(k), Some(v.as_str()), "{k}");
        }
        for absent in ["", "ap", "apps", "web", "unicode2", "zzz"] {
            assert_eq!(c.label(absent), None, "{absent}");
        }
        // Longer than a set records: kept decoded by the caller, never without its labels.
        let long = BTreeMap::from([("k".to_string(), "v".repeat(70_000))]);
        assert!(codec.compact(raw, Some(&long)).is_none());
    }

    #[test]
    fn refuses_what_it_cannot_key_from_the_text() {
        // No name; a name with an escape (not borrowable); not JSON.
        let codec = Codec::new(true);
        assert!(codec.compact(r#"{"metadata":{}}"#, None).is_none());
        assert!(
            codec
                .compact(r#"{"metadata":{"name":"a\u0062"}}"#, None)
                .is_none()
        );
        assert!(codec.compact("nope", None).is_none());
    }
}
