//! The apply-configuration stage (applyconfiguration-gen's analysis): from a package's type
//! table (plain data built beside the model), the types that get an apply configuration and the shape of each field, as plain data for
//! the emitter (`emit/applyconfiguration.rs`).
//!
//! Roots are the `+genclient` kinds that keep `apply` or `applyStatus`, and the package types
//! named as the input of an `apply` extension (`+genclient:method=…,verb=apply,input=T`). Every
//! struct with named fields of the package that a root reaches gets an apply configuration too.
//! A field's type maps as follows (every field of an apply configuration is optional):
//!
//! | field type | apply configuration |
//! | --- | --- |
//! | a struct of the package | its `<Type>ApplyConfiguration` |
//! | k8s-openapi `ObjectMeta`, `OwnerReference`, `Condition`, `LabelSelector`, `LabelSelectorRequirement` | the runtime's `apply::meta` configurations |
//! | `Vec<T>`, `VecDeque<T>`, sets | `Vec` of `T`'s configuration (setters append) |
//! | `BTreeMap<K, V>`, `HashMap<K, V>` | `BTreeMap` of `V`'s configuration (setters merge) |
//! | `Option<T>`, `Box<T>` | `T`'s configuration (boxed when the field is) |
//! | a type an external rule maps (`--external-applyconfigurations`: k8s-openapi's `PodTemplateSpec` → `kube_codegen_kubernetes`' `PodTemplateSpecApplyConfiguration`) | the mapped configuration |
//! | anything else (scalars, enums, newtypes, generic structs, `Time`, `Quantity`, other k8s-openapi types) | the type itself |
//!
//! Serde's `rename`, `rename_all`, `skip` and `flatten` are followed, so the configuration
//! serializes under the object's field names. Types the generator cannot follow (`#[serde(with)]`,
//! tuples, references) are errors naming the field and its `file:line:col`.

use std::collections::BTreeMap;

use crate::config::ExternalRule;
use crate::error::{Error, Location, Pos, Result};
use crate::model::types::{
    Body, Fields, FileInfo, GenericArg, K8S_META_V1, PackageTypes, PathArgs, RenameRule, TypeExpr,
    TypePath, normalize,
};
use crate::model::{ExtVerb, Package, TypeRef, Verb};

/// The apply configurations of every package of a run, by `(group folder, version)`.
pub(crate) type AcPackages = BTreeMap<(String, String), AcPackage>;

/// The apply configurations of one package.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct AcPackage {
    /// Every type that gets one, sorted by name.
    pub types: Vec<AcType>,
}

/// A type that gets an apply configuration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AcType {
    /// The type's name (`MydemoSpec`).
    pub name: String,
    /// Its doc comment (tag lines removed).
    pub doc: Option<String>,
    /// Whether it is a `+genclient` kind (it gets apiVersion and kind, a constructor, the
    /// `ApplyConfiguration` impl and `extract_*` functions).
    pub kind: Option<AcKind>,
    /// The serialized fields, in declaration order.
    pub fields: Vec<AcField>,
}

/// What a kind's configuration knows of its kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AcKind {
    /// Namespaced (the constructor takes a namespace).
    pub namespaced: bool,
    /// Whether it has a status subresource (`extract_<kind>_status`).
    pub has_status: bool,
    /// The Rust name of the `metadata` field.
    pub metadata_field: String,
}

/// One field of an apply configuration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AcField {
    /// The Rust field name (raw identifiers unescaped: `type`).
    pub rust: String,
    /// The serialized name.
    pub json: String,
    /// The field's doc comment.
    pub doc: Option<String>,
    /// Its type in the configuration.
    pub ty: AcTy,
    /// `#[serde(flatten)]`: the fields of a package struct serialized inline.
    pub flatten: bool,
}

/// Where a type used as-is lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathRoot {
    /// A prelude or primitive name (`String`, `i32`, `Vec`): written bare.
    Prelude,
    /// A type of this package: `<apis module>::<group>::<version>::…`.
    Package,
    /// Through the runtime crate's re-exports: `<runtime>::k8s_openapi::…`,
    /// `<runtime>::serde_json::…`.
    Runtime,
    /// `crate::…`.
    Crate,
    /// `::a::b` (another crate, `std`).
    Global,
}

/// The type of a configuration field (or of an element inside one).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AcTy {
    /// A type used as it is (scalars, enums, newtypes, external types).
    Path {
        /// Where the path starts.
        root: PathRoot,
        /// Its segments after the root.
        segments: Vec<String>,
        /// Generic arguments of the last segment.
        args: Vec<AcTy>,
    },
    /// The configuration of a package struct (`<name>ApplyConfiguration`).
    Local(String),
    /// A runtime `apply::meta` configuration (`ObjectMeta` → `ObjectMetaApplyConfiguration`).
    Meta(&'static str),
    /// The configuration an external rule maps a type to: its full Rust path.
    External(String),
    /// A list.
    List(Box<AcTy>),
    /// A map with string-like keys.
    Map(Box<AcTy>, Box<AcTy>),
    /// A boxed value.
    Boxed(Box<AcTy>),
    /// An optional element inside a list or map.
    Optional(Box<AcTy>),
}

impl AcTy {
    fn prelude(name: &str) -> AcTy {
        AcTy::Path {
            root: PathRoot::Prelude,
            segments: vec![name.to_string()],
            args: Vec::new(),
        }
    }
}

/// k8s-openapi `meta/v1` types with a runtime apply configuration.
const META_TYPES: &[&str] = &[
    "ObjectMeta",
    "OwnerReference",
    "Condition",
    "LabelSelector",
    "LabelSelectorRequirement",
];

/// Primitive and prelude names written bare.
const PRELUDE: &[&str] = &[
    "bool", "char", "str", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
    "u128", "usize", "f32", "f64", "String",
];

/// Whether `verb` makes a kind a root.
fn is_apply(v: &Verb) -> bool {
    matches!(v, Verb::Apply | Verb::ApplyStatus)
}

/// The apply configurations of `pkg`, whose types are `types`; `externals` map types of other
/// crates and packages to their configurations.
pub(crate) fn package(
    types: &PackageTypes,
    pkg: &Package,
    externals: &[ExternalRule],
) -> Result<AcPackage> {
    let mut walk = Walk {
        types,
        externals,
        done: BTreeMap::new(),
        queue: Vec::new(),
        kinds: BTreeMap::new(),
    };
    for kind in &pkg.kinds {
        if !kind.verbs.iter().any(is_apply)
            && !kind.methods.iter().any(|m| m.verb == ExtVerb::Apply)
        {
            continue;
        }
        if kind.verbs.iter().any(is_apply) {
            walk.want(&kind.name, Some(kind), &kind.location)?;
        }
        for m in kind.methods.iter().filter(|m| m.verb == ExtVerb::Apply) {
            match &m.input {
                TypeRef::Kind => walk.want(&kind.name, Some(kind), &kind.location)?,
                TypeRef::Local(n) => walk.want(n, None, &kind.location)?,
                TypeRef::Path(_) => {}
            }
        }
    }
    // `+kube-codegen:applyconfiguration=package` (as deepcopy-gen's `+k8s:deepcopy-gen=package`):
    // every struct of the package is a root, for packages whose structs other packages'
    // configurations use (the built-in clientset's input).
    if every_type(types)? {
        // Every kind is a kind, whatever its verbs (client-go has `SelfSubjectReview(name)` too).
        for kind in &pkg.kinds {
            walk.want(&kind.name, Some(kind), &kind.location)?;
        }
        // Kinds' list types excepted: nothing applies a list.
        let lists: Vec<&str> = pkg
            .kinds
            .iter()
            .filter_map(|k| k.list_type.as_deref())
            .collect();
        let names: Vec<String> = types
            .types
            .keys()
            .filter(|n| !lists.contains(&n.as_str()))
            .cloned()
            .collect();
        for name in names {
            if walk.is_config_struct(&name) && !walk.done.contains_key(&name) {
                walk.done.insert(name.clone(), None);
                walk.queue.push(name);
            }
        }
    }
    while let Some(name) = walk.queue.pop() {
        let kind = walk.kinds.get(&name).cloned();
        let t = walk.analyze(&name, kind.as_ref())?;
        walk.done.insert(name, Some(t));
    }
    let types = walk.done.into_values().flatten().collect();
    Ok(AcPackage { types })
}

/// The package tag that makes every struct of a package a root.
pub(crate) const PACKAGE_TAG: &str = "kube-codegen:applyconfiguration";

/// Whether the package carries `+kube-codegen:applyconfiguration=package`; any other value is
/// an error naming the tag.
fn every_type(types: &PackageTypes) -> Result<bool> {
    let mut every = false;
    for t in types.package_tags.iter().filter(|t| t.key == PACKAGE_TAG) {
        match t.value.as_deref() {
            Some("package") => every = true,
            other => {
                return Err(Error::at(
                    t.location.clone(),
                    format!(
                        "+{PACKAGE_TAG}={}: the only value is `package` (every struct of the package gets an apply configuration)",
                        other.unwrap_or("")
                    ),
                ));
            }
        }
    }
    Ok(every)
}

struct Walk<'p> {
    types: &'p PackageTypes,
    externals: &'p [ExternalRule],
    /// Types queued or analyzed (`None` while queued).
    done: BTreeMap<String, Option<AcType>>,
    queue: Vec<String>,
    /// The roots that are kinds.
    kinds: BTreeMap<String, AcKind>,
}

/// Where a field is, for errors.
fn field_err(file: &FileInfo, pos: Pos, what: &str, msg: String) -> Error {
    Error::at(
        Location::new(&file.path, pos),
        format!("apply configuration of {what}: {msg}"),
    )
}

impl Walk<'_> {
    /// Queues the package type `name` as a root (a kind when `kind` is given). Every root is
    /// wanted before the first analysis, so a kind is always analyzed as one.
    fn want(&mut self, name: &str, kind: Option<&crate::model::Kind>, at: &Location) -> Result<()> {
        if let Some(k) = kind {
            self.kinds.insert(
                name.to_string(),
                AcKind {
                    namespaced: k.scope == crate::model::Scope::Namespaced,
                    has_status: k.has_status,
                    metadata_field: String::new(),
                },
            );
        }
        if self.done.contains_key(name) {
            return Ok(());
        }
        if !self.is_config_struct(name) {
            return Err(Error::at(
                at.clone(),
                format!(
                    "apply configuration: `{name}` must be a non-generic struct with named fields declared in this package"
                ),
            ));
        }
        self.done.insert(name.to_string(), None);
        self.queue.push(name.to_string());
        Ok(())
    }

    /// Whether the package type `name` gets a configuration of its own (a struct with named
    /// fields, not transparent, not generic).
    fn is_config_struct(&self, name: &str) -> bool {
        let Some(item) = self.types.types.get(name) else {
            return false;
        };
        let transparent = item.serde.ok().is_some_and(|a| a.transparent);
        matches!(item.body, Body::Struct(Fields::Named(_)))
            && !transparent
            && item.generics.count == 0
    }

    fn analyze(&mut self, name: &str, kind: Option<&AcKind>) -> Result<AcType> {
        let Some(item) = self.types.types.get(name) else {
            return Err(Error::file(
                "",
                format!("internal error: type {name} not found"),
            ));
        };
        let file = self.types.file(item);
        let Body::Struct(body) = &item.body else {
            return Err(Error::file(
                &file.path,
                format!("internal error: {name} is not a struct"),
            ));
        };
        let what = format!("`{name}`");
        if item.generics.count != 0 {
            return Err(field_err(
                file,
                item.pos,
                &what,
                "generic types are not supported".into(),
            ));
        }
        let attrs = item.serde.get()?;
        if let Some(u) = &attrs.unsupported {
            return Err(field_err(
                file,
                item.pos,
                &what,
                format!(
                    "#[serde({u})] changes the serialized form in a way the generator cannot follow"
                ),
            ));
        }
        let Fields::Named(named) = body else {
            return Err(field_err(
                file,
                item.pos,
                &what,
                "only structs with named fields get apply configurations".into(),
            ));
        };
        let mut fields = Vec::new();
        let mut metadata_field = None;
        for f in named {
            let Some(rust) = f.ident.clone() else {
                continue;
            };
            let fa = f.serde.get()?;
            let fwhat = format!("field `{name}.{rust}`");
            if fa.skip || fa.skip_serializing {
                continue;
            }
            if let Some(u) = &fa.unsupported {
                return Err(field_err(
                    file,
                    f.pos,
                    &fwhat,
                    format!(
                        "#[serde({u})] changes the serialized form in a way the generator cannot follow"
                    ),
                ));
            }
            let json = match &fa.rename {
                Some(r) => r.clone(),
                None => attrs
                    .rename_all
                    .map_or_else(|| rust.clone(), |r: RenameRule| r.field(&rust)),
            };
            if kind.is_some() && (json == "apiVersion" || json == "kind") {
                continue;
            }
            let ty = self.field_type(&f.ty, file, f.pos, &fwhat)?;
            let ty = match ty {
                AcTy::Optional(inner) => *inner,
                other => other,
            };
            if fa.flatten {
                match &ty {
                    AcTy::Local(_) | AcTy::External(_) | AcTy::Map(..) => {}
                    _ => {
                        return Err(field_err(
                            file,
                            f.pos,
                            &fwhat,
                            "#[serde(flatten)] is supported for package structs and maps only"
                                .into(),
                        ));
                    }
                }
            }
            if json == "metadata" && ty == AcTy::Meta("ObjectMeta") {
                metadata_field = Some(rust.clone());
            }
            fields.push(AcField {
                rust,
                json,
                doc: f.doc.as_deref().map(copied_doc),
                ty,
                flatten: fa.flatten,
            });
        }
        let kind = match kind {
            None => None,
            Some(k) => {
                let Some(metadata_field) = metadata_field else {
                    return Err(field_err(
                        file,
                        item.pos,
                        &what,
                        "a kind needs a `metadata: ObjectMeta` field".into(),
                    ));
                };
                Some(AcKind {
                    metadata_field,
                    ..k.clone()
                })
            }
        };
        Ok(AcType {
            name: name.to_string(),
            doc: item.doc.as_deref().map(copied_doc),
            kind,
            fields,
        })
    }

    fn field_type(&mut self, ty: &TypeExpr, file: &FileInfo, pos: Pos, what: &str) -> Result<AcTy> {
        let err = |msg: String| field_err(file, pos, what, msg);
        match ty {
            TypeExpr::Path(p) => self.path_type(p, file, pos, what),
            // Fixed-size arrays and slices serialize as JSON arrays: a list.
            TypeExpr::Array { elem, .. } | TypeExpr::Slice(elem) => Ok(AcTy::List(Box::new(
                self.field_type(elem, file, pos, what)?,
            ))),
            TypeExpr::Tuple { text, .. } => Err(err(format!(
                "the tuple `{text}` serializes as an array of mixed types, which an apply configuration cannot describe; use a struct"
            ))),
            TypeExpr::Reference { text, .. } | TypeExpr::Other(text) => Err(err(format!(
                "type `{text}` is not supported (use a named type)"
            ))),
        }
    }

    fn path_type(
        &mut self,
        path: &TypePath,
        file: &FileInfo,
        pos: Pos,
        what: &str,
    ) -> Result<AcTy> {
        let err = |msg: String| field_err(file, pos, what, msg);
        let Some(last) = path.segments.last() else {
            return Err(err("empty type path".into()));
        };
        for seg in path.segments.iter().take(path.segments.len() - 1) {
            if !seg.args.is_empty() {
                return Err(err(format!("type `{}` is not supported", path.text)));
            }
        }
        let mut args = Vec::new();
        match &last.args {
            PathArgs::None => {}
            PathArgs::Angle(a) => {
                for arg in a {
                    match arg {
                        GenericArg::Type(t) => args.push(self.field_type(t, file, pos, what)?),
                        GenericArg::Lifetime => {}
                        GenericArg::Other(text) => {
                            return Err(err(format!("generic argument `{text}` is not supported")));
                        }
                    }
                }
            }
            PathArgs::Parenthesized => {
                return Err(err(format!(
                    "function type `{}` cannot be serialized",
                    path.text
                )));
            }
        }
        let names: Vec<String> = path.segments.iter().map(|s| s.name.clone()).collect();
        let (root, full) = self
            .resolve(&names, path.leading_colon, file)
            .map_err(err)?;
        let last = full.last().cloned().unwrap_or_default();
        let arity = |n: usize, args: &[AcTy]| -> Result<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(err(format!(
                    "`{}`: expected {n} generic argument(s), found {}",
                    path.text,
                    args.len()
                )))
            }
        };
        let is_std = root == PathRoot::Prelude
            || (root == PathRoot::Global && matches!(full[0].as_str(), "std" | "core" | "alloc"));
        if is_std {
            match last.as_str() {
                "Option" => {
                    arity(1, &args)?;
                    return Ok(AcTy::Optional(Box::new(args.remove(0))));
                }
                "Box" => {
                    arity(1, &args)?;
                    return Ok(AcTy::Boxed(Box::new(strip_optional(args.remove(0)))));
                }
                "Vec" | "VecDeque" | "BTreeSet" | "HashSet" => {
                    arity(1, &args)?;
                    return Ok(AcTy::List(Box::new(args.remove(0))));
                }
                "BTreeMap" | "HashMap" => {
                    arity(2, &args)?;
                    let value = args.pop().unwrap_or(AcTy::prelude("String"));
                    let key = args.pop().unwrap_or(AcTy::prelude("String"));
                    return Ok(AcTy::Map(Box::new(key), Box::new(value)));
                }
                _ => {}
            }
        }
        if args.is_empty()
            && let Some(ac) = self.external(root, &full)
        {
            return Ok(AcTy::External(ac));
        }
        match root {
            PathRoot::Package => {
                // A generic struct of the package is used whole, like an enum.
                if args.is_empty() && self.is_config_struct(&last) {
                    if !self.done.contains_key(&last) {
                        self.done.insert(last.clone(), None);
                        self.queue.push(last.clone());
                    }
                    return Ok(AcTy::Local(last));
                }
                Ok(AcTy::Path {
                    root,
                    segments: vec![last],
                    args,
                })
            }
            PathRoot::Runtime
                if full.len() == K8S_META_V1.len() + 1
                    && full[..K8S_META_V1.len()] == *K8S_META_V1
                    && args.is_empty() =>
            {
                match META_TYPES.iter().find(|m| **m == last) {
                    Some(m) => Ok(AcTy::Meta(m)),
                    None => Ok(AcTy::Path {
                        root,
                        segments: full,
                        args,
                    }),
                }
            }
            _ => Ok(AcTy::Path {
                root,
                segments: if root == PathRoot::Prelude {
                    vec![last]
                } else {
                    full
                },
                args,
            }),
        }
    }

    /// The configuration an external rule gives the type at `full` (rooted at `root`): an
    /// exact type's rule first, then the rule of the longest module it is below.
    fn external(&self, root: PathRoot, full: &[String]) -> Option<String> {
        let key: Vec<&str> = match root {
            PathRoot::Runtime | PathRoot::Global => full.iter().map(String::as_str).collect(),
            PathRoot::Crate => std::iter::once("crate")
                .chain(full.iter().map(String::as_str))
                .collect(),
            PathRoot::Prelude | PathRoot::Package => return None,
        };
        let (name, _) = key.split_last()?;
        if let Some(r) = self.externals.iter().find(|r| !r.module && r.from == key) {
            return Some(if r.is_type {
                r.to.clone()
            } else {
                format!("{}::{name}ApplyConfiguration", r.to)
            });
        }
        let r = self
            .externals
            .iter()
            .filter(|r| r.module && key.len() > r.from.len() && r.from == key[..r.from.len()])
            .max_by_key(|r| r.from.len())?;
        let mut out = r.to.clone();
        for seg in &key[r.from.len()..key.len() - 1] {
            out.push_str("::");
            out.push_str(seg);
        }
        Some(format!("{out}::{name}ApplyConfiguration"))
    }

    /// Where the path `names` (as written in `file`) points: its root and the segments after it.
    fn resolve(
        &self,
        names: &[String],
        leading_colon: bool,
        file: &FileInfo,
    ) -> std::result::Result<(PathRoot, Vec<String>), String> {
        if leading_colon {
            return Ok(self.absolute(names.to_vec(), file));
        }
        let imports = &file.imports;
        let first = names[0].as_str();
        if names.len() == 1 {
            if self.types.types.contains_key(first) {
                return Ok((PathRoot::Package, names.to_vec()));
            }
            if let Some(full) = imports.names.get(first) {
                return Ok(self.absolute(full.clone(), file));
            }
            if PRELUDE.contains(&first) || matches!(first, "Option" | "Box" | "Vec") {
                return Ok((PathRoot::Prelude, names.to_vec()));
            }
            if let Some(glob) = imports.globs.first() {
                let mut full = glob.clone();
                full.push(first.to_string());
                return Ok(self.absolute(full, file));
            }
            return Err(format!(
                "cannot resolve type `{first}`: it is neither declared in this package nor imported by name"
            ));
        }
        let full: Vec<String> = match imports.names.get(first) {
            Some(p) if !matches!(first, "self" | "super" | "crate") => {
                p.iter().chain(names.iter().skip(1)).cloned().collect()
            }
            _ => names.to_vec(),
        };
        Ok(self.absolute(full, file))
    }

    /// Roots a full path from a `use` or a written path: `self::`/`super::` to this package's
    /// types, `crate::` kept, k8s-openapi and serde_json through the runtime, the rest global.
    fn absolute(&self, full: Vec<String>, file: &FileInfo) -> (PathRoot, Vec<String>) {
        let last = full.last().cloned().unwrap_or_default();
        match full.first().map(String::as_str) {
            Some("self" | "super") if self.types.types.contains_key(&last) => {
                (PathRoot::Package, vec![last])
            }
            Some("crate") => (PathRoot::Crate, full[1..].to_vec()),
            Some("self") if file.is_mod => (PathRoot::Package, full[1..].to_vec()),
            _ => {
                let full = normalize(full);
                match full.first().map(String::as_str) {
                    Some("k8s_openapi" | "serde_json") => (PathRoot::Runtime, full),
                    _ => (PathRoot::Global, full),
                }
            }
        }
    }
}

/// A type's or field's description ([`TypeDef::doc`](crate::model::types::TypeDef::doc)) as its apply configuration's doc:
/// intra-doc links (`` [`Mydemo`] ``, `[Mydemo]`) turned into plain code spans, since the names
/// they link are in scope in the API package, not in the generated module.
fn copied_doc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let inner = &after[..close];
        // Inside a code span (an odd number of backticks before it) a bracket is text.
        let at = text.len() - rest.len() + open;
        if text[..at].matches('`').count() % 2 == 1 {
            out.push('[');
            rest = after;
            continue;
        }
        let next = after[close + 1..].chars().next();
        let bare = inner.trim_matches('`');
        // `[x]: url` at the start of a line is a link reference definition; elsewhere
        // `[`X`]: …` is a link followed by a colon.
        let line_start = out.rsplit('\n').next().is_none_or(|l| l.trim().is_empty());
        let definition = next == Some(':') && line_start;
        let is_link = !matches!(next, Some('(' | '['))
            && !definition
            && !bare.is_empty()
            && bare
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '(' | ')' | '!'));
        if is_link {
            out.push('`');
            out.push_str(bare);
            out.push('`');
        } else {
            out.push('[');
            out.push_str(inner);
            out.push(']');
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

fn strip_optional(t: AcTy) -> AcTy {
    match t {
        AcTy::Optional(inner) => *inner,
        other => other,
    }
}

/// The package types reached, for tests.
#[cfg(test)]
fn names(p: &AcPackage) -> std::collections::BTreeSet<String> {
    p.types.iter().map(|t| t.name.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GroupVersions;
    use crate::model::{ModelOptions, build_package};
    use crate::scan::{packages, read};

    fn analyze(dir: &str, group: &str) -> AcPackage {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(dir);
        let gv = GroupVersions::parse_list(group).unwrap();
        let refs = packages(&root, &gv, false).unwrap();
        let src = read(&refs[0]).unwrap();
        let pkg = build_package(&src, &ModelOptions::default()).unwrap();
        package(&PackageTypes::new(&src), &pkg, &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn intra_doc_links_become_code_spans() {
        assert_eq!(
            copied_doc(
                "The state of a [`Mydemo`] or [Other], see [the docs](https://x) and [1, 2]."
            ),
            "The state of a `Mydemo` or `Other`, see [the docs](https://x) and [1, 2]."
        );
        // A link followed by a colon is a link; `[x]: url` opening a line is a definition.
        assert_eq!(
            copied_doc("A [`Mydemo`]: as in v1.\n[ref]: https://x"),
            "A `Mydemo`: as in v1.\n[ref]: https://x"
        );
        // Brackets in a code span are left alone.
        assert_eq!(
            copied_doc("An address (`[::1]:8080`), a [`Kind`]."),
            "An address (`[::1]:8080`), a `Kind`."
        );
    }

    #[test]
    fn a_package_tagged_package_configures_every_struct_and_every_kind() {
        // The built-in clientset's input: `+kube-codegen:applyconfiguration=package`.
        let p = analyze("kubernetes/applyconfig-input", "apps:v1");
        let names = names(&p);
        for want in [
            "Deployment",
            "DeploymentSpec",
            "DeploymentStrategy",
            "RollingUpdateDeployment",
            "ControllerRevision",
        ] {
            assert!(names.contains(want), "{want} missing: {names:?}");
        }
        // Nothing applies a list.
        assert!(!names.contains("DeploymentList"), "{names:?}");
        let kind = |n: &str| {
            p.types
                .iter()
                .find(|t| t.name == n)
                .and_then(|t| t.kind.clone())
        };
        assert_eq!(
            kind("Deployment"),
            Some(AcKind {
                namespaced: true,
                has_status: true,
                metadata_field: "metadata".into()
            })
        );
        assert_eq!(kind("DeploymentSpec"), None);
        // Another package's struct stays a `crate::apis::…` path; the emitter uses that
        // package's configuration.
        let spec = p.types.iter().find(|t| t.name == "DeploymentSpec").unwrap();
        let template = spec.fields.iter().find(|f| f.json == "template").unwrap();
        assert_eq!(
            template.ty,
            AcTy::Path {
                root: PathRoot::Crate,
                segments: ["apis", "core", "v1", "PodTemplateSpec"]
                    .map(String::from)
                    .into(),
                args: Vec::new(),
            }
        );
    }

    #[test]
    fn mydemo_reaches_its_spec_and_status() {
        let p = analyze("example-crddemo/src/pkg/apis", "crddemo:v1");
        assert_eq!(
            names(&p),
            ["Mydemo", "MydemoSpec", "MydemoStatus"]
                .map(String::from)
                .into()
        );
        let mydemo = &p.types[0];
        assert_eq!(
            mydemo.kind,
            Some(AcKind {
                namespaced: true,
                has_status: true,
                metadata_field: "metadata".into()
            })
        );
        let status = p.types.iter().find(|t| t.name == "MydemoStatus").unwrap();
        let by_json: BTreeMap<&str, &AcTy> = status
            .fields
            .iter()
            .map(|f| (f.json.as_str(), &f.ty))
            .collect();
        assert_eq!(
            by_json["conditions"],
            &AcTy::List(Box::new(AcTy::Meta("Condition")))
        );
        assert_eq!(by_json["observedGeneration"], &AcTy::prelude("i64"));
        assert_eq!(by_json["serviceName"], &AcTy::prelude("String"));
    }
}
