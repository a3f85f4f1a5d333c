//! `clientset::versioned::fake`: the real clientset over the runtime's in-memory API server
//! (client-gen's `fake/clientset.go`).

use super::super::Ctx;
use super::super::text::{Src, Ty};
use crate::emit::Module;
use crate::namer::ident;

/// `clientset::versioned::fake`: the real `Clientset` over the runtime's in-memory API server,
/// with every resource of this clientset registered (client-go's `fake.NewSimpleClientset`).
/// When the kinds have generated CRDs ([`crate::Config::crd_impls`]), the fake installs them,
/// schemas included, so that it validates, prunes, defaults and merges server-side apply by the
/// schema's list and map types (client-go's fake, registering types only, merges every list
/// atomically: kubernetes#126850).
pub(super) fn fake_clientset(ctx: &Ctx<'_>) -> Module {
    let rt = ctx.rt();
    // One kind type per CRD, from a package of this run that implements `CustomResourceExt`.
    let crd_kinds: Vec<String> = ctx
        .crds
        .iter()
        .filter(|_| ctx.fake_crds)
        .filter_map(|crd| {
            let pkg = ctx.model.packages.iter().find(|p| {
                crd.versions
                    .iter()
                    .any(|v| v.group_dir == p.group_dir && v.name == p.version)
            })?;
            Some(format!("{}::{}", ctx.package_path(pkg), ident(&crd.kind)))
        })
        .collect();
    let mut src = Src::new();
    src.doc(
        "Builds fake clientsets: the real [`Clientset`](super::Clientset) type, backed by an\n\
         in-memory API server with Kubernetes semantics (resourceVersions, conflicts, status\n\
         subresources, finalizers, selectors, watches), plus a handle to inspect recorded\n\
         actions, inject faults with reactors, and read stored objects.",
    );
    src.line("pub enum Clientset {}");
    src.blank();
    src.block("impl Clientset", |s| {
        new(s, &rt, !crd_kinds.is_empty());
        s.blank();
        s.method(
            "The resources of this clientset, as the fake API server registers them.",
            "pub fn resources",
            &[],
            &[],
            Some(&Ty::generic(
                "Vec",
                vec![Ty::new(format!("{rt}::resource::ResourceInfo"))],
            )),
            |s| {
                s.line("let mut resources = Vec::new();");
                for p in &ctx.model.packages {
                    if let Some(cfg) = ctx.group_cfg(p) {
                        s.line(&cfg);
                    }
                    let registry = format!("{}::RESOURCES", ctx.package_path(p));
                    s.call("", "resources.extend_from_slice", &[&registry], ";");
                }
                s.line("resources");
            },
        );
        if !crd_kinds.is_empty() {
            s.blank();
            crds(s, &rt, &crd_kinds);
        }
    });
    Module::client(
        &["clientset", "versioned", "fake"],
        "A fake clientset for tests: the real clientset over an in-memory API server.",
        src.finish(),
    )
}

/// `Clientset::new(objects)`, seeding the CRDs first when there are some.
fn new(src: &mut Src, rt: &str, with_crds: bool) {
    src.doc(
        "A clientset over a new in-memory API server that serves every resource of this\n\
         clientset (with its CRD, when one was generated) and the common built-ins,\n\
         seeded with `objects` (each with `apiVersion` and `kind`;\n\
         `kube_codegen_runtime::fake::to_value(&obj)` adds them for typed objects).\n\
         Needs a Tokio runtime.",
    );
    src.line(
        "// client-go's `fake.NewSimpleClientset` hands back its own clientset type; here the",
    );
    src.line("// point is to hand back the real one, so `new` deliberately returns another type.");
    src.line("#[allow(clippy::new_ret_no_self)]");
    src.line("#[inline]");
    src.func(
        "pub fn new",
        &[],
        &[Ty::generic(
            "objects: impl IntoIterator",
            vec![Ty::new(format!("Item = {rt}::serde_json::Value"))],
        )],
        Some(&Ty::generic(
            "Result",
            vec![
                Ty::tuple(vec![
                    Ty::new("super::Clientset"),
                    Ty::new(format!("{rt}::fake::FakeHandle")),
                ]),
                Ty::new(format!("{rt}::fake::FakeError")),
            ],
        )),
        |s| {
            s.line("let resources = Self::resources();");
            let seed = if with_crds {
                s.chain(
                    "let seed = Self::crds()?",
                    &[".into_iter()", ".chain(objects)"],
                    ";",
                );
                "seed"
            } else {
                "objects"
            };
            s.call(
                "let (client, handle) = ",
                &format!("{rt}::fake::new_client"),
                &["&resources", seed],
                "?;",
            );
            s.line("Ok((super::Clientset::new(client), handle))");
        },
    );
}

/// `Clientset::crds()`: the CRDs of `crd_kinds` as objects to seed.
fn crds(src: &mut Src, rt: &str, crd_kinds: &[String]) {
    src.doc(
        "The CustomResourceDefinitions of this clientset's kinds, as objects to seed:\n\
         [`new`](Self::new) installs them, so the fake validates, prunes and defaults\n\
         by their schemas and server-side apply merges lists and maps as they say.",
    );
    src.func(
        "pub fn crds",
        &[],
        &[],
        Some(&Ty::generic(
            "Result",
            vec![
                Ty::generic("Vec", vec![Ty::new(format!("{rt}::serde_json::Value"))]),
                Ty::new(format!("{rt}::fake::FakeError")),
            ],
        )),
        |s| {
            s.line(&format!("use {rt}::kube::CustomResourceExt as _;"));
            let crds: Vec<String> = crd_kinds.iter().map(|k| format!("{k}::crd()")).collect();
            s.array("let crds = ", &crds, ";");
            let to_value = format!(".map({rt}::fake::to_value)");
            s.chain("crds", &[".iter()", &to_value, ".collect()"], "");
        },
    );
}
