//! The `fieldsV1` format of `metadata.managedFields` (structured-merge-diff's field sets) and
//! the walk that takes the fields of a set out of an object.
//!
//! A field set is a JSON object whose keys are path elements and whose values are the sets
//! below them:
//!
//! * `f:<name>` — a field of an object (or a key of a map);
//! * `k:<json object>` — the item of a keyed list (`listType=map`) whose key fields have these
//!   values;
//! * `v:<json value>` — the item of a set (`listType=set`) equal to this value;
//! * `i:<n>` — the item at index `n`;
//! * `.` — the path itself is owned as well as fields below it.
//!
//! An element whose set is empty (or only `.`) is a leaf: its whole value is owned. The walk
//! needs no schema: the keys name the list items, and what is owned whole (atomic lists,
//! atomic maps, scalars) is a leaf.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

/// One path element of a field set.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PathElement {
    /// `f:name`.
    Field(String),
    /// `k:{"name":"x"}`: the key fields and their values.
    Key(Map<String, Value>),
    /// `v:"x"`.
    Value(Value),
    /// `i:3`.
    Index(usize),
}

/// A parsed field set: the sets below each path element (in document order).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FieldSet {
    children: Vec<(PathElement, FieldSet)>,
}

/// A `fieldsV1` document that is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    /// Where, as the chain of keys from the root (`f:spec` / `k:{"name":"a"}` …).
    pub(crate) path: String,
    /// What is wrong.
    pub(crate) reason: String,
}

impl FieldSet {
    /// Parses a `fieldsV1` value.
    pub(crate) fn parse(v: &Value) -> Result<FieldSet, ParseError> {
        Self::parse_at(v, &mut Vec::new())
    }

    fn parse_at(v: &Value, at: &mut Vec<String>) -> Result<FieldSet, ParseError> {
        let fail = |at: &[String], reason: String| ParseError {
            path: if at.is_empty() {
                "(root)".to_string()
            } else {
                at.join(" / ")
            },
            reason,
        };
        let Value::Object(map) = v else {
            return Err(fail(at, format!("expected a JSON object, found {v}")));
        };
        let mut children = Vec::with_capacity(map.len());
        for (key, child) in map {
            if key == "." {
                if !child.as_object().is_some_and(Map::is_empty) {
                    return Err(fail(at, format!("\".\" must map to {{}}, found {child}")));
                }
                continue;
            }
            at.push(key.clone());
            let pe = parse_element(key).map_err(|reason| fail(at, reason))?;
            let set = Self::parse_at(child, at)?;
            at.pop();
            children.push((pe, set));
        }
        Ok(FieldSet { children })
    }

    /// Whether the whole value at this path is owned (nothing is listed below it).
    fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    /// The elements directly below the root, for tests and diagnostics.
    #[cfg(test)]
    pub(crate) fn elements(&self) -> impl Iterator<Item = &PathElement> {
        self.children.iter().map(|(pe, _)| pe)
    }

    /// The parts of `value` this set names; `None` when none of them is there.
    ///
    /// The result keeps the shape of `value`: objects keep the owned fields, lists the owned
    /// items (in the object's order; a keyed item also keeps its key fields, so that it can be
    /// applied again), leaves their whole value.
    pub(crate) fn extract(&self, value: &Value) -> Option<Value> {
        match value {
            Value::Object(map) => {
                let mut out = Map::new();
                for (pe, set) in &self.children {
                    let PathElement::Field(name) = pe else {
                        continue;
                    };
                    let Some(v) = map.get(name) else { continue };
                    let taken = if set.is_leaf() {
                        Some(v.clone())
                    } else {
                        set.extract(v)
                    };
                    if let Some(t) = taken {
                        out.insert(name.clone(), t);
                    }
                }
                (!out.is_empty()).then_some(Value::Object(out))
            }
            Value::Array(items) => {
                let index = ItemIndex::new(&self.children);
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let Some((pe, set)) = index.find(i, item) else {
                        continue;
                    };
                    if set.is_leaf() {
                        out.push(item.clone());
                        continue;
                    }
                    let mut taken = set
                        .extract(item)
                        .unwrap_or_else(|| Value::Object(Map::new()));
                    if let (PathElement::Key(key), Value::Object(fields)) = (pe, &mut taken) {
                        for (k, v) in key {
                            fields.entry(k.clone()).or_insert_with(|| v.clone());
                        }
                    }
                    out.push(taken);
                }
                (!out.is_empty()).then_some(Value::Array(out))
            }
            // A set below a scalar: the object no longer has the shape the set describes.
            _ => None,
        }
    }
}

/// Finds the element of a list's set that names an item: keyed items by their key (canonical
/// JSON), set items by value, indexed ones by position.
struct ItemIndex<'a> {
    /// Key field names (sorted) → canonical key JSON → element.
    keys: BTreeMap<Vec<&'a str>, HashMap<String, (&'a PathElement, &'a FieldSet)>>,
    values: HashMap<String, (&'a PathElement, &'a FieldSet)>,
    indices: HashMap<usize, (&'a PathElement, &'a FieldSet)>,
}

impl<'a> ItemIndex<'a> {
    fn new(children: &'a [(PathElement, FieldSet)]) -> Self {
        let mut index = ItemIndex {
            keys: BTreeMap::new(),
            values: HashMap::new(),
            indices: HashMap::new(),
        };
        for (pe, set) in children {
            match pe {
                PathElement::Key(key) => {
                    let names: Vec<&str> = key.keys().map(String::as_str).collect();
                    index
                        .keys
                        .entry(names)
                        .or_default()
                        .insert(canonical(&Value::Object(key.clone())), (pe, set));
                }
                PathElement::Value(v) => {
                    index.values.insert(canonical(v), (pe, set));
                }
                PathElement::Index(i) => {
                    index.indices.insert(*i, (pe, set));
                }
                PathElement::Field(_) => {}
            }
        }
        index
    }

    fn find(&self, position: usize, item: &Value) -> Option<(&'a PathElement, &'a FieldSet)> {
        if let Some(found) = self.indices.get(&position) {
            return Some(*found);
        }
        if !self.values.is_empty()
            && let Some(found) = self.values.get(&canonical(item))
        {
            return Some(*found);
        }
        let fields = item.as_object()?;
        for (names, by_key) in &self.keys {
            let mut key = Map::new();
            for name in names {
                key.insert((*name).to_string(), fields.get(*name)?.clone());
            }
            if let Some(found) = by_key.get(&canonical(&Value::Object(key))) {
                return Some(*found);
            }
        }
        None
    }
}

/// JSON with sorted object keys and integral floats written as integers, so that equal values
/// compare equal as strings.
fn canonical(v: &Value) -> String {
    fn normalise(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), normalise(v)))
                    .collect::<BTreeMap<_, _>>()
                    .into_iter()
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(normalise).collect()),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(_), _, _) | (_, Some(_), _) => v.clone(),
                (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                    // Exact: |f| < 2^53, integral.
                    Value::from(f as i64)
                }
                _ => v.clone(),
            },
            _ => v.clone(),
        }
    }
    normalise(v).to_string()
}

fn parse_element(key: &str) -> Result<PathElement, String> {
    let Some((kind, rest)) = key.split_once(':') else {
        return Err(format!(
            "path element {key:?} has no prefix (f:, k:, v:, i: or \".\")"
        ));
    };
    match kind {
        "f" => Ok(PathElement::Field(rest.to_string())),
        "k" => match serde_json::from_str::<Value>(rest) {
            Ok(Value::Object(fields)) if !fields.is_empty() => Ok(PathElement::Key(fields)),
            Ok(other) => Err(format!(
                "key element {key:?} is not a non-empty JSON object: {other}"
            )),
            Err(e) => Err(format!("key element {key:?} is not JSON: {e}")),
        },
        "v" => serde_json::from_str::<Value>(rest)
            .map(PathElement::Value)
            .map_err(|e| format!("value element {key:?} is not JSON: {e}")),
        "i" => rest
            .parse::<usize>()
            .map(PathElement::Index)
            .map_err(|e| format!("index element {key:?} is not an index: {e}")),
        _ => Err(format!(
            "path element {key:?} has an unknown prefix {kind:?} (expected f:, k:, v: or i:)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parses_every_element_kind() {
        let set = FieldSet::parse(&json!({
            "f:a": {}, "k:{\"name\":\"x\",\"port\":80}": {".": {}}, "v:\"s\"": {}, "i:2": {}, ".": {}
        }))
        .unwrap();
        let mut kinds: Vec<String> = set
            .elements()
            .map(|pe| match pe {
                PathElement::Field(f) => format!("f {f}"),
                PathElement::Key(k) => format!("k {}", Value::Object(k.clone())),
                PathElement::Value(v) => format!("v {v}"),
                PathElement::Index(i) => format!("i {i}"),
            })
            .collect();
        kinds.sort();
        assert_eq!(
            kinds,
            ["f a", "i 2", "k {\"name\":\"x\",\"port\":80}", "v \"s\""]
        );
    }

    #[test]
    fn malformed_sets_name_the_place_and_the_cause() {
        let cases = [
            (json!([]), "(root)", "expected a JSON object"),
            (json!({"f:spec": {"x": {}}}), "f:spec / x", "has no prefix"),
            (
                json!({"f:spec": {"q:x": {}}}),
                "f:spec / q:x",
                "unknown prefix \"q\"",
            ),
            (json!({"k:[1]": {}}), "k:[1]", "not a non-empty JSON object"),
            (json!({"k:{}": {}}), "k:{}", "not a non-empty JSON object"),
            (json!({"k:{oops": {}}), "k:{oops", "is not JSON"),
            (json!({"v:nope": {}}), "v:nope", "is not JSON"),
            (json!({"i:-1": {}}), "i:-1", "is not an index"),
            (json!({"f:a": {".": 1}}), "f:a", "\".\" must map to {}"),
            (json!({"f:a": "x"}), "f:a", "expected a JSON object"),
        ];
        for (doc, path, reason) in cases {
            let err = FieldSet::parse(&doc).unwrap_err();
            assert_eq!(err.path, path, "{doc}");
            assert!(err.reason.contains(reason), "{doc}: {}", err.reason);
        }
    }

    #[test]
    fn extract_takes_owned_fields_items_and_leaves() {
        let obj = json!({
            "spec": {
                "size": 3, "image": "x",
                "ports": [{"name": "a", "port": 1, "extra": true}, {"name": "b", "port": 2}],
                "tags": ["p", "q", "r"],
                "args": ["--x", "--y"],
                "selector": {"matchLabels": {"app": "z"}},
                "multi": [{"host": "h", "port": 80, "w": 1}, {"host": "h", "port": 81, "w": 2}],
                "byIndex": [10, 11, 12]
            }
        });
        let set = FieldSet::parse(&json!({"f:spec": {
            "f:size": {},
            "f:ports": {"k:{\"name\":\"b\"}": {".": {}, "f:port": {}}},
            "f:tags": {"v:\"r\"": {}, "v:\"p\"": {}},
            "f:args": {},
            "f:selector": {},
            "f:multi": {"k:{\"port\":81,\"host\":\"h\"}": {"f:w": {}}},
            "f:byIndex": {"i:1": {}},
            "f:gone": {}
        }}))
        .unwrap();
        assert_eq!(
            set.extract(&obj).unwrap(),
            json!({"spec": {
                "size": 3,
                // the key field comes along although only `port` is listed
                "ports": [{"name": "b", "port": 2}],
                // set items in the object's order
                "tags": ["p", "r"],
                "args": ["--x", "--y"],
                "selector": {"matchLabels": {"app": "z"}},
                "multi": [{"host": "h", "port": 81, "w": 2}],
                "byIndex": [11]
            }})
        );
    }

    #[test]
    fn keys_match_numbers_however_they_are_written() {
        let obj = json!({"ports": [{"port": 80.0, "protocol": "TCP"}]});
        let set =
            FieldSet::parse(&json!({"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {}}}))
                .unwrap();
        assert_eq!(set.extract(&obj).unwrap(), obj);
    }

    #[test]
    fn nothing_owned_is_none() {
        let set = FieldSet::parse(&json!({"f:spec": {"f:size": {}}})).unwrap();
        assert_eq!(set.extract(&json!({"spec": {"other": 1}})), None);
        assert_eq!(set.extract(&json!({"spec": 5})), None);
        assert_eq!(FieldSet::default().extract(&json!({"a": 1})), None);
    }
}
