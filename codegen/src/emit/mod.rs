//! Stage 4, emit: one module per generator, each a function from the [`Model`] to [`Module`]s.
//! `quote!` lives only here.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

use crate::model::{Kind, Model, Package, TypeRef};
use crate::namer;
use crate::output::Module;

pub mod clientset;
pub mod crd;
pub mod deepcopy;
pub mod informers;
pub mod listers;
pub mod register;

/// Rust paths the generated code refers to.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The module of the apis tree (`crate::pkg::apis`).
    pub apis: syn::Path,
    /// The module the client tree is placed in (`crate::pkg::client`).
    pub client: syn::Path,
    /// The runtime crate (`::kube_codegen_runtime`).
    pub runtime: syn::Path,
}

impl Default for Paths {
    fn default() -> Self {
        Paths {
            apis: syn::parse_quote!(crate::pkg::apis),
            client: syn::parse_quote!(crate::pkg::client),
            runtime: syn::parse_quote!(::kube_codegen_runtime),
        }
    }
}

/// What every emitter reads: the model and the paths.
pub struct Ctx<'a> {
    /// The validated model.
    pub model: &'a Model,
    /// Where things live.
    pub paths: &'a Paths,
    /// The CustomResourceDefinitions (empty unless the `crd` generator runs).
    pub crds: &'a [crd::Crd],
    /// Whether the client generator writes the fake clientset.
    pub fake_clientset: bool,
}

impl Ctx<'_> {
    /// The runtime crate path.
    pub fn rt(&self) -> TokenStream {
        self.paths.runtime.to_token_stream()
    }

    /// The module of one API package (`crate::pkg::apis::crddemo::v1`).
    pub fn package_path(&self, pkg: &Package) -> TokenStream {
        let apis = &self.paths.apis;
        let g = namer::ident(&pkg.group_module);
        let v = namer::ident(&pkg.version_module());
        quote!(#apis::#g::#v)
    }

    /// A type of an API package (`crate::pkg::apis::crddemo::v1::Mydemo`).
    pub fn api_type(&self, pkg: &Package, name: &str) -> TokenStream {
        let p = self.package_path(pkg);
        let n = namer::ident(name);
        quote!(#p::#n)
    }

    /// A type named by an extension method's `input=`/`result=`.
    pub fn type_ref(&self, pkg: &Package, kind: &Kind, r: &TypeRef) -> TokenStream {
        match r {
            TypeRef::Kind => self.api_type(pkg, &kind.name),
            TypeRef::Local(n) => self.api_type(pkg, n),
            TypeRef::Path(p) => {
                let rt = self.rt();
                match p
                    .strip_prefix("k8s_openapi::")
                    .or_else(|| p.strip_prefix("::k8s_openapi::"))
                {
                    Some(rest) => {
                        let rest: syn::Path =
                            syn::parse_str(rest).unwrap_or_else(|_| syn::parse_quote!(Unparsable));
                        quote!(#rt::k8s_openapi::#rest)
                    }
                    None => syn::parse_str::<syn::Path>(p)
                        .map(|p| p.to_token_stream())
                        .unwrap_or_else(|_| quote!(Unparsable)),
                }
            }
        }
    }

    /// A path inside the client tree (`crate::pkg::client::clientset::versioned`).
    pub fn client_path(&self, segments: &[&str]) -> TokenStream {
        let base = &self.paths.client;
        let segs = segments.iter().map(|s| namer::ident(s));
        quote!(#base #(::#segs)*)
    }
}

/// A generator of code-generator's family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Generator {
    /// `Clone` and `kube::Resource` impls beside the types (`zz_generated_deepcopy.rs`).
    Deepcopy,
    /// Group/version constants and the resource registry (`zz_generated_register.rs`).
    Register,
    /// The versioned clientset and one typed client per kind.
    Client,
    /// Namespace-indexed listers over informer caches.
    Lister,
    /// Shared informers and their factory.
    Informer,
    /// CustomResourceDefinition YAML per kind, and `kube::CustomResourceExt` impls beside the
    /// types (`zz_generated_crd.rs`).
    Crd,
}

impl Generator {
    /// Every generator, in the order `all` runs them.
    pub const ALL: [Generator; 6] = [
        Generator::Deepcopy,
        Generator::Register,
        Generator::Client,
        Generator::Lister,
        Generator::Informer,
        Generator::Crd,
    ];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Generator::Deepcopy => "deepcopy",
            Generator::Register => "register",
            Generator::Client => "client",
            Generator::Lister => "lister",
            Generator::Informer => "informer",
            Generator::Crd => "crd",
        }
    }

    /// Parses a CLI name.
    pub fn parse(s: &str) -> Option<Generator> {
        Generator::ALL.into_iter().find(|g| g.name() == s)
    }

    /// Runs this generator.
    pub fn emit(self, ctx: &Ctx<'_>) -> Vec<Module> {
        match self {
            Generator::Deepcopy => deepcopy::emit(ctx),
            Generator::Register => register::emit(ctx),
            Generator::Client => clientset::emit(ctx),
            Generator::Lister => listers::emit(ctx),
            Generator::Informer => informers::emit(ctx),
            Generator::Crd => crd::emit(ctx),
        }
    }
}

/// `#[doc = "…"]` for each line of `text`.
pub fn docs(text: &str) -> TokenStream {
    crate::output::doc_lines(text, false)
}
