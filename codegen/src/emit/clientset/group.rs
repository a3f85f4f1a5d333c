//! `clientset::versioned::typed::<group>::<version>`: a group-version's client, one accessor
//! per kind and its REST client (client-gen's `<group>_client.go`).

use super::super::Ctx;
use super::super::text::{Src, Ty};
use super::{client_holder, gv_client_name, kind_client_name};
use crate::emit::Module;
use crate::model::{Package, Scope};
use crate::namer::ident;

pub(super) fn group_version_client(ctx: &Ctx<'_>, pkg: &Package) -> Module {
    let rt = ctx.rt();
    let ty = gv_client_name(pkg);
    let api_version = pkg.api_version();
    let mut src = Src::new();
    src.reexports(
        pkg.kinds
            .iter()
            .map(|k| (ident(&k.module()).to_string(), vec![kind_client_name(k)]))
            .collect(),
    );
    if !pkg.kinds.is_empty() {
        src.blank();
    }
    src.line(&format!("use {rt}::kube;"));
    src.blank();
    src.doc(&format!(
        "The client of the `{api_version}` API: one accessor per kind."
    ));
    client_holder(
        &mut src,
        &ty,
        "A group-version client over `client`.",
        "The underlying client.",
        |s| {
            s.blank();
            let rest = format!("{rt}::rest::RestClient");
            s.method(
                "The REST client of this group-version (Go's `RESTClient()`), for requests the\n\
                 typed clients do not cover.",
                "pub fn rest_client",
                &[],
                &[Ty::new("&self")],
                Some(&Ty::new(rest.as_str())),
                |s| {
                    let group = format!("{:?}", pkg.group_name);
                    let version = format!("{:?}", pkg.version);
                    let args = ["self.client.clone()", &group, &version];
                    s.call("", &format!("{rest}::new"), &args, "");
                },
            );
            for k in &pkg.kinds {
                let c = kind_client_name(k);
                let method = format!("pub fn {}", ident(&k.accessor()));
                let new = format!("{c}::new");
                let ret = Ty::new(c.as_str());
                s.blank();
                match k.scope {
                    Scope::Namespaced => s.method(
                        &format!(
                            "`{}` objects in `namespace`; `\"\"` addresses all namespaces.",
                            k.name
                        ),
                        &method,
                        &[],
                        &[Ty::new("&self"), Ty::new("namespace: &str")],
                        Some(&ret),
                        |s| s.call("", &new, &["self.client.clone()", "namespace"], ""),
                    ),
                    Scope::Cluster => s.method(
                        &format!("`{}` objects (cluster-scoped).", k.name),
                        &method,
                        &[],
                        &[Ty::new("&self")],
                        Some(&ret),
                        |s| s.call("", &new, &["self.client.clone()"], ""),
                    ),
                }
            }
        },
    );
    Module::client(
        &[
            "clientset",
            "versioned",
            "typed",
            &pkg.group_module,
            &pkg.version_module(),
        ],
        format!("Typed clients of the `{api_version}` API."),
        src.finish(),
    )
}
