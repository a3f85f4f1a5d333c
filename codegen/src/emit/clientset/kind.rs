//! `clientset::versioned::typed::<group>::<version>::<kind>`: a kind's typed client, exactly the
//! verbs its tags keep plus its `+genclient:method` extensions (client-gen's `<kind>.go`).

use super::super::Ctx;
use super::super::text::{Src, Ty};
use super::kind_client_name;
use super::verbs::{Names, ext_method, verb_method};
use crate::emit::Module;
use crate::model::{ExtVerb, Kind, Package, Scope, Verb};
use crate::namer::{ident, snake};

/// The typed client module of `kind`, written as text (see [`text`](super::super::text)).
pub(super) fn kind_client(ctx: &Ctx<'_>, pkg: &Package, kind: &Kind) -> Module {
    let rt = ctx.rt();
    let pkg_path = ctx.package_path(pkg);
    let k = ident(&kind.name).to_string();
    let kname = &kind.name;
    let uses_list = kind.has(Verb::List) || kind.has(Verb::DeleteCollection);
    let resource = if pkg.group_name.is_empty() {
        kind.resource.clone()
    } else {
        format!("{}.{}", kind.resource, pkg.group_name)
    };
    // Apply verbs exist over generated apply configurations only, as in client-gen.
    let kept: Vec<Verb> = kind
        .verbs
        .iter()
        .copied()
        .filter(|v| ctx.apply_verbs || !matches!(v, Verb::Apply | Verb::ApplyStatus))
        .collect();

    let mut src = Src::new();
    // One import per group: rustfmt reorders imports only within a group.
    src.line(&format!("use {rt}::kube;"));
    src.blank();
    src.line(&format!("use {pkg_path}::{k};"));
    if let (Some(l), true) = (&kind.list_type, uses_list) {
        src.blank();
        src.line(&format!("use {pkg_path}::{};", ident(l)));
    }
    src.blank();
    external_checks(&mut src, &rt, kind, &k);
    let scope_doc = match kind.scope {
        Scope::Namespaced => "in one namespace (or all namespaces)",
        Scope::Cluster => "(cluster-scoped)",
    };
    let verb_names: Vec<&str> = kept.iter().map(|v| v.rust_name()).collect();
    src.doc(&format!(
        "The typed client of `{resource}` {scope_doc}.\n\nVerbs: {}.",
        if verb_names.is_empty() {
            "none (`+genclient:noVerbs`)".to_string()
        } else {
            verb_names.join(", ")
        }
    ));
    src.line("#[derive(Clone, Debug)]");
    let client = kind_client_name(kind);
    src.block(&format!("pub struct {client}"), |s| {
        s.field(
            "inner",
            &Ty::generic(
                format!("{rt}::client::TypedClient"),
                vec![Ty::new(k.as_str())],
            ),
        );
    });
    src.blank();
    src.block(&format!("impl {client}"), |s| {
        accessors(s, &rt, kind, &k);
        let list_ty = match (&kind.list_type, uses_list) {
            (Some(l), true) => Ty::new(ident(l).to_string()),
            _ => Ty::generic("kube::api::ObjectList", vec![Ty::new(k.as_str())]),
        };
        let obj = ident(&snake(&kind.name)).to_string();
        let ac_ty = super::apply_configuration(ctx, pkg, &kind.name);
        let names = Names {
            rt: &rt,
            ty: &k,
            obj: &obj,
            ac: &ac_ty,
        };
        // Behind the apply feature, when there is one, as the configurations they take are.
        let gate = |s: &mut Src, apply: bool| {
            if let (true, Some(f)) = (apply, ctx.apply_feature.as_deref()) {
                s.line(&format!("#[cfg(feature = \"{}\")]", f.escape_default()));
            }
        };
        for v in &kept {
            s.blank();
            gate(s, matches!(v, Verb::Apply | Verb::ApplyStatus));
            verb_method(s, &names, *v, kind, &list_ty);
        }
        for m in kind
            .methods
            .iter()
            .filter(|m| ctx.apply_verbs || m.verb != ExtVerb::Apply)
        {
            s.blank();
            gate(s, m.verb == ExtVerb::Apply);
            ext_method(s, ctx, pkg, kind, m);
        }
    });
    Module::client(
        &[
            "clientset",
            "versioned",
            "typed",
            &pkg.group_module,
            &pkg.version_module(),
            &kind.module(),
        ],
        format!(
            "The typed client of `{kname}` (`{resource}/{}`).",
            pkg.version
        ),
        src.finish(),
    )
}

/// The client's own methods before its verbs: `new`, `api`, `client` and `namespace`.
fn accessors(src: &mut Src, rt: &str, kind: &Kind, k: &str) {
    let kname = &kind.name;
    let typed_new = format!("{rt}::client::TypedClient::new");
    let (new_doc, params, args): (String, &[Ty], &[&str]) = match kind.scope {
        Scope::Namespaced => (
            format!(
                "A client for `{kname}` objects in `namespace`; `\"\"` addresses all namespaces."
            ),
            &[Ty::new("client: kube::Client"), Ty::new("namespace: &str")],
            &["client", "Some(namespace)"],
        ),
        Scope::Cluster => (
            format!("A client for `{kname}` objects."),
            &[Ty::new("client: kube::Client")],
            &["client", "None"],
        ),
    };
    src.method(
        &new_doc,
        "pub fn new",
        &[],
        params,
        Some(&Ty::new("Self")),
        |s| {
            s.block("Self", |s| s.call("inner: ", &typed_new, args, ","));
        },
    );
    // A re-exported `noVerbs` kind may have no collection of its own (policy/v1 `Eviction` is
    // a subresource type, which `kube::Api` refuses): no `kube::Api` for it.
    if !(kind.no_verbs && kind.external.is_some()) {
        src.blank();
        src.method(
            "The same resource as a `kube::Api`, for anything this client does not offer.",
            "pub fn api",
            &[],
            &[Ty::new("&self")],
            Some(&Ty::generic("kube::Api", vec![Ty::new(k)])),
            |s| match kind.scope {
                Scope::Namespaced => s.block("match self.inner.namespace()", |s| {
                    s.line("Some(ns) => kube::Api::namespaced(self.inner.client().clone(), ns),");
                    s.line("None => kube::Api::all(self.inner.client().clone()),");
                }),
                Scope::Cluster => s.line("kube::Api::all(self.inner.client().clone())"),
            },
        );
    }
    src.blank();
    src.method(
        "The underlying client, for methods written beside the generated ones (client-go's\n\
         expansions).",
        "pub fn client",
        &[],
        &[Ty::new("&self")],
        Some(&Ty::new("&kube::Client")),
        |s| s.line("self.inner.client()"),
    );
    if kind.scope == Scope::Namespaced {
        src.blank();
        src.method(
            "The namespace this client addresses (`None`: all namespaces).",
            "pub fn namespace",
            &[],
            &[Ty::new("&self")],
            Some(&Ty::new("Option<&str>")),
            |s| s.line("self.inner.namespace()"),
        );
    }
}

/// For an external kind (a re-export of k8s-openapi's type): compile-time checks that its tags
/// agree with the type: the scope (`+genclient:nonNamespaced`) with `Resource::Scope`, the
/// resource (plural, `+resourceName`) with `Resource::URL_PATH_SEGMENT`. `noVerbs` kinds make no
/// requests and are not checked (`Eviction` is a subresource type).
fn external_checks(src: &mut Src, rt: &str, kind: &Kind, ty: &str) {
    if kind.external.is_none() || kind.no_verbs {
        return;
    }
    let scope = match kind.scope {
        Scope::Namespaced => "namespaced",
        Scope::Cluster => "cluster_scoped",
    };
    let resource = format!("{:?}", kind.resource);
    let message = format!(
        "{:?}",
        format!(
            "the tags of {} disagree with its type: resource {:?} is not its URL_PATH_SEGMENT",
            kind.name, kind.resource
        )
    );
    let segment = format!("<{ty} as {rt}::k8s_openapi::Resource>::URL_PATH_SEGMENT");
    src.line("// The tags agree with the re-exported type: scope and resource.");
    src.block_then("const _: () =", ";", |s| {
        s.line(&format!("{rt}::check::{scope}::<{ty}>();"));
        s.macro_args("assert!(", ");", |s| {
            let same_str = format!("{rt}::check::same_str");
            s.call("", &same_str, &[&segment, &resource], ",");
            s.line(&message);
        });
    });
    src.blank();
}
