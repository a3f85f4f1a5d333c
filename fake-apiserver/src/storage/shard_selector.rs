//! KEP-5866's `shardSelector` on list, watch and deletecollection (kube-apiserver's
//! `ShardedListAndWatch` alpha feature gate): a CEL expression of `shardRange(field, 'hexStart',
//! 'hexEnd')` calls joined with `||`, where `field` is `object.metadata.uid` or
//! `object.metadata.namespace` and an object is selected when the 64-bit FNV-1a hash of that
//! field lies in `[hexStart, hexEnd)` of one of the ranges.
//!
//! The expression is parsed with the `cel` crate's parser and then checked the way
//! kube-apiserver v1.37.1 checks it, with its words (probed; the fake-vs-real test
//! `tests/tests/shard_selector_fake_vs_real.rs` compares them): bounds are `0x` and exactly 16
//! lowercase hex digits, or `0x10000000000000000` (2^64) for an end; every range hashes the
//! same field. The real server answers a refused selector with a reason-less 500, which the
//! caller reproduces; a CEL syntax error carries the parser's own text, which differs between
//! cel-go and the `cel` crate after the `CEL parse error: ` prefix.

use std::hash::Hasher;

use cel::common::ast::{Expr, IdedExpr, LiteralValue};
use serde_json::Value;

use crate::error::go_quote;

/// The fields a shard range may hash.
const SUPPORTED: &str = "object.metadata.uid, object.metadata.namespace";
/// The exclusive end of the whole hash space, 2^64, as the only accepted 17-digit bound.
const TWO_TO_64: &str = "10000000000000000";

/// The hashed field of a [`ShardSelector`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShardField {
    Uid,
    Namespace,
}

impl ShardField {
    fn path(self) -> &'static str {
        match self {
            ShardField::Uid => "object.metadata.uid",
            ShardField::Namespace => "object.metadata.namespace",
        }
    }
}

/// One `shardRange(…)`: `[start, end)` of the hash space, with the bounds as written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Range {
    start: u128,
    end: u128,
    start_text: String,
    end_text: String,
}

/// A parsed `shardSelector`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShardSelector {
    field: ShardField,
    ranges: Vec<Range>,
}

/// The 64-bit FNV-1a hash of `s`'s bytes, the hash KEP-5866 ranges partition.
pub(crate) fn fnv1a_64(s: &str) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(s.as_bytes());
    h.finish()
}

impl ShardSelector {
    /// Parses a selector; the error is the text after kube-apiserver's `invalid shard
    /// selector: `.
    pub(crate) fn parse(src: &str) -> Result<ShardSelector, String> {
        let ast = cel::parser::Parser::new()
            .parse(src)
            .map_err(|e| format!("CEL parse error: {e}"))?;
        let mut ranges = Vec::new();
        collect(&ast, &mut ranges)?;
        let mut field = None;
        let mut out = Vec::with_capacity(ranges.len());
        for (f, r) in ranges {
            match field {
                None => field = Some(f),
                Some(first) if first != f => {
                    return Err(format!(
                        "all shard ranges must use the same field, got {} and {}",
                        go_quote(first.path()),
                        go_quote(f.path())
                    ));
                }
                Some(_) => {}
            }
            out.push(r);
        }
        let field = field.ok_or_else(|| "no shardRange() in the selector".to_string())?;
        Ok(ShardSelector { field, ranges: out })
    }

    /// Whether `obj`'s hashed field falls in one of the ranges.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let ptr = match self.field {
            ShardField::Uid => "/metadata/uid",
            ShardField::Namespace => "/metadata/namespace",
        };
        let h = u128::from(fnv1a_64(
            obj.pointer(ptr).and_then(Value::as_str).unwrap_or(""),
        ));
        self.ranges.iter().any(|r| r.start <= h && h < r.end)
    }

    /// The selector as kube-apiserver echoes it in a list's `metadata.shardInfo.selector`.
    pub(crate) fn canonical(&self) -> String {
        self.ranges
            .iter()
            .map(|r| {
                format!(
                    "shardRange({}, '{}', '{}')",
                    self.field.path(),
                    r.start_text,
                    r.end_text
                )
            })
            .collect::<Vec<_>>()
            .join(" || ")
    }
}

/// The number cel-go gives an expression's kind in its messages.
fn kind_number(e: &Expr) -> u8 {
    match e {
        Expr::Unspecified => 0,
        Expr::Call(_) => 1,
        Expr::Comprehension(_) => 2,
        Expr::Ident(_) => 3,
        Expr::List(_) => 4,
        Expr::Literal(_) => 5,
        Expr::Map(_) => 6,
        Expr::Select(_) => 7,
        Expr::Struct(_) => 8,
    }
}

/// The ranges of an `||` tree, left to right.
fn collect(e: &IdedExpr, out: &mut Vec<(ShardField, Range)>) -> Result<(), String> {
    let Expr::Call(call) = &e.expr else {
        return Err(format!(
            "unexpected expression kind {}; expected shardRange() call or || operator",
            kind_number(&e.expr)
        ));
    };
    match call.func_name.as_str() {
        "_||_" => {
            for a in &call.args {
                collect(a, out)?;
            }
            Ok(())
        }
        "shardRange" => {
            if call.args.len() != 3 {
                return Err(format!(
                    "shardRange() requires exactly 3 arguments, got {}",
                    call.args.len()
                ));
            }
            let path = field_path(&call.args[0])?;
            let field = match path.as_str() {
                "object.metadata.uid" => ShardField::Uid,
                "object.metadata.namespace" => ShardField::Namespace,
                _ => {
                    return Err(format!(
                        "unsupported field path {}; supported: {SUPPORTED}",
                        go_quote(&path)
                    ));
                }
            };
            let start_text = string_literal(&call.args[1], "hexStart")?;
            let start = hex_bound(&start_text, "hexStart")?;
            let end_text = string_literal(&call.args[2], "hexEnd")?;
            let end = hex_bound(&end_text, "hexEnd")?;
            if start >= end {
                return Err(format!(
                    "shard range start {start_text} must be less than end {end_text}"
                ));
            }
            out.push((
                field,
                Range {
                    start,
                    end,
                    start_text,
                    end_text,
                },
            ));
            Ok(())
        }
        other => Err(format!(
            "unsupported function {}; only shardRange() and || are allowed",
            go_quote(other)
        )),
    }
}

/// `object.metadata.uid` out of its select chain.
fn field_path(e: &IdedExpr) -> Result<String, String> {
    match &e.expr {
        Expr::Ident(name) => Ok(name.clone()),
        Expr::Select(sel) => Ok(format!("{}.{}", field_path(&sel.operand)?, sel.field)),
        other => Err(format!(
            "shardRange() first argument: expected field path (e.g. object.metadata.uid), got expression kind {}",
            kind_number(other)
        )),
    }
}

/// A bound's text, which must be a string literal; other literals are named by Go's type.
fn string_literal(e: &IdedExpr, label: &str) -> Result<String, String> {
    let lit = match &e.expr {
        Expr::Literal(lit) => lit,
        other => {
            return Err(format!(
                "{label} must be a string literal (e.g. '0xff'), got expression kind {}",
                kind_number(other)
            ));
        }
    };
    let go_type = match lit {
        LiteralValue::String(s) => return Ok(s.inner().to_string()),
        LiteralValue::Boolean(_) => "bool",
        LiteralValue::Bytes(_) => "[]uint8",
        LiteralValue::Double(_) => "float64",
        LiteralValue::Int(_) => "int64",
        LiteralValue::Null => "structpb.NullValue",
        LiteralValue::UInt(_) => "uint64",
    };
    Err(format!("{label} must be a string literal, got {go_type}"))
}

/// A bound's value: `0x` and 16 lowercase hex digits, or 2^64 written with 17.
fn hex_bound(text: &str, label: &str) -> Result<u128, String> {
    let Some(digits) = text.strip_prefix("0x") else {
        return Err(format!(
            "{label} must have '0x' prefix, got {}",
            go_quote(text)
        ));
    };
    if digits.is_empty() {
        return Err(format!("{label}: hex value is required after '0x'"));
    }
    if digits.len() > 17 {
        return Err(format!(
            "{label}: hex value too long ({} chars, max 17): {}",
            digits.len(),
            go_quote(digits)
        ));
    }
    if let Some(c) = digits.chars().find(|c| !matches!(c, '0'..='9' | 'a'..='f')) {
        return Err(format!(
            "{label}: invalid hex character {} in {}",
            go_quote(&c.to_string()),
            go_quote(text)
        ));
    }
    if digits.len() == 17 && digits != TWO_TO_64 {
        return Err(format!(
            "{label}: 17-digit hex value must be '0x{TWO_TO_64}' (2^64), got {}",
            go_quote(text)
        ));
    }
    if digits.len() < 16 {
        return Err(format!(
            "{label} must be a 0x-prefixed 16-digit hex value, got {} (did you mean {}?)",
            go_quote(text),
            go_quote(&format!("0x{digits:0>16}"))
        ));
    }
    u128::from_str_radix(digits, 16).map_err(|e| format!("{label}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        // FNV-1a 64 of "" is the offset basis; of "a", the published test vector.
        assert_eq!(fnv1a_64(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64("a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn halves_partition_uids() {
        let lower = ShardSelector::parse(
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        )
        .unwrap();
        let upper = ShardSelector::parse(
            "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
        )
        .unwrap();
        // Hashes kube-apiserver v1.37.1 placed: 0x5047… below, 0xcfc2… above the middle.
        let a = json!({"metadata": {"uid": "c068da72-9670-4b12-819d-d6af4cbf324e"}});
        let b = json!({"metadata": {"uid": "eda32dbc-ec00-4428-85f4-43ad5af6c8a8"}});
        assert!(lower.matches(&a) && !upper.matches(&a));
        assert!(upper.matches(&b) && !lower.matches(&b));
    }

    #[test]
    fn refusals_name_the_cause() {
        let cases = [
            (
                "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
                "hexStart must be a 0x-prefixed 16-digit hex value, got \"0x0\" (did you mean \"0x0000000000000000\"?)",
            ),
            (
                "garbage",
                "unexpected expression kind 3; expected shardRange() call or || operator",
            ),
            (
                "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000001')",
                "hexEnd: 17-digit hex value must be '0x10000000000000000' (2^64), got \"0x10000000000000001\"",
            ),
            (
                "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')",
                "all shard ranges must use the same field, got \"object.metadata.uid\" and \"object.metadata.namespace\"",
            ),
            (
                "shardRange(object.metadata.uid, b'0x0000000000000000', '0x8000000000000000')",
                "hexStart must be a string literal, got []uint8",
            ),
            (
                "shardRange(object[\"metadata\"].uid, '0x0000000000000000', '0x8000000000000000')",
                "shardRange() first argument: expected field path (e.g. object.metadata.uid), got expression kind 1",
            ),
        ];
        for (src, want) in cases {
            assert_eq!(ShardSelector::parse(src).unwrap_err(), want, "{src}");
        }
    }

    #[test]
    fn canonical_form_flattens_parentheses() {
        let s = ShardSelector::parse(
            "(shardRange( object . metadata . uid , \"0x0000000000000000\", '0x4000000000000000') || shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000')) || shardRange(object.metadata.uid, '0xf000000000000000', '0x10000000000000000')",
        )
        .unwrap();
        assert_eq!(
            s.canonical(),
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0xf000000000000000', '0x10000000000000000')"
        );
    }
}
