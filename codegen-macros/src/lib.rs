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
//! // src/client.rs: the clientset, listers and informers
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
//! `generators: "client,…"` (`generate_client!` only), `crd: true` (`generate_package!` only:
//! also implement `kube::CustomResourceExt` for the package's kinds, with the CRD built from
//! every version folder of the group, as the CLI's `crd` generator writes it), and
//! `emit_source: true`, which adds `pub const GENERATED_SOURCE: &str` holding the generated
//! text (for inspection and tests).
#![deny(missing_docs)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use proc_macro::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitBool, LitStr, Token};

use kube_codegen::{Config, Generator, GroupVersions, PluralExceptions};

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
    crd: bool,
    group: Option<String>,
    version: Option<String>,
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

fn path(key: &Ident, v: &Value) -> syn::Result<syn::Path> {
    match v {
        Value::Path(p) => Ok(p.clone()),
        Value::Str(s) => s.parse(),
        Value::Bool(_) => Err(syn::Error::new(key.span(), format!("`{key}` takes a path"))),
    }
}

fn request(args: Args, package: bool) -> syn::Result<Request> {
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut config = Config {
        apis_dir: PathBuf::new(),
        ..Config::default()
    };
    if package {
        config.generators = [Generator::Deepcopy, Generator::Register].into();
    } else {
        config.generators = Generator::ALL
            .into_iter()
            // Package-side generators (and crd, whose output is beside the types) belong to
            // generate_package!.
            .filter(|g| {
                !matches!(
                    g,
                    Generator::Deepcopy | Generator::Register | Generator::Crd
                )
            })
            .collect();
    }
    let mut req = Request {
        config,
        emit_source: false,
        crd: false,
        group: None,
        version: None,
    };
    let mut groups = None;
    for (key, value) in &args.entries {
        match key.to_string().as_str() {
            "apis_dir" => req.config.apis_dir = root.join(string(key, value)?),
            "groups" if !package => groups = Some(string(key, value)?),
            "group" if package => req.group = Some(string(key, value)?),
            "version" if package => req.version = Some(string(key, value)?),
            "apis_module" => req.config.paths.apis = path(key, value)?,
            "client_module" => req.config.paths.client = path(key, value)?,
            "runtime_crate" => req.config.paths.runtime = path(key, value)?,
            "plural_exceptions" => {
                let ex = PluralExceptions::parse(&string(key, value)?)
                    .map_err(|e| syn::Error::new(key.span(), e))?;
                req.config.plural_exceptions.extend(ex);
            }
            "generators" if !package => {
                let mut set = BTreeSet::new();
                for name in string(key, value)?.split(',').map(str::trim) {
                    let g = Generator::parse(name).ok_or_else(|| {
                        syn::Error::new(key.span(), format!("unknown generator {name:?}"))
                    })?;
                    set.insert(g);
                }
                req.config.generators = set;
            }
            "crd" if package => match value {
                Value::Bool(b) => req.crd = b.value,
                _ => {
                    return Err(syn::Error::new(key.span(), "`crd` takes true or false"));
                }
            },
            "fake_clientset" if !package => match value {
                Value::Bool(b) => req.config.fake_clientset = b.value,
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        "`fake_clientset` takes true or false",
                    ));
                }
            },
            "emit_source" => match value {
                Value::Bool(b) => req.emit_source = b.value,
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        "`emit_source` takes true or false",
                    ));
                }
            },
            other => {
                return Err(syn::Error::new(
                    key.span(),
                    format!("unknown option `{other}`"),
                ));
            }
        }
    }
    if req.config.apis_dir.as_os_str().is_empty() {
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
        let mut versions = vec![v.clone()];
        if req.crd {
            // A CRD holds every version of its kind: read the group's other version folders too
            // (only this package's modules are expanded).
            req.config.generators.insert(Generator::Crd);
            let dir = req.config.apis_dir.join(g);
            let mut found: Vec<String> = std::fs::read_dir(&dir)
                .map_err(|e| {
                    syn::Error::new(
                        proc_macro2::Span::call_site(),
                        format!("cannot read {}: {e}", dir.display()),
                    )
                })?
                .flatten()
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().to_str().map(String::from))
                .filter(|n| kube_codegen::namer::is_version(n) && n != v)
                .collect();
            found.sort();
            versions.extend(found);
        }
        req.config.groups = vec![GroupVersions {
            group: g.clone(),
            versions,
        }];
    } else if let Some(spec) = groups {
        req.config.groups = GroupVersions::parse_list(&spec)
            .map_err(|e| syn::Error::new(proc_macro2::Span::call_site(), e))?;
    }
    Ok(req)
}

/// Runs the generator with proc-macro2 in its fallback mode, so `syn` reports real line numbers
/// for the files it reads (tags are found by line), and returns the rendered text plus inputs.
fn run(req: &Request, package: bool) -> Result<(String, Vec<PathBuf>), String> {
    proc_macro2::fallback::force();
    let result = (|| {
        let generation = kube_codegen::generate(&req.config).map_err(|e| e.to_string())?;
        // Stable proc macros cannot raise warnings; rustc's stderr, which Cargo shows, is the
        // nearest place (`path:line:col: warning: …`, as the CLI prints them).
        for w in generation.warnings() {
            eprintln!("{w}");
        }
        let files = generation.inline_files().map_err(|e| e.to_string())?;
        let want = match (&req.group, &req.version) {
            (Some(g), Some(v)) if package => PathBuf::from("apis").join(g).join(format!("{v}.rs")),
            _ => PathBuf::from("client.rs"),
        };
        let text = files
            .into_iter()
            .find(|f| f.path == want)
            .map(|f| f.text)
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
    let (text, inputs) = match run(&req, package) {
        Ok(v) => v,
        Err(msg) => return quote!(::core::compile_error!(#msg);).into(),
    };
    let code: TokenStream = match text.parse() {
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
