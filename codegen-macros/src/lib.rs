//! kube-codegen as procedural macros, for crates that want no build step.
//!
//! Both macros run the very generator the `kube-codegen` CLI and `build.rs` builder run, and
//! expand to the same code as the builder's `include_client!`/`include_package!` files.
//! Paths are relative to the invoking crate's `Cargo.toml`; every input file is tracked, so
//! editing a type re-expands the macro.
//!
//! ```ignore
//! // src/pkg/apis/crddemo/v1/mod.rs: deep copy, Resource impls and registration
//! kube_codegen_macros::generate_package! {
//!     apis_dir: "src/pkg/apis",
//!     group: "crddemo",
//!     version: "v1",
//! }
//!
//! // src/client.rs: apply configurations, the clientset, listers and informers
//! kube_codegen_macros::generate_client! {
//!     apis_dir: "src/pkg/apis",
//!     groups: "crddemo:v1",
//!     apis_module: crate::pkg::apis,
//!     client_module: crate::client,
//! }
//! ```
//!
//! Options (all but `apis_dir` optional): `groups: "g:v1,v2 g2:v1"`, `apis_module: path`,
//! `client_module: path`, `runtime_crate: path`, `plural_exceptions: "Kind:plural,…"`,
//! `fake_clientset: false` (`generate_client!`; default true, needs the runtime's `fake` feature),
//! `generators: "applyconfiguration,client,lister,informer"` (`generate_client!` only; the
//! default is all four), `apply_configurations: bool` (`generate_client!`: whether the typed
//! clients get `apply` verbs; default: whether `applyconfiguration` is generated),
//! `external_apply_configurations: "kube-codegen-kubernetes"` (`generate_client!`: the apply
//! configurations of types the run does not generate, as `Config::external_apply_configurations`),
//! `crd_impls: true` (`generate_client!`: the package has `crd: true`, so the fake clientset
//! installs the kinds' CRDs), `crd: true` (`generate_package!` only:
//! also implement `kube::CustomResourceExt` for the package's kinds, with the CRD built from
//! every version folder of the group, as the CLI's `crd` generator writes it), and
//! `emit_source: true`, which adds `pub const GENERATED_SOURCE: &str` holding the generated
//! text (for inspection and tests).
#![deny(missing_docs)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::str::FromStr;

use proc_macro::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitBool, LitStr, Token};

use kube_codegen::{Config, ConfigKey, Error, Generator};

enum Value {
    Str(LitStr),
    Path(syn::Path),
    Bool(LitBool),
}

struct Args {
    entries: Vec<(Ident, Value)>,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut entries = Vec::new();
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            if !input.peek(Token![:]) && !input.peek(Token![=]) {
                return Err(input.error("expected `:` after the option name"));
            }
            if input.peek(Token![:]) {
                input.parse::<Token![:]>()?;
            } else {
                input.parse::<Token![=]>()?;
            }
            let value = if input.peek(LitStr) {
                Value::Str(input.parse()?)
            } else if input.peek(LitBool) {
                Value::Bool(input.parse()?)
            } else {
                Value::Path(input.parse()?)
            };
            entries.push((key, value));
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(Args { entries })
    }
}

struct Request {
    config: Config,
    emit_source: bool,
    group: Option<String>,
    version: Option<String>,
    /// Where each option was written, for errors.
    spans: Vec<(String, proc_macro2::Span)>,
}

fn string(key: &Ident, v: &Value) -> syn::Result<String> {
    match v {
        Value::Str(s) => Ok(s.value()),
        _ => Err(syn::Error::new(
            key.span(),
            format!("`{key}` takes a string literal"),
        )),
    }
}

fn path(key: &Ident, v: &Value) -> syn::Result<String> {
    match v {
        Value::Path(p) => Ok(quote!(#p).to_string().replace(' ', "")),
        Value::Str(s) => Ok(s.value()),
        Value::Bool(_) => Err(syn::Error::new(key.span(), format!("`{key}` takes a path"))),
    }
}

fn boolean(key: &Ident, v: &Value) -> syn::Result<bool> {
    match v {
        Value::Bool(b) => Ok(b.value),
        _ => Err(syn::Error::new(
            key.span(),
            format!("`{key}` takes true or false"),
        )),
    }
}

fn request(args: Args, package: bool) -> syn::Result<Request> {
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    let generators: BTreeSet<Generator> = if package {
        [Generator::Deepcopy, Generator::Register].into()
    } else {
        // Package-side generators (and crd, whose output is beside the types) belong to
        // generate_package!.
        Generator::ALL
            .into_iter()
            .filter(|g| {
                !matches!(
                    g,
                    Generator::Deepcopy | Generator::Register | Generator::Crd
                )
            })
            .collect()
    };
    let mut req = Request {
        config: Config::new().apis_dir("").generators(generators),
        emit_source: false,
        group: None,
        version: None,
        spans: Vec::new(),
    };
    let mut crd = false;
    for (key, value) in &args.entries {
        let name = key.to_string();
        req.spans.push((name.clone(), key.span()));
        let c = req.config.clone();
        req.config = match name.as_str() {
            "apis_dir" => c.apis_dir(root.join(string(key, value)?)),
            "groups" if !package => c.groups(&string(key, value)?),
            "group" if package => {
                req.group = Some(string(key, value)?);
                c
            }
            "version" if package => {
                req.version = Some(string(key, value)?);
                c
            }
            "apis_module" => c.apis_module(&path(key, value)?),
            "client_module" => c.client_module(&path(key, value)?),
            "runtime_crate" => c.runtime_crate(&path(key, value)?),
            "plural_exceptions" => c.plural_exceptions(&string(key, value)?),
            "generators" if !package => {
                let mut set = BTreeSet::new();
                for name in string(key, value)?.split(',').map(str::trim) {
                    let g = Generator::parse(name).ok_or_else(|| {
                        syn::Error::new(key.span(), format!("unknown generator {name:?}"))
                    })?;
                    set.insert(g);
                }
                c.generators(set)
            }
            "crd" if package => {
                crd = boolean(key, value)?;
                c
            }
            "fake_clientset" if !package => c.fake_clientset(boolean(key, value)?),
            "apply_configurations" if !package => c.apply_configurations(boolean(key, value)?),
            "external_apply_configurations" if !package => {
                c.external_apply_configurations(&string(key, value)?)
            }
            "crd_impls" if !package => c.crd_impls(boolean(key, value)?),
            "group_features" if !package => c.group_features(boolean(key, value)?),
            "emit_source" => {
                req.emit_source = boolean(key, value)?;
                c
            }
            other => {
                return Err(syn::Error::new(
                    key.span(),
                    format!("unknown option `{other}`"),
                ));
            }
        };
    }
    if req.config.get_apis_dir().as_os_str().is_empty() {
        return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "missing `apis_dir: \"…\"`",
        ));
    }
    if package {
        let (Some(g), Some(v)) = (&req.group, &req.version) else {
            return Err(syn::Error::new(
                proc_macro2::Span::call_site(),
                "generate_package! needs `group: \"…\"` and `version: \"…\"`",
            ));
        };
        req.config = req.config.clone().groups(&format!("{g}:{v}"));
        if crd {
            // A CRD holds every version of its kind: the generator reads the group's other
            // version folders too (only this package's modules are expanded).
            let mut generators = req.config.get_generators().clone();
            generators.insert(Generator::Crd);
            req.config = req
                .config
                .clone()
                .generators(generators)
                .crd_every_version(true);
        }
    }
    if let Err(e) = req.config.validate() {
        return Err(config_error(&req, &e));
    }
    Ok(req)
}

/// An option error at the option's key (or the call site).
fn config_error(req: &Request, e: &Error) -> syn::Error {
    let span = match e {
        Error::Config { key, .. } => {
            let name = match key {
                ConfigKey::Groups if req.group.is_some() => "group",
                k => k.name(),
            };
            req.spans.iter().find(|(n, _)| n == name).map(|(_, s)| *s)
        }
        _ => None,
    };
    syn::Error::new(
        span.unwrap_or_else(proc_macro2::Span::call_site),
        e.to_string(),
    )
}

/// Runs the generator with proc-macro2 in its fallback mode, so `syn` reports real line numbers
/// for the files it reads (tags are found by line), and returns the rendered text plus inputs.
fn run(req: &Request) -> Result<(String, Vec<PathBuf>), String> {
    proc_macro2::fallback::force();
    let result = (|| {
        let generation = kube_codegen::generate(&req.config).map_err(|e| e.to_string())?;
        // Stable proc macros cannot raise warnings; rustc's stderr, which Cargo shows, is the
        // nearest place (`path:line:col: warning: …`, as the CLI prints them).
        for w in generation.warnings() {
            eprintln!("{w}");
        }
        let text = match (&req.group, &req.version) {
            (Some(g), Some(v)) => generation.package_source(g, v),
            _ => generation.client_source(),
        }
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
        Ok((text, generation.inputs().to_vec()))
    })();
    proc_macro2::fallback::unforce();
    result
}

fn expand(input: TokenStream, package: bool) -> TokenStream {
    let args = match syn::parse::<Args>(input) {
        Ok(a) => a,
        Err(e) => return e.to_compile_error().into(),
    };
    let req = match request(args, package) {
        Ok(r) => r,
        Err(e) => return e.to_compile_error().into(),
    };
    let (text, inputs) = match run(&req) {
        Ok(v) => v,
        Err(msg) => return quote!(::core::compile_error!(#msg);).into(),
    };
    let code: TokenStream = match TokenStream::from_str(&text) {
        Ok(ts) => ts,
        Err(e) => {
            let msg = format!("kube-codegen produced code that does not tokenize: {e}");
            return quote!(::core::compile_error!(#msg);).into();
        }
    };
    let tracked = inputs.iter().map(|p| {
        let p = p.to_string_lossy().into_owned();
        quote!(
            const _: &[u8] = include_bytes!(#p);
        )
    });
    let source = req.emit_source.then(|| {
        quote! {
            /// The code this macro generated, as text (`emit_source: true`).
            pub const GENERATED_SOURCE: &str = #text;
        }
    });
    let mut out: TokenStream = quote!(#(#tracked)* #source).into();
    out.extend(code);
    out
}

/// Expands to the generated client tree (clientset and, when those generators exist,
/// listers and informers) as inline modules. See the crate docs for options.
#[proc_macro]
pub fn generate_client(input: TokenStream) -> TokenStream {
    expand(input, false)
}

/// Expands, inside an API package's module, to its generated deep-copy (`Clone`,
/// `kube::Resource`) and registration code. See the crate docs for options.
#[proc_macro]
pub fn generate_package(input: TokenStream) -> TokenStream {
    expand(input, true)
}
