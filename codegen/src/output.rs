//! Stage 6, format: the modules one work item emitted (one package's, or those spanning
//! packages), as files: each module's text after its header, `//!` doc and the declarations of
//! its children. Three layouts hold the same modules:
//!
//! * the tree ([`Layout::Tree`], the CLI's): one file per module, generated modules beside the
//!   types under the apis dir, the client tree under the output dir;
//! * the included tree ([`Layout::Included`], `build.rs`'s): the same files under
//!   `$OUT_DIR/kube-codegen/`, plus `client.rs` and `apis/<group>/<version>.rs`, which declare
//!   them with `#[path = "…"]` for `include_client!`/`include_package!`;
//! * inline modules ([`Modules::inline_client`], the proc macro's): one token tree, the texts
//!   parsed into tokens and printed with `prettyplease` (the compiler reads it, not people).
//!
//! Every module file is byte-identical in the first two, so the front doors produce the same
//! code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::{Module, Root, doc_comment};
use crate::error::{Error, Result};
use crate::generated::GENERATED_MARKER;
use crate::namer;

/// Where the files of a run go.
#[derive(Debug, Clone)]
pub(crate) enum Layout {
    /// The CLI's: beside the types and under the output dir.
    Tree {
        /// The apis dir.
        apis_dir: PathBuf,
        /// The client tree's root.
        output_dir: PathBuf,
    },
    /// `build.rs`'s: the tree under `out`, with `#[path]`-declaring roots for `include!`.
    Included {
        /// `$OUT_DIR/kube-codegen`, absolute.
        out: PathBuf,
    },
}

impl Layout {
    fn client_root(&self) -> PathBuf {
        match self {
            Layout::Tree { output_dir, .. } => output_dir.clone(),
            Layout::Included { out } => out.join("client"),
        }
    }

    pub(crate) fn apis_root(&self) -> PathBuf {
        match self {
            Layout::Tree { apis_dir, .. } => apis_dir.clone(),
            Layout::Included { out } => out.join("apis"),
        }
    }
}

#[derive(Default)]
struct Node {
    /// A module was emitted at this path (else the node only connects its children).
    defined: bool,
    /// Declared by its parent but rendered by another work item or an earlier run.
    external: bool,
    doc: String,
    /// The items of every emitter that wrote to this module, in order.
    texts: Vec<String>,
    /// The Cargo features the module is behind (any one enables it).
    cfg: Vec<String>,
    children: BTreeMap<String, Node>,
}

impl Node {
    fn insert(&mut self, path: &[String], m: Module) {
        match path.split_first() {
            None => {
                self.defined = true;
                if self.doc.is_empty() {
                    self.doc = m.doc;
                }
                if self.cfg.is_empty() {
                    self.cfg = m.cfg;
                }
                if !m.text.is_empty() {
                    self.texts.push(m.text);
                }
            }
            Some((head, rest)) => self
                .children
                .entry(head.clone())
                .or_default()
                .insert(rest, m),
        }
    }

    /// The items written as text, as tokens (for the layouts that put modules in one file).
    fn text_tokens(&self, what: &Path) -> Result<Vec<TokenStream>> {
        self.texts
            .iter()
            .map(|t| {
                t.parse::<TokenStream>().map_err(|e| {
                    Error::file(
                        what,
                        format!(
                            "internal error: generated code does not parse ({e}); please report this"
                        ),
                    )
                })
            })
            .collect()
    }

    /// The module's file: its doc and feature gate, its children's declarations, then its
    /// items.
    fn file(&self) -> String {
        let mut out =
            String::with_capacity(self.texts.iter().map(String::len).sum::<usize>() + 256);
        doc_comment(&mut out, 0, "//!", &self.doc);
        if let Some(p) = self.cfg_predicate() {
            out.push_str(&format!("#![cfg({p})]\n"));
        }
        for k in self.children.keys() {
            // Keep `cargo fmt` of the user's crate out of generated files.
            out.push_str(&format!("#[rustfmt::skip]\npub mod {};\n", namer::ident(k)));
        }
        self.push_texts(&mut out, !self.children.is_empty());
        out
    }

    /// The items, after a blank line when `after_something`.
    fn push_texts(&self, out: &mut String, after_something: bool) {
        for (i, t) in self.texts.iter().enumerate() {
            if i > 0 || after_something {
                out.push('\n');
            }
            out.push_str(t);
        }
    }

    /// `#![cfg(feature = "…")]` (inner) or `#[cfg(…)]` (outer) when the module is behind a
    /// feature.
    fn cfg_attr(&self, inner: bool) -> TokenStream {
        let features = &self.cfg;
        let pred = match features.as_slice() {
            [] => return quote!(),
            [f] => quote!(feature = #f),
            _ => quote!(any(#(feature = #features),*)),
        };
        if inner {
            quote!(#![cfg(#pred)])
        } else {
            quote!(#[cfg(#pred)])
        }
    }

    /// `feature = "a"` or `any(feature = "a", feature = "b")`, when the module is gated.
    fn cfg_predicate(&self) -> Option<String> {
        let one = |f: &String| format!("feature = \"{}\"", f.escape_default());
        match self.cfg.as_slice() {
            [] => None,
            [f] => Some(one(f)),
            fs => Some(format!(
                "any({})",
                fs.iter().map(one).collect::<Vec<_>>().join(", ")
            )),
        }
    }

    fn declare(&mut self, path: &[String]) {
        match path.split_first() {
            None => {
                if !self.defined {
                    self.external = true;
                }
            }
            Some((head, rest)) => self.children.entry(head.clone()).or_default().declare(rest),
        }
    }

    fn doc_attrs(&self) -> TokenStream {
        doc_lines(&self.doc, true)
    }

    /// The module's items with children declared as `#[path = "…"] pub mod x;` (the root of
    /// the included layout: no inner doc, which an `include!`d file cannot carry), then `tail`.
    fn path_file(&self, dir: &Path, tail: &str) -> String {
        let mut out = String::new();
        for (k, child) in &self.children {
            let file = dir.join(child.file_name(k)).to_string_lossy().into_owned();
            // Generated code is whole (every verb, every setter, every constant): a crate that
            // includes it in a private module uses only part of it, and must not be warned.
            out.push_str(&format!(
                "#[allow(dead_code, unused_imports)]\n#[path = {file:?}]\npub mod {};\n",
                namer::ident(k)
            ));
        }
        self.push_texts(&mut out, false);
        out.push_str(tail);
        out
    }

    /// The module's content with children inlined as `pub mod x { … }`. The root's children
    /// (`with_doc` false: the root of an expansion) allow dead code and unused imports, as the
    /// included layout's root does ([`Self::path_file`]).
    fn inline_tokens(&self, with_doc: bool, what: &Path) -> Result<TokenStream> {
        let doc = if with_doc { self.doc_attrs() } else { quote!() };
        let allow = if with_doc {
            quote!()
        } else {
            quote!(#[allow(dead_code, unused_imports)])
        };
        let mut mods = Vec::new();
        for (k, child) in &self.children {
            let id = namer::ident(k);
            let body = child.inline_tokens(true, &what.join(k))?;
            let cfg = child.cfg_attr(false);
            mods.push(quote!(#cfg #allow #[rustfmt::skip] pub mod #id { #body }));
        }
        let texts = self.text_tokens(what)?;
        Ok(quote!(#doc #(#mods)* #(#texts)*))
    }

    /// The file of this node, named `name`, relative to its parent's folder. (A module rendered
    /// elsewhere is a generator's folder or a version folder: it has children.)
    fn file_name(&self, name: &str) -> PathBuf {
        if self.children.is_empty() && !self.external {
            PathBuf::from(format!("{name}.rs"))
        } else {
            Path::new(name).join("mod.rs")
        }
    }

    /// Every defined client module path below this node.
    fn defined_paths(&self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if self.defined {
            out.push(prefix.clone());
        }
        for (name, child) in &self.children {
            prefix.push(name.clone());
            child.defined_paths(prefix, out);
            prefix.pop();
        }
    }
}

/// Doc comment lines as `#![doc]` (inner) or `#[doc]` (outer) attributes.
pub(crate) fn doc_lines(doc: &str, inner: bool) -> TokenStream {
    let lines = doc.lines().map(|l| {
        let l = if l.is_empty() {
            String::new()
        } else {
            format!(" {l}")
        };
        if inner {
            quote!(#![doc = #l])
        } else {
            quote!(#[doc = #l])
        }
    });
    quote!(#(#lines)*)
}

/// The header put on every generated file: the marker line, then the user's boilerplate.
#[derive(Debug, Clone, Default)]
pub(crate) struct Header {
    boilerplate: String,
}

impl Header {
    /// A header with `boilerplate` (the `--header-file` content) after the marker line. Lines
    /// that are not already comments are turned into `//` comments.
    pub(crate) fn new(boilerplate: &str) -> Self {
        let mut text = String::new();
        for line in boilerplate.lines() {
            let t = line.trim_end();
            if t.trim_start().starts_with("//")
                || t.trim_start().starts_with("/*")
                || t.trim_start().starts_with('*')
            {
                text.push_str(t);
            } else if t.is_empty() {
                text.push_str("//");
            } else {
                text.push_str("// ");
                text.push_str(t);
            }
            text.push('\n');
        }
        Header { boilerplate: text }
    }

    fn render(&self, body: &str) -> String {
        let mut out = String::with_capacity(body.len() + 200);
        out.push_str(GENERATED_MARKER);
        out.push('\n');
        if !self.boilerplate.is_empty() {
            out.push('\n');
            out.push_str(&self.boilerplate);
        }
        out.push('\n');
        out.push_str(body);
        out
    }
}

fn format(tokens: TokenStream, what: &Path) -> Result<String> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| {
        Error::file(
            what,
            format!("internal error: generated code does not parse ({e}); please report this"),
        )
    })?;
    Ok(prettyplease::unparse(&file))
}

/// The modules of one work item (or, for the proc macro, of a whole run).
#[derive(Default)]
pub(crate) struct Modules {
    client: Node,
    apis: BTreeMap<(String, String), Node>,
}

impl Modules {
    /// Collects `modules`; items for the same module are concatenated in the given order.
    pub(crate) fn new(modules: Vec<Module>) -> Self {
        let mut out = Modules::default();
        out.extend(modules);
        out
    }

    /// Adds `modules`.
    pub(crate) fn extend(&mut self, modules: Vec<Module>) {
        for m in modules {
            match m.root {
                Root::Client => self.client.insert(&m.path.clone(), m),
                Root::Apis => {
                    if let [group, version, rest @ ..] = m.path.as_slice() {
                        let (key, rest) = ((group.clone(), version.clone()), rest.to_vec());
                        self.apis.entry(key).or_default().insert(&rest, m);
                    }
                }
            }
        }
    }

    /// Declares the client module at `path` without rendering it: a module another work item
    /// renders, or a subtree that an earlier run of another generator wrote and this run must
    /// keep declaring.
    pub(crate) fn declare_client(&mut self, path: &[String]) {
        self.client.declare(path);
    }

    /// The client module paths this item defines.
    pub(crate) fn defined_client_paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        self.client.defined_paths(&mut Vec::new(), &mut out);
        out
    }

    /// Renders every module this item defined as files of `layout` (absolute or cwd-relative
    /// paths), handing each to `sink` as soon as it is formatted.
    pub(crate) fn render(
        &self,
        layout: &Layout,
        header: &Header,
        sink: &mut dyn FnMut(PathBuf, String) -> Result<()>,
    ) -> Result<()> {
        let client_root = layout.client_root();
        render_node(&self.client, &client_root, None, header, sink)?;
        if let (Layout::Included { out }, true) = (layout, self.client.defined) {
            let text = header.render(&self.client.path_file(&client_root, ""));
            sink(out.join("client.rs"), text)?;
        }
        let apis_root = layout.apis_root();
        for ((group, version), pkg) in &self.apis {
            let dir = apis_root.join(group).join(version);
            for (name, node) in &pkg.children {
                sink(dir.join(format!("{name}.rs")), header.render(&node.file()))?;
            }
            if let Layout::Included { .. } = layout {
                let tail = if pkg.children.contains_key("zz_generated_register") {
                    "\n#[allow(unused_imports)]\npub use self::zz_generated_register::*;\n"
                } else {
                    ""
                };
                let path = apis_root.join(group).join(format!("{version}.rs"));
                sink(path, header.render(&pkg.path_file(&dir, tail)))?;
            }
        }
        Ok(())
    }

    /// The client tree as inline modules, formatted (what the proc macro expands to).
    pub(crate) fn inline_client(&self, header: &Header) -> Result<Option<String>> {
        if self.client.children.is_empty() && self.client.texts.is_empty() {
            return Ok(None);
        }
        let tokens = self.client.inline_tokens(false, Path::new("client"))?;
        Ok(Some(
            header.render(&format(tokens, Path::new("client.rs"))?),
        ))
    }

    /// One package's generated modules as inline modules, formatted, plus
    /// `pub use self::zz_generated_register::*;` (what the proc macro expands to inside the
    /// package).
    pub(crate) fn inline_package(
        &self,
        header: &Header,
        group: &str,
        version: &str,
    ) -> Result<Option<String>> {
        let Some(pkg) = self.apis.get(&(group.to_string(), version.to_string())) else {
            return Ok(None);
        };
        let what = PathBuf::from(group).join(version);
        let mut body = pkg.inline_tokens(false, &what)?;
        if pkg.children.contains_key("zz_generated_register") {
            body.extend(quote!(
                #[allow(unused_imports)]
                pub use self::zz_generated_register::*;
            ));
        }
        let what = PathBuf::from(group).join(format!("{version}.rs"));
        Ok(Some(header.render(&format(body, &what)?)))
    }
}

/// Renders `node` (the module at `dir`, the client root when `name` is `None`) and its defined
/// descendants.
fn render_node(
    node: &Node,
    dir: &Path,
    name: Option<&str>,
    header: &Header,
    sink: &mut dyn FnMut(PathBuf, String) -> Result<()>,
) -> Result<()> {
    if node.external {
        return Ok(());
    }
    let own_dir = match name {
        Some(n) => dir.join(n),
        None => dir.to_path_buf(),
    };
    if node.defined {
        let path = match name {
            None => dir.join("mod.rs"),
            Some(n) => dir.join(node.file_name(n)),
        };
        sink(path, header.render(&node.file()))?;
    }
    for (child_name, child) in &node.children {
        render_node(child, &own_dir, Some(child_name), header, sink)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_and_inline_layouts_hold_the_same_modules() {
        let mut mods = Modules::new(vec![
            Module::client(&[], "Root.", String::new()),
            Module::client(
                &["clientset", "versioned"],
                "The clientset.",
                "pub struct Clientset;\n".into(),
            ),
            Module::client(&["clientset"], "Clientsets.", String::new()),
            Module::client(
                &["clientset", "versioned", "typed"],
                "Typed.",
                "pub struct T;\n".into(),
            ),
        ]);
        mods.declare_client(&["listers".to_string()]);
        let header = Header::new("Copyright The Authors.\n");
        let mut tree = Vec::new();
        let layout = Layout::Tree {
            apis_dir: "apis".into(),
            output_dir: "out".into(),
        };
        mods.render(&layout, &header, &mut |p, t| {
            tree.push((p.display().to_string(), t));
            Ok(())
        })
        .unwrap();
        let paths: Vec<&str> = tree.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "out/mod.rs",
                "out/clientset/mod.rs",
                "out/clientset/versioned/mod.rs",
                "out/clientset/versioned/typed.rs",
            ]
        );
        assert!(tree[0].1.contains("pub mod listers;"), "{}", tree[0].1);
        assert!(
            !paths.iter().any(|p| p.contains("listers")),
            "declared, not rendered"
        );
        let text = &tree[2].1;
        assert!(text.starts_with(GENERATED_MARKER));
        assert!(text.contains("// Copyright The Authors."));
        assert!(
            text.contains(
                "//! The clientset.\n#[rustfmt::skip]\npub mod typed;\n\npub struct Clientset;"
            ),
            "{text}"
        );
        let inline = mods.inline_client(&header).unwrap().unwrap();
        assert!(inline.contains("#[rustfmt::skip]\n        pub mod typed {\n            //! Typed.\n            pub struct T;"), "{inline}");

        let mut included = Vec::new();
        mods.render(
            &Layout::Included { out: "/o".into() },
            &header,
            &mut |p, t| {
                included.push((p.display().to_string(), t));
                Ok(())
            },
        )
        .unwrap();
        let root = included.iter().find(|(p, _)| p == "/o/client.rs").unwrap();
        assert!(
            root.1
                .contains("#[path = \"/o/client/clientset/mod.rs\"]\npub mod clientset;"),
            "{}",
            root.1
        );
        assert_eq!(
            included
                .iter()
                .find(|(p, _)| p == "/o/client/clientset/versioned/mod.rs")
                .unwrap()
                .1,
            tree[2].1,
            "module files are the same in both layouts"
        );
    }

    #[test]
    fn a_module_behind_any_of_several_features_is_gated_by_any() {
        let mods =
            Modules::new(vec![
                Module::client(&["ac"], "Configurations.", String::new()),
                Module::client(&["ac", "core"], "Core.", "pub struct C;\n".into())
                    .behind_any(vec!["core".into(), "apps".into(), "core".into()]),
            ]);
        let header = Header::new("");
        let mut tree = Vec::new();
        let layout = Layout::Tree {
            apis_dir: "apis".into(),
            output_dir: "out".into(),
        };
        mods.render(&layout, &header, &mut |p, t| {
            tree.push((p.display().to_string(), t));
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let core = tree
            .iter()
            .find(|(p, _)| p == "out/ac/core.rs")
            .map(|(_, t)| t.as_str())
            .unwrap_or_default();
        assert!(
            core.contains("#![cfg(any(feature = \"apps\", feature = \"core\"))]"),
            "{core}"
        );
        let inline = mods
            .inline_client(&header)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_default();
        assert!(
            inline.contains("#[cfg(any(feature = \"apps\", feature = \"core\"))]"),
            "{inline}"
        );
    }

    #[test]
    fn a_module_behind_a_feature_is_gated_in_every_layout() {
        let mods = Modules::new(vec![
            Module::client(&["listers"], "Listers.", String::new()),
            Module::client(&["listers", "apps"], "Apps.", "pub struct A;\n".into())
                .behind(Some("apps".into())),
            Module::client(&["listers", "core"], "Core.", "pub struct C;\n".into()),
        ]);
        let header = Header::new("");
        let mut tree = Vec::new();
        let layout = Layout::Tree {
            apis_dir: "apis".into(),
            output_dir: "out".into(),
        };
        mods.render(&layout, &header, &mut |p, t| {
            tree.push((p.display().to_string(), t));
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let apps = tree
            .iter()
            .find(|(p, _)| p == "out/listers/apps.rs")
            .map(|(_, t)| t.as_str())
            .unwrap_or_default();
        assert!(apps.contains("#![cfg(feature = \"apps\")]"), "{apps}");
        let core = tree
            .iter()
            .find(|(p, _)| p == "out/listers/core.rs")
            .map(|(_, t)| t.as_str())
            .unwrap_or_default();
        assert!(!core.contains("cfg("), "{core}");
        let inline = mods
            .inline_client(&header)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_default();
        assert!(
            inline.contains("#[cfg(feature = \"apps\")]\n    #[rustfmt::skip]\n    pub mod apps {"),
            "{inline}"
        );
    }
}
