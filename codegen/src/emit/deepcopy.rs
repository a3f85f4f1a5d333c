//! The deepcopy generator: deep copy in Rust is `Clone`, and `runtime.Object` is
//! `kube::Resource`. For each package it writes `zz_generated_deepcopy.rs` with
//!
//! * `Clone` for every deep-copy-tagged type that neither derives nor implements it, and
//! * `k8s_openapi::Resource`, `Metadata` and `ListableResource` for every type tagged
//!   `+k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object`, which gives it
//!   `kube::Resource` (kind, group, version, plural, scope, metadata) through kube's blanket impl.

use super::Ctx;
use super::text::{Src, Ty};
use crate::emit::Module;
use crate::model::{CloneType, ObjectType, Package, Scope, Shape};
use crate::namer::ident;

/// Emits `zz_generated_deepcopy` for `pkg`, written as text (see [`text`](super::text)).
pub(crate) fn package(ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    let rt = ctx.rt();
    let mut src = Src::new();
    for t in &pkg.clones {
        clone_impl(&mut src, t);
    }
    for o in &pkg.objects {
        resource_impl(&mut src, &rt, pkg, o);
    }
    vec![Module::apis(
        &pkg.group_dir,
        &pkg.version,
        "zz_generated_deepcopy",
        format!(
            "Deep copy (`Clone`) and `runtime.Object` (`kube::Resource`) implementations for {}.",
            pkg.api_version()
        ),
        trim_blank_end(src.finish()),
    )]
}

/// `text` with no blank line at its end (items are each followed by one).
fn trim_blank_end(mut text: String) -> String {
    while text.ends_with("\n\n") {
        text.pop();
    }
    text
}

const CLONE: &str = "::core::clone::Clone::clone";

/// `rustfmt`'s `struct_lit_width`: the widest field list a struct literal or pattern keeps on
/// one line.
const STRUCT_LIT_WIDTH: usize = 18;

/// A struct literal `{head} {` … `}{tail}` with each field cloned from `access(field)`.
fn named_literal(
    src: &mut Src,
    head: &str,
    fields: &[String],
    access: &dyn Fn(&str) -> String,
    tail: &str,
) {
    if fields.is_empty() {
        src.line(&format!("{head} {{}}{tail}"));
        return;
    }
    src.block_then(head, tail, |s| {
        for f in fields {
            let id = ident(f).to_string();
            s.call(&format!("{id}: "), CLONE, &[&access(&id)], ",");
        }
    });
}

fn clone_impl(src: &mut Src, t: &CloneType) {
    let name = ident(&t.name).to_string();
    let lts: Vec<String> = t.lifetimes.iter().map(|l| format!("'{l}")).collect();
    let tps: Vec<String> = t.type_params.iter().map(|p| ident(p).to_string()).collect();
    let (impl_gen, ty_gen) = if lts.is_empty() && tps.is_empty() {
        (String::new(), String::new())
    } else {
        let bounded = tps.iter().map(|p| format!("{p}: ::core::clone::Clone"));
        let params: Vec<String> = lts.iter().cloned().chain(bounded).collect();
        let args: Vec<String> = lts.iter().chain(&tps).cloned().collect();
        (
            format!("<{}>", params.join(", ")),
            format!("<{}>", args.join(", ")),
        )
    };
    src.impl_for(
        &format!("{impl_gen} ::core::clone::Clone"),
        &format!("super::{name}{ty_gen}"),
        |s| {
            s.doc(&format!("A deep copy of `{}`.", t.name));
            s.line("#[inline]");
            s.block("fn clone(&self) -> Self", |s| clone_body(s, &t.shape));
        },
    );
    src.blank();
}

/// The body of `clone` for a type of this shape.
fn clone_body(src: &mut Src, shape: &Shape) {
    match shape {
        Shape::Enum(variants) if variants.is_empty() => src.line("match *self {}"),
        Shape::Enum(variants) => src.block("match self", |s| {
            for (v, shape) in variants {
                clone_arm(s, &format!("Self::{}", ident(v)), shape);
            }
        }),
        Shape::Unit => src.line("Self"),
        Shape::Named(fields) => {
            named_literal(src, "Self", fields, &|id| format!("&self.{id}"), "");
        }
        Shape::Tuple(n) => {
            let clones: Vec<String> = (0..*n).map(|i| format!("{CLONE}(&self.{i})")).collect();
            let clones: Vec<&str> = clones.iter().map(String::as_str).collect();
            src.call("", "Self", &clones, "");
        }
    }
}

/// The match arm that clones the variant `vid` (`Self::Name`) of this shape.
fn clone_arm(src: &mut Src, vid: &str, shape: &Shape) {
    match shape {
        Shape::Named(fields) => {
            let binds: Vec<String> = fields.iter().map(|f| ident(f).to_string()).collect();
            let body = binds.join(", ");
            if body.len() <= STRUCT_LIT_WIDTH {
                let head = format!("{vid} {{ {body} }} => {vid}");
                named_literal(src, &head, fields, &|id| id.to_string(), ",");
            } else {
                // The pattern's fields one per line; the literal opens on its closing line.
                src.line(&format!("{vid} {{"));
                src.indented(|s| {
                    for b in &binds {
                        s.line(&format!("{b},"));
                    }
                });
                let head = format!("}} => {vid}");
                named_literal(src, &head, fields, &|id| id.to_string(), ",");
            }
        }
        Shape::Tuple(n) => {
            let binds: Vec<String> = (0..*n).map(|i| format!("f{i}")).collect();
            let clones: Vec<String> = binds.iter().map(|b| format!("{CLONE}({b})")).collect();
            let clones: Vec<&str> = clones.iter().map(String::as_str).collect();
            src.call(
                &format!("{vid}({}) => ", binds.join(", ")),
                vid,
                &clones,
                ",",
            );
        }
        _ => src.line(&format!("{vid} => {vid},")),
    }
}

fn resource_impl(src: &mut Src, rt: &str, pkg: &Package, o: &ObjectType) {
    let name = ident(&o.name).to_string();
    let scope = match o.scope {
        Scope::Namespaced => "NamespaceResourceScope",
        Scope::Cluster => "ClusterResourceScope",
    };
    let ty = format!("super::{name}");
    src.impl_for(&format!("{rt}::k8s_openapi::Resource"), &ty, |s| {
        for (c, v) in [
            ("API_VERSION", pkg.api_version()),
            ("GROUP", pkg.group_name.clone()),
            ("KIND", o.name.clone()),
            ("VERSION", pkg.version.clone()),
            ("URL_PATH_SEGMENT", o.resource.clone()),
        ] {
            s.assign(&format!("const {c}: &'static str"), &format!("{v:?}"));
        }
        s.assign("type Scope", &format!("{rt}::k8s_openapi::{scope}"));
    });
    src.blank();
    src.impl_for(&format!("{rt}::k8s_openapi::Metadata"), &ty, |s| {
        s.assign(
            "type Ty",
            &format!("{rt}::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta"),
        );
        for (name, this, mutable) in [
            ("metadata", "&self", ""),
            ("metadata_mut", "&mut self", "mut "),
        ] {
            s.blank();
            let ret = Ty::new(format!("&{mutable}Self::Ty"));
            let head = format!("fn {name}");
            s.method("", &head, &[], &[Ty::new(this)], Some(&ret), |s| {
                s.line(&format!("&{mutable}self.metadata"))
            });
        }
    });
    src.blank();
    if let Some(l) = &o.list_kind {
        src.impl_for(&format!("{rt}::k8s_openapi::ListableResource"), &ty, |s| {
            s.assign("const LIST_KIND: &'static str", &format!("{l:?}"));
        });
        src.blank();
    }
}
