//! The register generator: for each package, `zz_generated_register.rs` with the group and
//! version constants (`GROUP_NAME`, `VERSION`, `SCHEME_GROUP_VERSION`), Go's `Resource()` helper,
//! and `RESOURCES`, the registry entries of its `+genclient` kinds that the fake API server and
//! discovery serve.

use super::Ctx;
use super::text::Src;
use crate::model::{Package, Scope};
use crate::output::Module;

/// Emits `zz_generated_register` for `pkg`.
pub(crate) fn package(ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    let rt = ctx.rt();
    let api_version = pkg.api_version();
    let mut src = Src::new();
    // Private imports: the package re-exports this module's public items only.
    src.use_list(
        0,
        &format!("use {rt}::resource::"),
        &["GroupResource", "GroupVersion", "ResourceInfo"],
    );
    src.line(0, "");
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
        src.doc(0, doc);
        src.line(0, &format!("pub const {name}: &str = {value:?};"));
        src.line(0, "");
    }
    src.doc(0, "The group-version, as `SchemeGroupVersion` is in Go.");
    src.line(
        0,
        "pub const SCHEME_GROUP_VERSION: GroupVersion = GroupVersion {",
    );
    src.line(4, "group: GROUP_NAME,");
    src.line(4, "version: VERSION,");
    src.line(0, "};");
    src.line(0, "");
    src.doc(
        0,
        "A resource of this group, qualified by the group, as `Resource(\"…\")` is in Go.",
    );
    src.line(0, "pub fn resource(resource: &str) -> GroupResource {");
    src.line(4, "SCHEME_GROUP_VERSION.resource(resource)");
    src.line(0, "}");
    src.line(0, "");
    src.doc(
        0,
        "The resources this group-version serves, for the fake API server and discovery.",
    );
    let lead = "pub const RESOURCES: &[ResourceInfo] = &";
    match pkg.kinds.as_slice() {
        [] => src.line(0, &format!("{lead}[];")),
        kinds => {
            // One entry: `&[ResourceInfo {` (rustfmt lets a lone struct literal open on the
            // array's line); more: one per line.
            let (open, indent) = if kinds.len() == 1 {
                (format!("{lead}[ResourceInfo {{"), 0)
            } else {
                src.line(0, &format!("{lead}["));
                ("ResourceInfo {".to_string(), 4)
            };
            for k in kinds {
                src.line(indent, &open);
                resource_fields(&mut src, indent + 4, k);
                src.line(indent, if kinds.len() == 1 { "}];" } else { "}," });
            }
            if kinds.len() > 1 {
                src.line(0, "];");
            }
        }
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
fn resource_fields(src: &mut Src, indent: usize, k: &crate::model::Kind) {
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
    src.line(indent, "group: GROUP_NAME,");
    src.line(indent, "version: VERSION,");
    src.line(indent, &format!("kind: {:?},", k.name));
    src.line(
        indent,
        &format!("list_kind: \"{}List\",", k.name.escape_debug()),
    );
    src.line(indent, &format!("plural: {:?},", k.resource));
    src.line(indent, &format!("singular: {:?},", k.singular()));
    src.line(
        indent,
        &format!("namespaced: {},", k.scope == Scope::Namespaced),
    );
    let strings = |v: &[&str]| v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>();
    src.array(indent, "subresources: &", &strings(&subs), ",");
    let short: Vec<&str> = k.short_names.iter().map(String::as_str).collect();
    src.array(indent, "short_names: &", &strings(&short), ",");
}
