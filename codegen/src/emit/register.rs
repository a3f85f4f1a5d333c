//! The register generator: for each package, `zz_generated_register.rs` with the group and
//! version constants (`GROUP_NAME`, `VERSION`, `SCHEME_GROUP_VERSION`), Go's `Resource()` helper,
//! and `RESOURCES`, the registry entries of its `+genclient` kinds that the fake API server and
//! discovery serve.

use super::Ctx;
use super::text::Src;
use crate::emit::Module;
use crate::model::{Package, Scope};

/// Emits `zz_generated_register` for `pkg`.
pub(crate) fn package(ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    let rt = ctx.rt();
    let api_version = pkg.api_version();
    let mut src = Src::new();
    // Private imports: the package re-exports this module's public items only.
    src.use_list(
        &format!("use {rt}::resource::"),
        &["GroupResource", "GroupVersion", "ResourceInfo"],
    );
    src.blank();
    let group_doc = if pkg.group_name.is_empty() {
        "The API group: empty, the legacy core group served under `/api`."
    } else {
        "The API group."
    };
    for (doc, name, value) in [
        (group_doc, "GROUP_NAME", pkg.group_name.as_str()),
        ("The API version.", "VERSION", pkg.version.as_str()),
        (
            "`group/version`, as objects of this package carry in `apiVersion`.",
            "API_VERSION",
            api_version.as_str(),
        ),
    ] {
        src.doc(doc);
        src.line(&format!("pub const {name}: &str = {value:?};"));
        src.blank();
    }
    src.doc("The group-version, as `SchemeGroupVersion` is in Go.");
    src.block_then(
        "pub const SCHEME_GROUP_VERSION: GroupVersion = GroupVersion",
        ";",
        |s| {
            s.line("group: GROUP_NAME,");
            s.line("version: VERSION,");
        },
    );
    src.blank();
    src.doc("A resource of this group, qualified by the group, as `Resource(\"…\")` is in Go.");
    src.block("pub fn resource(resource: &str) -> GroupResource", |s| {
        s.line("SCHEME_GROUP_VERSION.resource(resource)");
    });
    src.blank();
    src.doc("The resources this group-version serves, for the fake API server and discovery.");
    let lead = "pub const RESOURCES: &[ResourceInfo] = &";
    match pkg.kinds.as_slice() {
        [] => src.line(&format!("{lead}[];")),
        // One entry: `&[ResourceInfo {` (rustfmt lets a lone struct literal open on the array's
        // line); more: one per line.
        [k] => src.block_then(&format!("{lead}[ResourceInfo"), "];", |s| {
            resource_fields(s, k);
        }),
        kinds => src.scope(&format!("{lead}["), "];", |s| {
            for k in kinds {
                s.block_then("ResourceInfo", ",", |s| resource_fields(s, k));
            }
        }),
    }
    vec![Module::apis(
        &pkg.group_dir,
        &pkg.version,
        "zz_generated_register",
        format!("Registration of the {api_version} API."),
        src.finish(),
    )]
}

/// The fields of `kind`'s `ResourceInfo`.
fn resource_fields(src: &mut Src, k: &crate::model::Kind) {
    let mut subs: Vec<&str> = Vec::new();
    if k.has_status {
        subs.push("status");
    }
    for m in &k.methods {
        if let Some(s) = m.subresource.as_deref()
            && !subs.contains(&s)
        {
            subs.push(s);
        }
    }
    src.line("group: GROUP_NAME,");
    src.line("version: VERSION,");
    src.line(&format!("kind: {:?},", k.name));
    src.line(&format!("list_kind: \"{}List\",", k.name.escape_debug()));
    src.line(&format!("plural: {:?},", k.resource));
    src.line(&format!("singular: {:?},", k.singular()));
    src.line(&format!("namespaced: {},", k.scope == Scope::Namespaced));
    let strings = |v: &[&str]| v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>();
    src.array("subresources: &", &strings(&subs), ",");
    let short: Vec<&str> = k.short_names.iter().map(String::as_str).collect();
    src.array("short_names: &", &strings(&short), ",");
}
