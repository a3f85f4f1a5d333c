//! The methods of a typed client: one per verb its tags keep ([`verb_method`]) and one per
//! `+genclient:method` extension ([`ext_method`]), each an `async fn` delegating to the
//! runtime's `TypedClient` in one call.

use super::super::Ctx;
use super::super::text::{self, Src, Ty};
use super::apply_configuration;
use crate::model::{ExtMethod, ExtVerb, Kind, Package, TypeRef, Verb};
use crate::namer::{ident, snake};

/// What a verb's method is written with.
pub(super) struct Names<'a> {
    /// The runtime crate.
    pub(super) rt: &'a str,
    /// The kind's type.
    pub(super) ty: &'a str,
    /// The name of a parameter holding an object of the kind.
    pub(super) obj: &'a str,
    /// The kind's apply configuration.
    pub(super) ac: &'a str,
}

/// An `async fn` of a typed client: doc, signature, and the one call it delegates to.
fn delegate(
    src: &mut Src,
    doc: &str,
    name: &str,
    generics: &[Ty],
    params: &[Ty],
    ret: Ty,
    call: (&str, &[&str]),
) {
    let mut all = vec![Ty::new("&self")];
    all.extend(params.iter().cloned());
    let head = format!("pub async fn {name}");
    let ret = Ty::generic("kube::Result", vec![ret]);
    src.method(doc, &head, generics, &all, Some(&ret), |s| {
        let (method, args) = call;
        let link = format!(".{method}({})", args.join(", "));
        let flat = format!("self.inner{link}.await");
        if flat.len() <= 60 && s.col() + flat.len() <= text::MAX_WIDTH {
            s.line(&flat);
        } else {
            // The chain one link per line; the call's arguments break as any call's do.
            s.line("self.inner");
            s.indented(|s| {
                s.call(".", method, args, "");
                s.line(".await");
            });
        }
    });
}

pub(super) fn verb_method(src: &mut Src, n: &Names<'_>, verb: Verb, kind: &Kind, list_ty: &Ty) {
    let k = &kind.name;
    let (ty, obj, rt) = (n.ty, n.obj, n.rt);
    let object = || Ty::new(ty);
    let p = |s: &str| Ty::new(s);
    let either = |t: Ty| {
        Ty::generic(
            format!("{rt}::either::Either"),
            vec![t, Ty::new("kube::core::Status")],
        )
    };
    // The object and how to write it (create, update, update_status), and the same for apply.
    let write = || {
        vec![
            p(&format!("{obj}: &{ty}")),
            p("params: &kube::api::PostParams"),
        ]
    };
    let apply = || {
        vec![
            p(&format!("{obj}: &{}", n.ac)),
            p(&format!("opts: &{rt}::apply::ApplyOptions")),
        ]
    };
    let (doc, params, ret, args): (String, Vec<Ty>, Ty, &[&str]) = match verb {
        Verb::Create => (
            format!("Creates a `{k}` (POST to the collection) and returns it as stored."),
            write(),
            object(),
            &[obj, "params"],
        ),
        Verb::Update => (
            format!(
                "Replaces a `{k}` (PUT); its `metadata.resourceVersion` makes the update \
                 conditional (409 Conflict when stale)."
            ),
            write(),
            object(),
            &[obj, "params"],
        ),
        Verb::UpdateStatus => (
            format!("Replaces the `status` subresource of a `{k}` (PUT `…/status`)."),
            write(),
            object(),
            &[obj, "params"],
        ),
        Verb::Delete => (
            format!(
                "Deletes a `{k}`: `Left` with the object while finalizers keep it, `Right` with \
                 the server's status once gone."
            ),
            vec![p("name: &str"), p("params: &kube::api::DeleteParams")],
            either(object()),
            &["name", "params"],
        ),
        Verb::DeleteCollection => (
            format!("Deletes every `{k}` that `list_params` selects."),
            vec![
                p("params: &kube::api::DeleteParams"),
                p("list_params: &kube::api::ListParams"),
            ],
            either(list_ty.clone()),
            &["params", "list_params"],
        ),
        Verb::Get => (
            format!("Reads a `{k}` by name (404 NotFound when absent)."),
            vec![p("name: &str"), p("params: &kube::api::GetParams")],
            object(),
            &["name", "params"],
        ),
        Verb::List => (
            format!("Lists `{k}` objects (label/field selectors, pagination)."),
            vec![p("params: &kube::api::ListParams")],
            list_ty.clone(),
            &["params"],
        ),
        Verb::Watch => (
            format!("Watches `{k}` objects changed after `resource_version` (`\"0\"` for any)."),
            vec![
                p("params: &kube::api::WatchParams"),
                p("resource_version: &str"),
            ],
            Ty::generic(format!("{rt}::client::WatchStream"), vec![object()]),
            &["params", "resource_version"],
        ),
        Verb::Patch => (
            format!("Patches a `{k}` (merge, JSON, strategic or apply patch)."),
            vec![
                p("name: &str"),
                p("patch: &kube::api::Patch<P>"),
                p("params: &kube::api::PatchParams"),
            ],
            object(),
            &["name", "patch", "params"],
        ),
        Verb::Apply => (
            format!(
                "Server-side applies `{obj}` (client-go's `Apply`): the fields it sets become \
                 owned by `opts.field_manager`; a field another manager owns with a different \
                 value is a 409 conflict unless `opts.force`. Returns the `{k}` as stored."
            ),
            apply(),
            object(),
            &[obj, "opts"],
        ),
        Verb::ApplyStatus => (
            format!(
                "Server-side applies the `status` of `{obj}` to the `status` subresource \
                 (client-go's `ApplyStatus`); status fields are owned apart from the main \
                 resource's. Returns the `{k}` as stored."
            ),
            apply(),
            object(),
            &[obj, "opts"],
        ),
    };
    let generics = match verb {
        Verb::Patch => vec![p(&format!(
            "P: {rt}::serde::Serialize + ::core::fmt::Debug"
        ))],
        _ => Vec::new(),
    };
    let name = verb.rust_name();
    delegate(src, &doc, name, &generics, &params, ret, (name, args));
}

pub(super) fn ext_method(src: &mut Src, ctx: &Ctx<'_>, pkg: &Package, kind: &Kind, m: &ExtMethod) {
    let name = ident(&m.rust_name).to_string();
    let result = Ty::new(ctx.type_ref_text(pkg, kind, &m.result));
    let input = ctx.type_ref_text(pkg, kind, &m.input);
    let sub = match &m.subresource {
        Some(s) => format!("Some({s:?})"),
        None => "None".to_string(),
    };
    let target = match &m.subresource {
        Some(s) => format!("the `{s}` subresource of a `{}`", kind.name),
        None => format!("a `{}`", kind.name),
    };
    let input_name = match &m.input {
        TypeRef::Kind => snake(&kind.name),
        TypeRef::Local(n) => snake(n),
        TypeRef::Path(p) => snake(p.rsplit("::").next().unwrap_or("input")),
    };
    let input_id = ident(&input_name).to_string();
    let tag = format!("(`+genclient:method={}`)", m.name);
    let rt = ctx.rt();
    let p = |s: &str| Ty::new(s);
    let object_list = |t: Ty| Ty::generic("kube::api::ObjectList", vec![t]);
    let input_param = |ty: &str| p(&format!("{input_id}: &{ty}"));
    let s = |v: &str| v.to_string();
    let named = |sub: &str| format!("Some((name, {sub:?}))");
    let post = || p("params: &kube::api::PostParams");
    let (doc, params, ret, method, args): (String, Vec<Ty>, Ty, &str, Vec<String>) =
        match (m.verb, &m.subresource) {
            (ExtVerb::Get, _) => (
                format!("Reads {target} {tag}."),
                vec![p("name: &str"), p("params: &kube::api::GetParams")],
                result,
                "get_as",
                vec![s("name"), sub.clone(), s("params")],
            ),
            (ExtVerb::List, None) => (
                format!("Lists {target} {tag}."),
                vec![p("params: &kube::api::ListParams")],
                object_list(result),
                "list_as",
                vec![s("None"), s("params")],
            ),
            (ExtVerb::List, Some(sr)) => (
                format!("Lists {target} {tag}."),
                vec![p("name: &str"), p("params: &kube::api::ListParams")],
                object_list(result),
                "list_as",
                vec![named(sr), s("params")],
            ),
            (ExtVerb::Create, None) => (
                format!("Creates {target} {tag}."),
                vec![input_param(&input), post()],
                result,
                "create_as",
                vec![s("None"), input_id.clone(), s("params")],
            ),
            (ExtVerb::Create, Some(sr)) => (
                format!("Creates {target} {tag}."),
                vec![p("name: &str"), input_param(&input), post()],
                result,
                "create_as",
                vec![named(sr), input_id.clone(), s("params")],
            ),
            (ExtVerb::Update, None) => (
                format!("Replaces {target} {tag}."),
                vec![input_param(&input), post()],
                result,
                "update_object_as",
                vec![input_id.clone(), s("params")],
            ),
            (ExtVerb::Update, Some(_)) => (
                format!("Replaces {target} {tag}."),
                vec![p("name: &str"), input_param(&input), post()],
                result,
                "update_as",
                vec![s("name"), sub.clone(), input_id.clone(), s("params")],
            ),
            (ExtVerb::Patch, _) => (
                format!("Patches {target} {tag}."),
                vec![
                    p("name: &str"),
                    p("patch: &kube::api::Patch<P>"),
                    p("params: &kube::api::PatchParams"),
                ],
                result,
                "patch_as",
                vec![s("name"), sub.clone(), s("patch"), s("params")],
            ),
            // The kind's own configuration names the object.
            (ExtVerb::Apply, None) if m.input == TypeRef::Kind => (
                format!("Server-side applies to {target} {tag}."),
                vec![
                    input_param(&apply_configuration(ctx, pkg, &kind.name)),
                    p(&format!("opts: &{rt}::apply::ApplyOptions")),
                ],
                result,
                "apply_configuration_as",
                vec![input_id.clone(), s("None"), s("opts")],
            ),
            // A package type's configuration; a type of another crate has none and is sent as
            // it is.
            (ExtVerb::Apply, _) => {
                let input_ty = match &m.input {
                    TypeRef::Local(n) => apply_configuration(ctx, pkg, n),
                    TypeRef::Kind => apply_configuration(ctx, pkg, &kind.name),
                    TypeRef::Path(_) => input.clone(),
                };
                (
                    format!("Server-side applies to {target} {tag}."),
                    vec![
                        p("name: &str"),
                        input_param(&input_ty),
                        p(&format!("opts: &{rt}::apply::ApplyOptions")),
                    ],
                    result,
                    "apply_as",
                    vec![
                        s("name"),
                        sub.clone(),
                        input_id.clone(),
                        s("&opts.patch_params()"),
                    ],
                )
            }
        };
    let generics = match m.verb {
        ExtVerb::Patch => vec![p(&format!(
            "P: {rt}::serde::Serialize + ::core::fmt::Debug"
        ))],
        _ => Vec::new(),
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    delegate(src, &doc, &name, &generics, &params, ret, (method, &args));
}
