//! What an emitter produces: [`Module`]s, each a module's items as text with where it goes;
//! the format stage ([`crate::output`]) turns them into files.

/// Where a generated module lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Root {
    /// Beside the API types: `<apis>/<group>/<version>/zz_generated_*.rs`.
    Apis,
    /// Under the client output dir: `<output>/clientset/…`, `<output>/listers/…`.
    Client,
}

/// A module produced by an emitter: its items, already laid out as text (see `emit::text`).
#[derive(Debug, Clone)]
pub(crate) struct Module {
    /// Which tree it belongs to.
    pub root: Root,
    /// For [`Root::Client`]: the module path below the client root (`["clientset", "versioned"]`).
    /// For [`Root::Apis`]: `[group folder, version folder, module name]`.
    pub path: Vec<String>,
    /// The module's doc comment (rendered as `//!` lines).
    pub doc: String,
    /// The module's items, formatted.
    pub text: String,
    /// The Cargo features the whole module is behind, any one of which enables it
    /// (`#![cfg(feature = "…")]`, `#![cfg(any(feature = "…", …))]`); none: always compiled.
    pub cfg: Vec<String>,
}

impl Module {
    /// A client-tree module.
    pub(crate) fn client(path: &[&str], doc: impl Into<String>, text: String) -> Self {
        Module {
            root: Root::Client,
            path: path.iter().map(|s| s.to_string()).collect(),
            doc: doc.into(),
            text,
            cfg: Vec::new(),
        }
    }

    /// A module beside the types of the package `<group_dir>/<version>`, named `name`.
    pub(crate) fn apis(
        group_dir: &str,
        version: &str,
        name: &str,
        doc: impl Into<String>,
        text: String,
    ) -> Self {
        Module {
            root: Root::Apis,
            path: vec![group_dir.into(), version.into(), name.into()],
            doc: doc.into(),
            text,
            cfg: Vec::new(),
        }
    }

    /// The same module behind the Cargo feature `feature`, if any.
    pub(crate) fn behind(mut self, feature: Option<String>) -> Self {
        self.cfg = feature.into_iter().collect();
        self
    }

    /// The same module behind any one of `features` (sorted, deduplicated); none: ungated.
    pub(crate) fn behind_any(mut self, mut features: Vec<String>) -> Self {
        features.sort();
        features.dedup();
        self.cfg = features;
        self
    }
}
