//! The types of a package as plain data: what the stages after the model need to see of
//! every struct and enum — the CRD schema ([`crate::crd::schema`]) and the apply configurations
//! ([`crate::applyconfig`]). Per type: its name, place, tags, doc, serde attributes, generics
//! and fields or variants, each field's type as a [`TypeExpr`] tree; per file, its imports.
//!
//! Built from the syntax trees beside the [`Package`](super::Package), by the worker that parsed
//! them; nothing here holds `syn` values, so the table can cross threads and the stages that
//! read it run anywhere, once per parse.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use crate::error::{Error, Location, Pos, Result};
use crate::scan::{PackageSource, SourceFile};
use crate::tags::{self, Tag};

/// The structs, enums and imports of one package.
#[derive(Debug)]
pub(crate) struct PackageTypes {
    /// Every struct and enum, by name.
    pub types: BTreeMap<String, TypeDef>,
    /// Every file of the package, in the scan's order; [`TypeDef::file`] indexes it.
    pub files: Vec<FileInfo>,
    /// The package tags (the `//!` lines of `mod.rs`; none without one).
    pub package_tags: Vec<Tag>,
}

/// One source file: where it is and what it imports.
#[derive(Debug)]
pub(crate) struct FileInfo {
    /// The file, as the scan named it.
    pub path: PathBuf,
    /// Whether this is the package's `mod.rs` (whose `self::` is the package itself).
    pub is_mod: bool,
    /// Its `use` declarations.
    pub imports: Imports,
}

/// What the `use` declarations of a file bring into scope.
#[derive(Debug, Default)]
pub(crate) struct Imports {
    /// `use a::b::C;` → `C` ↦ `[a, b, C]`; `use a::b as c;` → `c` ↦ `[a, b]`.
    pub names: BTreeMap<String, Vec<String>>,
    /// `use a::b::*;` → `[a, b]`.
    pub globs: Vec<Vec<String>>,
}

/// A struct or enum of the package.
#[derive(Debug)]
pub(crate) struct TypeDef {
    /// The name as written (`Foo`).
    pub name: String,
    /// Its file, an index into [`PackageTypes::files`].
    pub file: usize,
    /// Where its name is.
    pub pos: Pos,
    /// Its tags (comment lines above it, doc comments included).
    pub tags: Vec<Tag>,
    /// Its doc comment as a description ([`doc_text`]).
    pub doc: Option<String>,
    /// Its serde attributes.
    pub serde: Serde,
    /// Its generic parameters.
    pub generics: Generics,
    /// Its fields or variants.
    pub body: Body,
}

/// The generic parameters of a type.
#[derive(Debug, Default)]
pub(crate) struct Generics {
    /// How many there are, lifetimes included.
    pub count: usize,
    /// The names of the type parameters, in order.
    pub type_params: Vec<String>,
    /// Whether any is a const parameter.
    pub has_const: bool,
}

/// A struct's fields, or an enum's variants.
#[derive(Debug)]
pub(crate) enum Body {
    /// A struct.
    Struct(Fields),
    /// An enum.
    Enum(Vec<Variant>),
}

/// The fields of a struct or variant.
#[derive(Debug)]
pub(crate) enum Fields {
    /// `{ a: A, … }`
    Named(Vec<Field>),
    /// `(A, …)`
    Unnamed(Vec<Field>),
    /// No fields.
    Unit,
}

/// One field.
#[derive(Debug)]
pub(crate) struct Field {
    /// The name without `r#` (`None` in a tuple struct or variant).
    pub ident: Option<String>,
    /// Where its name is (its type in a tuple).
    pub pos: Pos,
    /// Its tags.
    pub tags: Vec<Tag>,
    /// Its doc comment as a description.
    pub doc: Option<String>,
    /// Its serde attributes.
    pub serde: Serde,
    /// Its type.
    pub ty: TypeExpr,
}

/// One variant of an enum.
#[derive(Debug)]
pub(crate) struct Variant {
    /// The name as written (`r#Type` stays raw), for messages.
    pub written: String,
    /// The name without `r#`, which serde uses.
    pub name: String,
    /// Where its name is.
    pub pos: Pos,
    /// Its serde attributes.
    pub serde: Serde,
    /// Its fields.
    pub fields: Fields,
}

/// A type as written, reduced to what the schema and apply stages distinguish. Parentheses
/// and invisible groups are gone; what they cannot use keeps only its text, for messages.
#[derive(Debug)]
pub(crate) enum TypeExpr {
    /// `a::b::C<…>` (without a qualified self).
    Path(TypePath),
    /// `&T`, `&'a mut T`.
    Reference {
        /// `T`.
        elem: Box<TypeExpr>,
        /// The whole type, for messages.
        text: String,
    },
    /// `[T; N]`.
    Array {
        /// `T`.
        elem: Box<TypeExpr>,
        /// `N` when it is an integer literal.
        len: Option<i64>,
    },
    /// `[T]`.
    Slice(Box<TypeExpr>),
    /// `(A, B)`, `()`.
    Tuple {
        /// Whether it is `()`.
        unit: bool,
        /// The whole type, for messages.
        text: String,
    },
    /// Anything else (function pointers, trait objects, `<T as Trait>::X` …): its text.
    Other(String),
}

/// A path type.
#[derive(Debug)]
pub(crate) struct TypePath {
    /// Whether it starts with `::`.
    pub leading_colon: bool,
    /// Its segments (at least one).
    pub segments: Vec<Segment>,
    /// The path as written, for messages.
    pub text: String,
}

/// One segment of a path.
#[derive(Debug)]
pub(crate) struct Segment {
    /// The name without `r#`.
    pub name: String,
    /// Its generic arguments.
    pub args: PathArgs,
}

/// The arguments of a path segment.
#[derive(Debug)]
pub(crate) enum PathArgs {
    /// None.
    None,
    /// `<…>`.
    Angle(Vec<GenericArg>),
    /// `(A) -> B`, as in `Fn(A) -> B`.
    Parenthesized,
}

/// One generic argument.
#[derive(Debug)]
pub(crate) enum GenericArg {
    /// A type.
    Type(TypeExpr),
    /// A lifetime.
    Lifetime,
    /// A const, an associated type or a constraint: its text.
    Other(String),
}

impl PathArgs {
    /// Whether there are no arguments (`T` or `T<>`), as `syn` counts it.
    pub fn is_empty(&self) -> bool {
        match self {
            PathArgs::None => true,
            PathArgs::Angle(a) => a.is_empty(),
            PathArgs::Parenthesized => false,
        }
    }
}

impl TypePath {
    /// Whether the path is the bare name `name`.
    pub fn is_ident(&self, name: &str) -> bool {
        let [segment] = self.segments.as_slice() else {
            return false;
        };
        !self.leading_colon && matches!(segment.args, PathArgs::None) && segment.name == name
    }
}

/// Serde attributes as read: an attribute that cannot be read is an error reported only if a
/// stage uses the item, as when it was read from the syntax tree.
#[derive(Debug)]
pub(crate) struct Serde(std::result::Result<SerdeAttrs, (Location, String)>);

impl Serde {
    /// The attributes, or the error of reading them.
    pub fn get(&self) -> Result<&SerdeAttrs> {
        self.0
            .as_ref()
            .map_err(|(loc, msg)| Error::at(loc.clone(), msg.clone()))
    }

    /// The attributes, if they could be read.
    pub fn ok(&self) -> Option<&SerdeAttrs> {
        self.0.as_ref().ok()
    }
}

/// The types and imports of one file, or of one piece of a large file, before they are put
/// together ([`FileTypes::append`], [`PackageTypes::assemble`]).
#[derive(Debug, Default)]
pub(crate) struct FileTypes {
    /// The structs and enums, in order (their `file` is the index given to [`FileTypes::of`]).
    pub defs: Vec<TypeDef>,
    /// The `use` declarations.
    pub imports: Imports,
}

impl FileTypes {
    /// The types of a parsed file (or piece), the `index`-th of its package.
    pub fn of(file: &SourceFile, index: usize) -> FileTypes {
        let mut out = FileTypes::default();
        for item in &file.ast.items {
            let (attrs, vis, kw, ident, generics) = match item {
                syn::Item::Struct(s) => {
                    (&s.attrs, &s.vis, s.struct_token.span, &s.ident, &s.generics)
                }
                syn::Item::Enum(e) => (&e.attrs, &e.vis, e.enum_token.span, &e.ident, &e.generics),
                syn::Item::Use(u) => {
                    collect_use(&u.tree, &mut Vec::new(), &mut out.imports);
                    continue;
                }
                _ => continue,
            };
            let mut spans = vis_span(vis);
            spans.push(kw);
            let body = match item {
                syn::Item::Enum(e) => Body::Enum(
                    e.variants
                        .iter()
                        .map(|v| Variant {
                            written: v.ident.to_string(),
                            name: v.ident.unraw().to_string(),
                            pos: Pos::of_span(v.ident.span()),
                            serde: serde_attrs(&v.attrs, &file.path),
                            fields: fields(&v.fields, file),
                        })
                        .collect(),
                ),
                syn::Item::Struct(s) => Body::Struct(fields(&s.fields, file)),
                _ => continue,
            };
            out.defs.push(TypeDef {
                name: ident.to_string(),
                file: index,
                pos: Pos::of_span(ident.span()),
                tags: tags_of(file, attrs, &spans, ident.span()),
                doc: doc_text(attrs),
                serde: serde_attrs(attrs, &file.path),
                generics: Generics {
                    count: generics.params.len(),
                    type_params: generics
                        .type_params()
                        .map(|p| p.ident.to_string())
                        .collect(),
                    has_const: generics.const_params().next().is_some(),
                },
                body,
            });
        }
        out
    }

    /// Adds the types of the piece of the same file that follows this one.
    pub fn append(&mut self, next: FileTypes) {
        self.defs.extend(next.defs);
        // Later imports of a name replace earlier ones, as in one pass over the file.
        self.imports.names.extend(next.imports.names);
        self.imports.globs.extend(next.imports.globs);
    }
}

impl PackageTypes {
    /// The table of a scanned package's types.
    pub fn new(src: &PackageSource) -> PackageTypes {
        let files = src
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.clone(), FileTypes::of(f, i)))
            .collect();
        let package_tags = src
            .mod_file()
            .map(|m| tags::package_tags(&m.path, &m.text))
            .unwrap_or_default();
        PackageTypes::assemble(files, package_tags)
    }

    /// The table of a package from its files' types, in file order (`files[i]` holds the
    /// types whose `file` is `i`), and its package tags.
    pub fn assemble(files: Vec<(PathBuf, FileTypes)>, package_tags: Vec<Tag>) -> PackageTypes {
        let mut types = BTreeMap::new();
        let mut infos = Vec::with_capacity(files.len());
        for (path, file) in files {
            for def in file.defs {
                types.insert(def.name.clone(), def);
            }
            infos.push(FileInfo {
                is_mod: path.file_stem().is_some_and(|s| s == "mod"),
                path,
                imports: file.imports,
            });
        }
        PackageTypes {
            types,
            files: infos,
            package_tags,
        }
    }

    /// The file `def` is declared in.
    pub fn file(&self, def: &TypeDef) -> &FileInfo {
        &self.files[def.file]
    }
}

fn fields(fields: &syn::Fields, file: &SourceFile) -> Fields {
    let field = |f: &syn::Field| {
        let name = f.ident.as_ref().map_or_else(|| f.ty.span(), |i| i.span());
        Field {
            ident: f.ident.as_ref().map(|i| i.unraw().to_string()),
            pos: Pos::of_span(name),
            tags: tags_of(file, &f.attrs, &vis_span(&f.vis), name),
            doc: doc_text(&f.attrs),
            serde: serde_attrs(&f.attrs, &file.path),
            ty: type_expr(&f.ty),
        }
    };
    match fields {
        syn::Fields::Named(n) => Fields::Named(n.named.iter().map(field).collect()),
        syn::Fields::Unnamed(u) => Fields::Unnamed(u.unnamed.iter().map(field).collect()),
        syn::Fields::Unit => Fields::Unit,
    }
}

fn type_expr(ty: &syn::Type) -> TypeExpr {
    match ty {
        syn::Type::Paren(p) => type_expr(&p.elem),
        syn::Type::Group(g) => type_expr(&g.elem),
        syn::Type::Reference(r) => TypeExpr::Reference {
            elem: Box::new(type_expr(&r.elem)),
            text: type_text(ty),
        },
        syn::Type::Array(a) => TypeExpr::Array {
            elem: Box::new(type_expr(&a.elem)),
            len: match &a.len {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => i.base10_parse::<i64>().ok(),
                _ => None,
            },
        },
        syn::Type::Slice(s) => TypeExpr::Slice(Box::new(type_expr(&s.elem))),
        syn::Type::Tuple(t) => TypeExpr::Tuple {
            unit: t.elems.is_empty(),
            text: type_text(t),
        },
        syn::Type::Path(p) if p.qself.is_none() => TypeExpr::Path(TypePath {
            leading_colon: p.path.leading_colon.is_some(),
            segments: p
                .path
                .segments
                .iter()
                .map(|s| Segment {
                    name: s.ident.unraw().to_string(),
                    args: match &s.arguments {
                        syn::PathArguments::None => PathArgs::None,
                        syn::PathArguments::AngleBracketed(a) => PathArgs::Angle(
                            a.args
                                .iter()
                                .map(|arg| match arg {
                                    syn::GenericArgument::Type(t) => GenericArg::Type(type_expr(t)),
                                    syn::GenericArgument::Lifetime(_) => GenericArg::Lifetime,
                                    other => GenericArg::Other(type_text(other)),
                                })
                                .collect(),
                        ),
                        syn::PathArguments::Parenthesized(_) => PathArgs::Parenthesized,
                    },
                })
                .collect(),
            text: type_text(&p.path),
        }),
        other => TypeExpr::Other(type_text(other)),
    }
}

/// Tokens as a short type text for messages (`Vec<Foo>`, `a::B`).
fn type_text(ty: &impl ToTokens) -> String {
    ty.to_token_stream()
        .to_string()
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace("& ", "&")
}

fn collect_use(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Imports) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.unraw().to_string());
            collect_use(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.unraw().to_string();
            if name == "self" {
                if let Some(last) = prefix.last() {
                    out.names.insert(last.clone(), prefix.clone());
                }
            } else {
                let mut full = prefix.clone();
                full.push(name.clone());
                out.names.insert(name, full);
            }
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix.clone();
            let name = r.ident.unraw().to_string();
            if name != "self" {
                full.push(name);
            }
            out.names.insert(r.rename.unraw().to_string(), full);
        }
        syn::UseTree::Glob(_) => out.globs.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_use(t, prefix, out);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Serde attributes.

/// A `rename_all` rule, as serde applies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenameRule {
    /// `lowercase`
    Lower,
    /// `UPPERCASE`
    Upper,
    /// `PascalCase`
    Pascal,
    /// `camelCase`
    Camel,
    /// `snake_case`
    Snake,
    /// `SCREAMING_SNAKE_CASE`
    ScreamingSnake,
    /// `kebab-case`
    Kebab,
    /// `SCREAMING-KEBAB-CASE`
    ScreamingKebab,
}

impl RenameRule {
    /// Parses serde's spelling of a rule.
    pub fn parse(s: &str) -> Option<RenameRule> {
        Some(match s {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// The wire name of a (snake_case) field.
    pub fn field(self, f: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => f.to_string(),
            RenameRule::Upper | RenameRule::ScreamingSnake => f.to_ascii_uppercase(),
            RenameRule::Pascal | RenameRule::Camel => {
                let mut pascal = String::new();
                let mut upper = true;
                for c in f.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        pascal.push(c.to_ascii_uppercase());
                        upper = false;
                    } else {
                        pascal.push(c);
                    }
                }
                if self == RenameRule::Pascal {
                    pascal
                } else {
                    let mut c = pascal.chars();
                    c.next()
                        .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
                        .unwrap_or_default()
                }
            }
            RenameRule::Kebab => f.replace('_', "-"),
            RenameRule::ScreamingKebab => f.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// The wire name of a (PascalCase) variant.
    pub fn variant(self, v: &str) -> String {
        let snake = || {
            let mut out = String::new();
            for (i, c) in v.chars().enumerate() {
                if i > 0 && c.is_uppercase() {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            }
            out
        };
        match self {
            RenameRule::Pascal => v.to_string(),
            RenameRule::Lower => v.to_ascii_lowercase(),
            RenameRule::Upper => v.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut c = v.chars();
                match c.next() {
                    Some(f) => f.to_ascii_lowercase().to_string() + c.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Snake => snake(),
            RenameRule::ScreamingSnake => snake().to_ascii_uppercase(),
            RenameRule::Kebab => snake().replace('_', "-"),
            RenameRule::ScreamingKebab => snake().to_ascii_uppercase().replace('_', "-"),
        }
    }
}

/// The serde attributes of an item, field or variant that change its serialized form.
#[derive(Debug, Default)]
pub(crate) struct SerdeAttrs {
    pub(crate) rename: Option<String>,
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) rename_all_fields: Option<RenameRule>,
    pub(crate) skip: bool,
    pub(crate) skip_serializing: bool,
    pub(crate) skip_deserializing: bool,
    pub(crate) skip_serializing_if: bool,
    pub(crate) default: bool,
    pub(crate) flatten: bool,
    pub(crate) transparent: bool,
    pub(crate) tag: Option<String>,
    pub(crate) content: Option<String>,
    pub(crate) untagged: bool,
    /// A serde attribute that changes the representation in a way the schema cannot follow.
    pub(crate) unsupported: Option<String>,
}

fn skip_meta(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|m| skip_meta(&m))?;
    }
    Ok(())
}

/// `key = "x"` or `key(serialize = "x", deserialize = "y")`: the serialize side.
fn ser_string(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Option<String>> {
    if meta.input.peek(syn::Token![=]) {
        let s: syn::LitStr = meta.value()?.parse()?;
        return Ok(Some(s.value()));
    }
    let mut out = None;
    meta.parse_nested_meta(|m| {
        if m.path.is_ident("serialize") {
            let s: syn::LitStr = m.value()?.parse()?;
            out = Some(s.value());
            Ok(())
        } else {
            skip_meta(&m)
        }
    })?;
    Ok(out)
}

fn rule(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Option<RenameRule>> {
    match ser_string(meta)? {
        Some(s) => RenameRule::parse(&s)
            .map(Some)
            .ok_or_else(|| meta.error(format!("unknown rename rule {s:?}"))),
        None => Ok(None),
    }
}

fn serde_attrs(attrs: &[syn::Attribute], path: &Path) -> Serde {
    let mut out = SerdeAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let read = attr
            .parse_nested_meta(|meta| {
                let key = meta
                    .path
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_default();
                match key.as_str() {
                    "rename" => out.rename = ser_string(&meta)?,
                    "rename_all" => out.rename_all = rule(&meta)?,
                    "rename_all_fields" => out.rename_all_fields = rule(&meta)?,
                    "skip" => out.skip = true,
                    "skip_serializing" => out.skip_serializing = true,
                    "skip_deserializing" => out.skip_deserializing = true,
                    "skip_serializing_if" => {
                        skip_meta(&meta)?;
                        out.skip_serializing_if = true;
                    }
                    "default" => {
                        skip_meta(&meta)?;
                        out.default = true;
                    }
                    "flatten" => out.flatten = true,
                    "transparent" => out.transparent = true,
                    "untagged" => out.untagged = true,
                    "tag" => {
                        let s: syn::LitStr = meta.value()?.parse()?;
                        out.tag = Some(s.value());
                    }
                    "content" => {
                        let s: syn::LitStr = meta.value()?.parse()?;
                        out.content = Some(s.value());
                    }
                    "with" | "serialize_with" | "deserialize_with" | "from" | "into"
                    | "try_from" | "remote" => {
                        skip_meta(&meta)?;
                        out.unsupported.get_or_insert(key);
                    }
                    _ => skip_meta(&meta)?,
                }
                Ok(())
            })
            .map_err(|e| {
                (
                    Location::new(path, Pos::of_span(e.span())),
                    format!("cannot read #[serde(…)]: {e}"),
                )
            });
        if let Err(e) = read {
            return Serde(Err(e));
        }
    }
    Serde(Ok(out))
}

// ---------------------------------------------------------------------------------------------
// Docs and tags.

/// The doc comment of an item as a description: one leading space per line removed, tag lines
/// (`+key…`) dropped, blank lines at either end trimmed. `None` when nothing is left.
fn doc_text(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &a.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            for l in s.value().split('\n') {
                lines.push(l.strip_prefix(' ').unwrap_or(l).trim_end().to_string());
            }
        }
    }
    lines.retain(|l| {
        let t = l.trim_start();
        !(t.starts_with('+') && t.len() > 1 && !t[1..].starts_with(char::is_whitespace))
    });
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    // Collapse runs of blank lines left where tag lines were removed.
    lines.dedup_by(|a, b| a.is_empty() && b.is_empty());
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The span of a written visibility (`pub`, `pub(crate)`); none for an inherited one, whose
/// span is the call site, not a place in the file.
fn vis_span(vis: &syn::Visibility) -> Vec<proc_macro2::Span> {
    match vis {
        syn::Visibility::Inherited => Vec::new(),
        v => vec![v.span()],
    }
}

fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

/// The tags of an item or field whose attributes are `attrs` and whose name is at `name`.
fn tags_of(
    file: &SourceFile,
    attrs: &[syn::Attribute],
    other: &[proc_macro2::Span],
    name: proc_macro2::Span,
) -> Vec<Tag> {
    let name_line = line_of(name);
    let first_line = attrs
        .iter()
        .map(|a| line_of(a.pound_token.span))
        .chain(other.iter().map(|s| line_of(*s)))
        .chain([name_line])
        .filter(|&l| l > 0)
        .min()
        .unwrap_or(name_line);
    tags::item_tags(&file.path, &file.text, &file.lines, first_line, name_line)
}

/// The module path of k8s-openapi's `meta/v1` types.
pub(crate) const K8S_META_V1: &[&str] =
    &["k8s_openapi", "apimachinery", "pkg", "apis", "meta", "v1"];

/// Rewrites re-exports to the k8s-openapi path: `kube::core::ObjectMeta`,
/// `kube_codegen_runtime::k8s_openapi::…`.
pub(crate) fn normalize(mut full: Vec<String>) -> Vec<String> {
    if full.first().is_some_and(|f| f == "kube_codegen_runtime")
        && full
            .get(1)
            .is_some_and(|s| s == "k8s_openapi" || s == "serde_json" || s == "kube")
    {
        full.remove(0);
    }
    if full.len() == 3
        && full[0] == "kube"
        && (full[1] == "api" || full[1] == "core")
        && full[2] == "ObjectMeta"
    {
        full = K8S_META_V1
            .iter()
            .map(|s| s.to_string())
            .chain(["ObjectMeta".to_string()])
            .collect();
    }
    full
}
