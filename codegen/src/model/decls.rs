//! What the model reads of the syntax trees: each struct, enum, re-export and type alias of a
//! file as a [`TypeDecl`], with its tags. The only part of the model that sees `syn` values.

use std::collections::BTreeSet;

use syn::spanned::Spanned;

use super::Shape;
use crate::error::{Location, Pos, Result};
use crate::scan::SourceFile;
use crate::tags::{self, Tag};

/// A struct or enum found in a package, with what the model needs of it.
pub(super) struct TypeDecl {
    pub(super) name: String,
    pub(super) location: Location,
    pub(super) is_pub: bool,
    pub(super) derives_clone: bool,
    pub(super) fields: Vec<(String, String)>,
    pub(super) shape: Shape,
    pub(super) lifetimes: Vec<String>,
    pub(super) type_params: Vec<String>,
    pub(super) unsupported_generics: bool,
    pub(super) tags: Vec<Tag>,
    /// For a re-export or type alias: the path of the type it names (`k8s_openapi::api::core::v1::Pod`),
    /// or the reason it cannot be a kind (a glob or a list of names).
    pub(super) external: Option<std::result::Result<String, String>>,
}

pub(super) fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

/// The line of a written visibility; 0 (ignored) for an inherited one, whose span is the call
/// site rather than a place in the file.
pub(super) fn vis_line(vis: &syn::Visibility) -> usize {
    match vis {
        syn::Visibility::Inherited => 0,
        v => line_of(v.span()),
    }
}

pub(super) fn collect_decls(
    file: &SourceFile,
    out: &mut Vec<TypeDecl>,
    manual_clone: &mut BTreeSet<String>,
) -> Result<()> {
    for item in &file.ast.items {
        let (attrs, vis, ident, generics, kw_span, shape, fields) = match item {
            syn::Item::Struct(s) => {
                let fields: Vec<(String, String)> = s
                    .fields
                    .iter()
                    .filter_map(|f| Some((f.ident.as_ref()?.to_string(), type_tail(&f.ty))))
                    .collect();
                (
                    &s.attrs,
                    &s.vis,
                    &s.ident,
                    &s.generics,
                    s.struct_token.span,
                    shape_of(&s.fields),
                    fields,
                )
            }
            syn::Item::Enum(e) => {
                let variants = e
                    .variants
                    .iter()
                    .map(|v| (v.ident.to_string(), shape_of(&v.fields)))
                    .collect();
                (
                    &e.attrs,
                    &e.vis,
                    &e.ident,
                    &e.generics,
                    e.enum_token.span,
                    Shape::Enum(variants),
                    Vec::new(),
                )
            }
            syn::Item::Impl(imp) => {
                let is_clone = imp
                    .trait_
                    .as_ref()
                    .and_then(|(_, p, _)| p.segments.last())
                    .is_some_and(|s| s.ident == "Clone");
                if let (true, syn::Type::Path(tp)) = (is_clone, &*imp.self_ty)
                    && let Some(seg) = tp.path.segments.last()
                {
                    manual_clone.insert(seg.ident.to_string());
                }
                continue;
            }
            _ => continue,
        };
        let name_line = line_of(ident.span());
        let first_line = attrs
            .iter()
            .map(|a| line_of(a.pound_token.span))
            .chain([vis_line(vis), line_of(kw_span), name_line])
            .filter(|&l| l > 0)
            .min()
            .unwrap_or(name_line);
        let derives_clone = attrs.iter().any(|a| {
            a.path().is_ident("derive")
                && a.parse_args_with(
                    syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|paths| {
                    paths
                        .iter()
                        .any(|p| p.segments.last().is_some_and(|s| s.ident == "Clone"))
                })
        });
        let lifetimes = generics
            .lifetimes()
            .map(|l| l.lifetime.ident.to_string())
            .collect();
        let type_params = generics
            .type_params()
            .map(|t| t.ident.to_string())
            .collect();
        let unsupported_generics =
            generics.const_params().next().is_some() || generics.where_clause.is_some();
        out.push(TypeDecl {
            name: ident.to_string(),
            location: Location::new(&file.path, Pos::of_span(ident.span())),
            is_pub: matches!(vis, syn::Visibility::Public(_)),
            derives_clone,
            fields,
            shape,
            lifetimes,
            type_params,
            unsupported_generics,
            tags: tags::item_tags(&file.path, &file.text, &file.lines, first_line, name_line),
            external: None,
        });
    }
    Ok(())
}

/// `(name, path or why not, span of the name)` of a `use` tree that re-exports one type:
/// `a::b::Pod` or `a::b::Pod as Other`.
pub(super) fn use_target(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
) -> Option<(
    String,
    std::result::Result<String, String>,
    proc_macro2::Span,
)> {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_target(&p.tree, prefix)
        }
        syn::UseTree::Name(n) => {
            prefix.push(n.ident.to_string());
            Some((n.ident.to_string(), Ok(prefix.join("::")), n.ident.span()))
        }
        syn::UseTree::Rename(r) => {
            prefix.push(r.ident.to_string());
            Some((r.rename.to_string(), Ok(prefix.join("::")), r.rename.span()))
        }
        syn::UseTree::Glob(g) => Some((
            "*".into(),
            Err(format!("`{}::*` is a glob", prefix.join("::"))),
            g.star_token.span,
        )),
        syn::UseTree::Group(g) => Some((
            "{…}".into(),
            Err(format!(
                "`{}::{{…}}` names several items",
                prefix.join("::")
            )),
            g.brace_token.span.join(),
        )),
    }
}

/// External declarations: `pub use path::Kind;` and `pub type Kind = path;`, which name a type
/// defined elsewhere (kinds with no struct body here).
pub(super) fn collect_externals(file: &SourceFile, out: &mut Vec<TypeDecl>) {
    for item in &file.ast.items {
        let (attrs, vis, first, name, target, name_span) = match item {
            syn::Item::Use(u) => {
                let mut prefix = Vec::new();
                if u.leading_colon.is_some() {
                    prefix.push(String::new());
                }
                let Some((name, target, span)) = use_target(&u.tree, &mut prefix) else {
                    continue;
                };
                (&u.attrs, &u.vis, u.use_token.span, name, target, span)
            }
            syn::Item::Type(t) if t.generics.params.is_empty() => {
                let target = match &*t.ty {
                    syn::Type::Path(p) if p.qself.is_none() => {
                        let segments: Vec<String> = p
                            .path
                            .segments
                            .iter()
                            .map(|s| s.ident.to_string())
                            .collect();
                        let lead = if p.path.leading_colon.is_some() {
                            "::"
                        } else {
                            ""
                        };
                        Ok(format!("{lead}{}", segments.join("::")))
                    }
                    _ => Err("the alias is not a plain type path".to_string()),
                };
                (
                    &t.attrs,
                    &t.vis,
                    t.type_token.span,
                    t.ident.to_string(),
                    target,
                    t.ident.span(),
                )
            }
            _ => continue,
        };
        let name_line = line_of(name_span);
        let first_line = attrs
            .iter()
            .map(|a| line_of(a.pound_token.span))
            .chain([vis_line(vis), line_of(first), name_line])
            .filter(|&l| l > 0)
            .min()
            .unwrap_or(name_line);
        out.push(TypeDecl {
            name,
            location: Location::new(&file.path, Pos::of_span(name_span)),
            is_pub: matches!(vis, syn::Visibility::Public(_)),
            derives_clone: true,
            fields: Vec::new(),
            shape: Shape::Unit,
            lifetimes: Vec::new(),
            type_params: Vec::new(),
            unsupported_generics: false,
            tags: tags::item_tags(&file.path, &file.text, &file.lines, first_line, name_line),
            external: Some(target),
        });
    }
}

pub(super) fn shape_of(fields: &syn::Fields) -> Shape {
    match fields {
        syn::Fields::Named(n) => Shape::Named(
            n.named
                .iter()
                .filter_map(|f| f.ident.as_ref().map(|i| i.to_string()))
                .collect(),
        ),
        syn::Fields::Unnamed(u) => Shape::Tuple(u.unnamed.len()),
        syn::Fields::Unit => Shape::Unit,
    }
}

/// The last path segment of a field type (`ObjectMeta` for `meta::v1::ObjectMeta`).
pub(super) fn type_tail(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    }
}
