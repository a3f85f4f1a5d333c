//! Stage 2, tags: find the comment lines that belong to an item or a package and parse the
//! `+key`, `+key=value` and `+key:sub=value,k=v` tags in them.
//!
//! Which comments belong to a type follows gengo (`docs/generator.md`, "Which comments belong to
//! a type"), translated to Rust:
//!
//! * the *closest* block: every comment line (`//` or `///`) among the item's attributes, plus
//!   the run of comment lines directly above its first attribute or doc line;
//! * the *second-closest* block: a run of comment lines that ends exactly one blank line above
//!   the closest block (or above the item, when it has no comments), so tags can be kept out of
//!   rustdoc;
//! * anything further away is not seen.
//!
//! Package tags come from the version folder's `mod.rs`: its `//!` lines and the plain `//`
//! comment lines at the top of the file, before the first item.

pub(crate) mod markers;

use std::path::Path;

use crate::error::{Error, Location, Pos, Result};
use crate::scan::LineIndex;

/// One tag line: `+key` or `+key=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    /// The name, e.g. `genclient:method` or `groupName`.
    pub key: String,
    /// The raw text after the first `=`, if there is one.
    pub value: Option<String>,
    /// Where the `+` is.
    pub location: Location,
}

/// A comment line with its 1-based line number and the column where its text starts.
#[derive(Debug, Clone, Copy)]
struct CommentLine<'a> {
    line: usize,
    col: usize,
    text: &'a str,
}

fn comment_text(raw: &str) -> Option<(usize, &str)> {
    let indent = raw.len() - raw.trim_start().len();
    let t = raw.trim_start();
    let rest = t
        .strip_prefix("///")
        .filter(|r| !r.starts_with('/'))
        .or_else(|| t.strip_prefix("//"))?;
    if rest.starts_with('!') {
        return None;
    }
    let offset = indent + (t.len() - rest.len());
    Some((offset, rest))
}

fn is_blank(raw: &str) -> bool {
    raw.trim().is_empty()
}

/// The tags that belong to the item spanning lines `first_line..=name_line` (1-based; the first
/// line is that of its first attribute or doc comment, the name line that of its identifier).
pub fn item_tags(
    path: &Path,
    text: &str,
    index: &LineIndex,
    first_line: usize,
    name_line: usize,
) -> Vec<Tag> {
    let get = |n: usize| -> Option<&str> { index.line(text, n) };
    let mut comments: Vec<CommentLine<'_>> = Vec::new();

    // Closest block, part 1: the run directly above the first attribute.
    let mut top = first_line;
    while top > 1 {
        match get(top - 1).and_then(comment_text) {
            Some(_) => top -= 1,
            None => break,
        }
    }
    // The closest block starts at `top` (if it has comment lines above the attributes) or at the
    // first comment line among the attributes.
    let mut block_start = None;
    for n in top..name_line.max(top) {
        if let Some((col, t)) = get(n).and_then(comment_text) {
            block_start.get_or_insert(n);
            comments.push(CommentLine {
                line: n,
                col: col + 1,
                text: t,
            });
        }
    }
    // Second-closest block: ends exactly one blank line above the closest block (or the item).
    let anchor = block_start.unwrap_or(first_line);
    if anchor > 2 && get(anchor - 1).is_some_and(is_blank) {
        let end = anchor - 2;
        let mut start = end;
        while start >= 1 && get(start).and_then(comment_text).is_some() {
            start -= 1;
        }
        let mut second = Vec::new();
        for n in start + 1..=end {
            if let Some((col, t)) = get(n).and_then(comment_text) {
                second.push(CommentLine {
                    line: n,
                    col: col + 1,
                    text: t,
                });
            }
        }
        second.append(&mut comments);
        comments = second;
    }
    parse_lines(path, &comments)
}

/// The package tags of a `mod.rs`: its `//!` lines and the `//` lines before the first item.
pub fn package_tags(path: &Path, text: &str) -> Vec<Tag> {
    let mut comments = Vec::new();
    let mut in_header = true;
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim_start();
        let indent = raw.len() - t.len();
        if let Some(rest) = t.strip_prefix("//!") {
            comments.push(CommentLine {
                line: i + 1,
                col: indent + 4,
                text: rest,
            });
        } else if let Some((col, rest)) = comment_text(raw) {
            if in_header {
                comments.push(CommentLine {
                    line: i + 1,
                    col: col + 1,
                    text: rest,
                });
            }
        } else if !is_blank(raw) {
            in_header = false;
        }
    }
    parse_lines(path, &comments)
}

fn parse_lines(path: &Path, lines: &[CommentLine<'_>]) -> Vec<Tag> {
    lines
        .iter()
        .filter_map(|c| {
            let lead = c.text.len() - c.text.trim_start().len();
            let t = c.text.trim();
            let body = t.strip_prefix('+')?;
            if body.is_empty() || body.starts_with(char::is_whitespace) {
                return None;
            }
            let (key, value) = match body.split_once('=') {
                Some((k, v)) => (k.trim_end(), Some(v.trim().to_string())),
                None => (body, None),
            };
            Some(Tag {
                key: key.to_string(),
                value,
                location: Location::new(
                    path,
                    Pos {
                        line: c.line,
                        col: c.col + lead,
                    },
                ),
            })
        })
        .collect()
}

/// A tag value split into its leading bare word and its `key=value` pairs.
pub type TagArgs<'a> = (Option<&'a str>, Vec<(&'a str, &'a str)>);

/// Parses the `k=v,k2=v2` arguments of a tag value such as `+genclient:method=Name,verb=get`.
/// The first field may be a bare word (the method name); the rest must be `key=value` with a
/// non-empty value.
pub fn parse_args<'a>(tag: &Tag, value: &'a str) -> Result<TagArgs<'a>> {
    let mut first = None;
    let mut args = Vec::new();
    for (i, field) in value.split(',').map(str::trim).enumerate() {
        match field.split_once('=') {
            Some((k, v)) => {
                let (k, v) = (k.trim(), v.trim());
                if k.is_empty() || v.is_empty() {
                    return Err(Error::at(
                        tag.location.clone(),
                        format!("+{}: empty key or value in {field:?}", tag.key),
                    ));
                }
                args.push((k, v));
            }
            None if i == 0 => first = Some(field),
            None => {
                return Err(Error::at(
                    tag.location.clone(),
                    format!("+{}: expected key=value, found {field:?}", tag.key),
                ));
            }
        }
    }
    Ok((first, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(tags: &[Tag]) -> Vec<String> {
        tags.iter()
            .map(|t| match &t.value {
                Some(v) => format!("{}={}", t.key, v),
                None => t.key.clone(),
            })
            .collect()
    }

    fn tags_at(src: &str, first_line: usize, name_line: usize) -> Vec<Tag> {
        item_tags(
            Path::new("t.rs"),
            src,
            &LineIndex::new(src),
            first_line,
            name_line,
        )
    }

    #[test]
    fn the_line_index_agrees_with_str_lines() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\nb",
            "a\r\nb\r\n",
            "\u{feff}// x\n\n\nfn f() {}\n",
            "a\n\n",
            "\r\n\r",
        ] {
            let index = LineIndex::new(text);
            let lines: Vec<&str> = text.lines().collect();
            for n in 0..lines.len() + 3 {
                let want = n.checked_sub(1).and_then(|i| lines.get(i).copied());
                assert_eq!(index.line(text, n), want, "{text:?} line {n}");
            }
        }
    }

    #[test]
    fn closest_block_includes_plain_and_doc_comments_and_attr_interleaves() {
        let src = "\
use x;

// +genclient
/// Mydemo is a demo.
// +genclient:noStatus
#[derive(Clone)]
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
pub struct Mydemo {}
";
        let tags = tags_at(src, 4, 8);
        assert_eq!(
            keys(&tags),
            [
                "genclient",
                "genclient:noStatus",
                "k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object"
            ]
        );
        assert_eq!(tags[0].location.pos, Pos { line: 3, col: 4 });
    }

    #[test]
    fn second_closest_block_needs_exactly_one_blank_line() {
        let src = "\
// +genclient

/// Doc.
pub struct A;


// +genclient
pub struct B;
";
        assert_eq!(keys(&tags_at(src, 3, 4)), ["genclient"]);
        assert!(tags_at(src, 8, 8).len() == 1);
        let far = "// +genclient\n\n\npub struct C;\n";
        assert!(tags_at(far, 4, 4).is_empty());
        let no_doc = "// +genclient\n\npub struct D;\n";
        assert_eq!(keys(&tags_at(no_doc, 3, 3)), ["genclient"]);
    }

    #[test]
    fn tags_of_a_previous_item_do_not_leak() {
        let src = "// +genclient\npub struct A;\npub struct B;\n";
        assert!(tags_at(src, 3, 3).is_empty());
    }

    #[test]
    fn package_tags_from_inner_docs_and_header_block() {
        let src = "\
// Licensed under …
// +k8s:deepcopy-gen=package
//! The crddemo API.
//!
//! +groupName=crddemo.k8s.io
mod types;
// +ignored=after-first-item
";
        assert_eq!(
            keys(&package_tags(Path::new("mod.rs"), src)),
            ["k8s:deepcopy-gen=package", "groupName=crddemo.k8s.io"]
        );
        let empty = package_tags(Path::new("mod.rs"), "//! +groupName=\n");
        assert_eq!(empty[0].value.as_deref(), Some(""));
    }

    #[test]
    fn args_parse_and_reject_malformed_fields() {
        let tag = Tag {
            key: "genclient:method".into(),
            value: None,
            location: Location::file("t.rs"),
        };
        let (first, args) = parse_args(&tag, "GetScale,verb=get,subresource=scale").unwrap();
        assert_eq!(first, Some("GetScale"));
        assert_eq!(args, [("verb", "get"), ("subresource", "scale")]);
        assert!(parse_args(&tag, "A,verb=").is_err());
        assert!(parse_args(&tag, "A,verb=get,oops").is_err());
    }
}
