//! The one options type of a generator run, shared by the three front doors: the CLI fills it
//! from flags, [`Builder`](crate::Builder) from its methods, the proc macros from their
//! `key: value` arguments. It holds what the user wrote; [`Config::validate`] checks everything
//! once, before any file is read, and reports the first problem as a typed
//! [`Error::Config`] naming the option.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::{ConfigKey, Error, Result};
use crate::namer::PluralExceptions;

/// The default CRD file name template.
pub const DEFAULT_CRD_FILE_NAME: &str = "{plural}.{group}.yaml";

/// Where the boilerplate header comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Header {
    None,
    File(PathBuf),
    Text(String),
}

/// The options of a generator run, as written by the user (paths and Rust paths as text).
///
/// ```
/// use kube_codegen::{Config, ConfigKey, Error, Generator};
///
/// let config = Config::new()
///     .apis_dir("pkg/apis")
///     .groups("crddemo:v1")
///     .client_module("crate::pkg::client")
///     .generators([Generator::Client]);
/// assert!(config.validate().is_ok());
///
/// let bad = Config::new().groups("crddemo");
/// match bad.validate() {
///     Err(Error::Config { key: ConfigKey::Groups, message }) => {
///         assert!(message.contains("expected <group>:<version>"), "{message}")
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    apis_dir: PathBuf,
    groups: Option<String>,
    output_dir: PathBuf,
    apis_module: String,
    client_module: String,
    runtime_crate: String,
    header: Header,
    plural_exceptions: Vec<String>,
    generators: BTreeSet<Generator>,
    crd_dir: Option<PathBuf>,
    crd_file_name: String,
    fake_clientset: bool,
    crd_every_version: bool,
    apply_configurations: Option<bool>,
    apply_feature: Option<String>,
    external_apply_configurations: Vec<String>,
    crd_impls: Option<bool>,
    group_features: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}

impl Config {
    /// The defaults: types under `pkg/apis`, the client tree under `pkg/client` (as
    /// `crate::pkg::apis` and `crate::pkg::client`), every generator, CRDs under
    /// `<output dir>/crd` named `{plural}.{group}.yaml`, with the fake clientset.
    pub fn new() -> Self {
        Config {
            apis_dir: PathBuf::from("pkg/apis"),
            groups: None,
            output_dir: PathBuf::from("pkg/client"),
            apis_module: "crate::pkg::apis".into(),
            client_module: "crate::pkg::client".into(),
            runtime_crate: "::kube_codegen_runtime".into(),
            header: Header::None,
            plural_exceptions: Vec::new(),
            generators: Generator::ALL.into_iter().collect(),
            crd_dir: None,
            crd_file_name: DEFAULT_CRD_FILE_NAME.into(),
            fake_clientset: true,
            crd_every_version: false,
            apply_configurations: None,
            apply_feature: None,
            external_apply_configurations: Vec::new(),
            crd_impls: None,
            group_features: false,
        }
    }

    /// The root of the API types: `<dir>/<group>/<version>/*.rs`.
    #[must_use]
    pub fn apis_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.apis_dir = dir.as_ref().to_path_buf();
        self
    }

    /// The group-versions to generate, as `generate-groups.sh` takes them:
    /// `"crddemo:v1 example:v1beta1,v1"`. Default: every version folder found.
    #[must_use]
    pub fn groups(mut self, spec: &str) -> Self {
        self.groups = Some(spec.to_string());
        self
    }

    /// The root of the client tree (`clientset/`, `listers/`, `informers/`).
    #[must_use]
    pub fn output_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.output_dir = dir.as_ref().to_path_buf();
        self
    }

    /// The Rust path of the apis tree in the crate (default `crate::pkg::apis`).
    #[must_use]
    pub fn apis_module(mut self, path: &str) -> Self {
        self.apis_module = path.to_string();
        self
    }

    /// The Rust path of the client tree in the crate (default `crate::pkg::client`).
    #[must_use]
    pub fn client_module(mut self, path: &str) -> Self {
        self.client_module = path.to_string();
        self
    }

    /// The Rust path of the runtime crate in generated code (default `::kube_codegen_runtime`).
    #[must_use]
    pub fn runtime_crate(mut self, path: &str) -> Self {
        self.runtime_crate = path.to_string();
        self
    }

    /// A file whose content is put at the top of every generated file (a licence header).
    #[must_use]
    pub fn header_file(mut self, path: impl AsRef<Path>) -> Self {
        self.header = Header::File(path.as_ref().to_path_buf());
        self
    }

    /// The header text itself, instead of a file.
    #[must_use]
    pub fn header_text(mut self, text: &str) -> Self {
        self.header = Header::Text(text.to_string());
        self
    }

    /// Adds exceptions to the plural rules, `Kind:plural[,Kind:plural…]`; may be repeated.
    #[must_use]
    pub fn plural_exceptions(mut self, spec: &str) -> Self {
        self.plural_exceptions.push(spec.to_string());
        self
    }

    /// Runs only these generators (default: all).
    #[must_use]
    pub fn generators(mut self, generators: impl IntoIterator<Item = Generator>) -> Self {
        self.generators = generators.into_iter().collect();
        self
    }

    /// Where the `crd` generator writes CustomResourceDefinition YAML (default:
    /// `<output dir>/crd`).
    #[must_use]
    pub fn crd_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.crd_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The CRD file name template: `{plural}`, `{group}`, `{singular}` and `{kind}` are
    /// replaced (default `{plural}.{group}.yaml`).
    #[must_use]
    pub fn crd_file_name(mut self, template: &str) -> Self {
        self.crd_file_name = template.to_string();
        self
    }

    /// Whether the client generator also writes `clientset::versioned::fake` (client-gen's
    /// `--fake-clientset`, default on); its code needs `kube-codegen-runtime`'s `fake` feature.
    #[must_use]
    pub fn fake_clientset(mut self, yes: bool) -> Self {
        self.fake_clientset = yes;
        self
    }

    /// Whether the typed clients get `apply(&<Kind>ApplyConfiguration, &ApplyOptions)` and
    /// `apply_status(..)` over the apply configurations of the client tree (client-gen's
    /// `--apply-configuration-package`). Default: whether the `applyconfiguration` generator is
    /// part of the run; set it when the client and the apply configurations are generated in
    /// separate runs. Without apply configurations the typed clients have no apply verbs, as in
    /// Go (`patch` with `Patch::Apply` still applies).
    #[must_use]
    pub fn apply_configurations(mut self, yes: bool) -> Self {
        self.apply_configurations = Some(yes);
        self
    }

    /// Puts the apply configurations (their whole module) and the typed clients' apply verbs
    /// behind the Cargo feature `feature`, so that a crate using the clients pays their compile
    /// cost only when it enables it (the built-in clientset's `apply`). Default: not gated.
    #[must_use]
    pub fn apply_configurations_feature(mut self, feature: impl Into<String>) -> Self {
        self.apply_feature = Some(feature.into());
        self
    }

    /// Apply configurations of types the run does not generate (client-go's
    /// `--external-applyconfigurations`, `kube_codegen.sh`'s `--applyconfig-externals`): a
    /// field of a mapped type gets the mapped configuration in its struct's apply
    /// configuration, instead of the type itself (which an apply would send whole). `spec` is a
    /// comma-separated list of
    ///
    /// * `<type path>=<configuration module>`: the type's configuration is
    ///   `<configuration module>::<Type>ApplyConfiguration`, as client-go names it (a right side
    ///   ending in `ApplyConfiguration` is taken as the configuration type itself);
    /// * `<module path>::*=<configuration module>`: every type below the module, its path
    ///   under the module kept (`k8s_openapi::api::*=::kube_codegen_kubernetes::applyconfiguration`
    ///   maps `k8s_openapi::api::core::v1::PodTemplateSpec` to
    ///   `::kube_codegen_kubernetes::applyconfiguration::core::v1::PodTemplateSpecApplyConfiguration`);
    /// * [`BUILTIN_APPLY_CONFIGURATIONS`] (`kube-codegen-kubernetes`): every built-in type,
    ///   named through k8s-openapi or through `kube_codegen_kubernetes::apis`, to the
    ///   configurations of the crate `kube-codegen-kubernetes` (which the crate must depend on
    ///   with its feature `apply`).
    ///
    /// `=` separates the two sides because Rust paths hold `:` (client-go writes
    /// `<package>.<Type>:<package>`). Repeatable; an exact type wins over a module, a longer
    /// module over a shorter one. Without a rule only k8s-openapi's `ObjectMeta`,
    /// `OwnerReference`, `Condition`, `LabelSelector` and `LabelSelectorRequirement` have
    /// configurations (the runtime's `apply::meta`), as client-go maps only `meta/v1`'s by
    /// default.
    #[must_use]
    pub fn external_apply_configurations(mut self, spec: &str) -> Self {
        self.external_apply_configurations.push(spec.to_string());
        self
    }

    /// Whether the API packages implement `kube::CustomResourceExt` (the `crd` generator's
    /// `zz_generated_crd.rs`), so that the fake clientset installs each kind's CRD and the
    /// in-memory server validates, defaults and merges server-side apply by its schema. Default:
    /// whether the `crd` generator is part of the run; set it when the client and the CRDs are
    /// generated in separate runs. Without it the fake serves the kinds without schemas (every
    /// custom list then merges atomically, as in client-go's fake).
    #[must_use]
    pub fn crd_impls(mut self, yes: bool) -> Self {
        self.crd_impls = Some(yes);
        self
    }

    /// Whether every API group of the client tree (its modules, the clientset's and the
    /// informer factory's accessors, the fake's registrations) is behind a Cargo feature named
    /// like the group's module (`#[cfg(feature = "apps")]`), so that a crate with many groups
    /// compiles only those its users enable; the fake clientset is then behind a feature `fake`
    /// (default off; the crate must declare the features).
    #[must_use]
    pub fn group_features(mut self, yes: bool) -> Self {
        self.group_features = yes;
        self
    }

    /// For the `crd` generator with one named package: also read the group's other version
    /// folders, since a CRD holds every version of its kind (the proc macro's `crd: true`).
    #[must_use]
    pub fn crd_every_version(mut self, yes: bool) -> Self {
        self.crd_every_version = yes;
        self
    }

    /// The apis dir as given.
    pub fn get_apis_dir(&self) -> &Path {
        &self.apis_dir
    }

    /// The output dir as given.
    pub fn get_output_dir(&self) -> &Path {
        &self.output_dir
    }

    /// The header file, if one was given.
    pub fn get_header_file(&self) -> Option<&Path> {
        match &self.header {
            Header::File(p) => Some(p),
            _ => None,
        }
    }

    /// The generators to run.
    pub fn get_generators(&self) -> &BTreeSet<Generator> {
        &self.generators
    }

    /// The CRD folder: the one given, or `<output dir>/crd`.
    pub fn get_crd_dir(&self) -> PathBuf {
        self.crd_dir
            .clone()
            .unwrap_or_else(|| self.output_dir.join("crd"))
    }

    /// Checks every option (the header file is read), without reading any input.
    pub fn validate(&self) -> Result<()> {
        self.settings().map(drop)
    }

    /// The checked options, as the stages use them.
    pub(crate) fn settings(&self) -> Result<Settings> {
        let err = |key: ConfigKey, message: String| Error::Config { key, message };
        if self.apis_dir.as_os_str().is_empty() {
            return Err(err(ConfigKey::ApisDir, "is empty".into()));
        }
        let groups = match &self.groups {
            Some(spec) => GroupVersions::parse_list(spec).map_err(|e| err(ConfigKey::Groups, e))?,
            None => Vec::new(),
        };
        let mut plural_exceptions = PluralExceptions::default();
        for spec in &self.plural_exceptions {
            plural_exceptions.extend(
                PluralExceptions::parse(spec).map_err(|e| err(ConfigKey::PluralExceptions, e))?,
            );
        }
        let apis_module = rust_path(ConfigKey::ApisModule, &self.apis_module)?;
        let client_module = rust_path(ConfigKey::ClientModule, &self.client_module)?;
        let runtime_crate = rust_path(ConfigKey::RuntimeCrate, &self.runtime_crate)?;
        if self.generators.is_empty() {
            return Err(err(ConfigKey::Generators, "no generator selected".into()));
        }
        check_file_name_template(&self.crd_file_name)
            .map_err(|e| err(ConfigKey::CrdFileName, e))?;
        let boilerplate = match &self.header {
            Header::None => String::new(),
            Header::Text(t) => t.clone(),
            Header::File(path) => std::fs::read_to_string(path)
                .map_err(|e| Error::io(path, "cannot read header file", e))?,
        };
        let mut external_apply_configurations = Vec::new();
        for spec in &self.external_apply_configurations {
            ExternalRule::parse_list(spec, &mut external_apply_configurations)
                .map_err(|e| err(ConfigKey::ExternalApplyConfigurations, e))?;
        }
        if self.crd_every_version && groups.len() != 1 {
            return Err(err(
                ConfigKey::Groups,
                "reading every version of a group for its CRDs needs exactly one group".into(),
            ));
        }
        Ok(Settings {
            apis_dir: self.apis_dir.clone(),
            groups,
            output_dir: self.output_dir.clone(),
            apis_module,
            client_module,
            runtime_crate,
            boilerplate,
            plural_exceptions,
            generators: self.generators.clone(),
            crd_dir: self.get_crd_dir(),
            crd_file_name: self.crd_file_name.clone(),
            fake_clientset: self.fake_clientset,
            crd_every_version: self.crd_every_version,
            apply_verbs: self
                .apply_configurations
                .unwrap_or_else(|| self.generators.contains(&Generator::ApplyConfiguration)),
            apply_feature: self.apply_feature.clone(),
            external_apply_configurations,
            fake_crds: self
                .crd_impls
                .unwrap_or_else(|| self.generators.contains(&Generator::Crd)),
            group_features: self.group_features,
        })
    }
}

/// A Rust path written as text, checked and normalized (`crate::pkg::apis`, `::kube_codegen_runtime`).
fn rust_path(key: ConfigKey, text: &str) -> Result<String> {
    let path: syn::Path = syn::parse_str(text).map_err(|e| Error::Config {
        key,
        message: format!("{text:?} is not a Rust path: {e}"),
    })?;
    let mut out = String::new();
    if path.leading_colon.is_some() {
        out.push_str("::");
    }
    for (i, seg) in path.segments.iter().enumerate() {
        if !seg.arguments.is_none() {
            return Err(Error::Config {
                key,
                message: format!("{text:?} is not a module path (it has generic arguments)"),
            });
        }
        if i > 0 {
            out.push_str("::");
        }
        out.push_str(&seg.ident.to_string());
    }
    Ok(out)
}

/// The checked options: plain data, shared by every worker of a run.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub apis_dir: PathBuf,
    pub groups: Vec<GroupVersions>,
    pub output_dir: PathBuf,
    pub apis_module: String,
    pub client_module: String,
    pub runtime_crate: String,
    pub boilerplate: String,
    pub plural_exceptions: PluralExceptions,
    pub generators: BTreeSet<Generator>,
    pub crd_dir: PathBuf,
    pub crd_file_name: String,
    pub fake_clientset: bool,
    pub crd_every_version: bool,
    /// Typed `apply`/`apply_status` over generated apply configurations.
    pub apply_verbs: bool,
    /// The Cargo feature the apply configurations and apply verbs are behind, if any.
    pub apply_feature: Option<String>,
    /// The configurations of types the run does not generate, checked.
    pub external_apply_configurations: Vec<ExternalRule>,
    /// The fake clientset installs the kinds' CRDs (their `CustomResourceExt` impls exist).
    pub fake_crds: bool,
    pub group_features: bool,
}

/// The value of [`Config::external_apply_configurations`] that maps every built-in type
/// (k8s-openapi's, and `kube-codegen-kubernetes`'s re-exports of them) to the apply
/// configurations of `kube-codegen-kubernetes` (its feature `apply`).
pub const BUILTIN_APPLY_CONFIGURATIONS: &str = "kube-codegen-kubernetes";

/// What [`BUILTIN_APPLY_CONFIGURATIONS`] stands for: the module of each tree of built-in types
/// whose group modules are those of `kube_codegen_kubernetes::applyconfiguration`.
const BUILTIN_RULES: &[&str] = &[
    "k8s_openapi::api::*",
    "k8s_openapi::apiextensions_apiserver::pkg::apis::*",
    "k8s_openapi::kube_aggregator::pkg::apis::*",
    "kube_codegen_kubernetes::apis::*",
];

/// One external apply configuration, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExternalRule {
    /// The type's path, or the module's when `module` (without a leading `::`; k8s-openapi
    /// through the runtime's re-export as `k8s_openapi::…`; `crate::…` kept).
    pub from: Vec<String>,
    /// `from` is a module: every type below it is mapped.
    pub module: bool,
    /// The configuration's module, or the configuration type itself when `is_type`.
    pub to: String,
    /// `to` names the configuration type.
    pub is_type: bool,
}

impl ExternalRule {
    /// Parses a comma-separated list of rules into `out`; an error names the entry and the
    /// cause.
    fn parse_list(spec: &str, out: &mut Vec<ExternalRule>) -> std::result::Result<(), String> {
        if spec.trim().is_empty() {
            return Err("is empty".into());
        }
        for entry in spec.split(',').map(str::trim) {
            if entry.is_empty() {
                return Err(format!("{spec:?} has an empty entry"));
            }
            let rules = if entry == BUILTIN_APPLY_CONFIGURATIONS {
                BUILTIN_RULES
                    .iter()
                    .map(|from| Self::parse(from, "::kube_codegen_kubernetes::applyconfiguration"))
                    .collect::<std::result::Result<Vec<_>, _>>()?
            } else {
                let Some((from, to)) = entry.split_once('=') else {
                    return Err(format!(
                        "{entry:?}: expected <type path>=<apply configuration module>, <module path>::*=<apply configuration module> or {BUILTIN_APPLY_CONFIGURATIONS}"
                    ));
                };
                vec![Self::parse(from.trim(), to.trim()).map_err(|e| format!("{entry:?}: {e}"))?]
            };
            for rule in rules {
                if let Some(old) = out
                    .iter()
                    .find(|r| r.from == rule.from && r.module == rule.module)
                {
                    if old != &rule {
                        return Err(format!(
                            "`{}{}` is mapped twice (to `{}` and to `{}`)",
                            rule.from.join("::"),
                            if rule.module { "::*" } else { "" },
                            old.to,
                            rule.to
                        ));
                    }
                    continue;
                }
                out.push(rule);
            }
        }
        Ok(())
    }

    fn parse(from: &str, to: &str) -> std::result::Result<ExternalRule, String> {
        let (from, module) = match from.strip_suffix("::*") {
            Some(m) => (m, true),
            None => (from, false),
        };
        let path = |text: &str, what: &str| -> std::result::Result<Vec<String>, String> {
            let p: syn::Path = syn::parse_str(text)
                .map_err(|e| format!("{what} {text:?} is not a Rust path: {e}"))?;
            if p.segments.iter().any(|s| !s.arguments.is_none()) {
                return Err(format!("{what} {text:?} has generic arguments"));
            }
            Ok(p.segments.iter().map(|s| s.ident.to_string()).collect())
        };
        let mut from_path = path(from, "the type")?;
        // k8s-openapi named through the runtime's re-export is k8s-openapi.
        if from_path.len() > 1
            && from_path[0] == "kube_codegen_runtime"
            && from_path[1] == "k8s_openapi"
        {
            from_path.remove(0);
        }
        let last = from_path.last().cloned().unwrap_or_default();
        let upper = last.starts_with(|c: char| c.is_ascii_uppercase());
        if !module && !upper {
            return Err(format!(
                "`{from}` names no type (a type starts with an upper-case letter); write `{from}::*` to map every type below a module"
            ));
        }
        if module && from_path.len() < 2 {
            return Err(format!(
                "`{from}::*` would map every type of a crate's root; name the module the types are under"
            ));
        }
        let to_path = path(to, "the apply configuration")?;
        let is_type = to_path
            .last()
            .is_some_and(|l| l.ends_with("ApplyConfiguration"));
        if module && is_type {
            return Err(format!(
                "`{to}` is a type, but `{from}::*` maps many: give the module their configurations are in"
            ));
        }
        let to = rust_path(ConfigKey::ExternalApplyConfigurations, to).map_err(|e| match e {
            Error::Config { message, .. } => message,
            other => other.to_string(),
        })?;
        Ok(ExternalRule {
            from: from_path,
            module,
            to,
            is_type,
        })
    }
}

/// A generator of code-generator's family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Generator {
    /// `Clone` and `kube::Resource` impls beside the types (`zz_generated_deepcopy.rs`).
    Deepcopy,
    /// Group/version constants and the resource registry (`zz_generated_register.rs`).
    Register,
    /// Apply configurations for server-side apply (applyconfiguration-gen): one per kind and
    /// per type it reaches, with `extract_<kind>` functions.
    ApplyConfiguration,
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
    pub const ALL: [Generator; 7] = [
        Generator::Deepcopy,
        Generator::Register,
        Generator::ApplyConfiguration,
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
            Generator::ApplyConfiguration => "applyconfiguration",
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

    /// The top-level client-tree folder this generator owns (its stale files are removed).
    pub(crate) fn client_dir(self) -> Option<&'static str> {
        match self {
            Generator::ApplyConfiguration => Some("applyconfiguration"),
            Generator::Client => Some("clientset"),
            Generator::Lister => Some("listers"),
            Generator::Informer => Some("informers"),
            Generator::Deepcopy | Generator::Register | Generator::Crd => None,
        }
    }
}

/// One group folder and the versions of it to generate, as in `crddemo:v1,v2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupVersions {
    /// The group's folder under the apis dir (not the API group name).
    pub group: String,
    /// Version folders, in the order given.
    pub versions: Vec<String>,
}

impl GroupVersions {
    /// Parses the Go script's `"<group>:<v1>,<v2> <group2>:<v1>"` form (spaces or commas
    /// between groups are both accepted when unambiguous).
    pub fn parse_list(spec: &str) -> std::result::Result<Vec<GroupVersions>, String> {
        let mut out: Vec<GroupVersions> = Vec::new();
        for entry in spec.split_whitespace() {
            let (group, versions) = entry.split_once(':').ok_or_else(|| {
                format!("invalid group-version {entry:?}: expected <group>:<version>[,<version>…]")
            })?;
            if group.is_empty() || group.contains('/') {
                return Err(format!("invalid group folder {group:?} in {entry:?}"));
            }
            let versions: Vec<String> = versions
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(String::from)
                .collect();
            if versions.is_empty() {
                return Err(format!("no version given for group {group:?}"));
            }
            match out.iter_mut().find(|g| g.group == group) {
                Some(g) => g.versions.extend(versions),
                None => out.push(GroupVersions {
                    group: group.to_string(),
                    versions,
                }),
            }
        }
        if out.is_empty() {
            return Err("no group-versions given".into());
        }
        Ok(out)
    }
}

/// Checks a CRD file name template: only known placeholders, and a file name whatever they
/// are replaced with.
pub(crate) fn check_file_name_template(template: &str) -> std::result::Result<(), String> {
    let sample = template
        .replace("{plural}", "p")
        .replace("{group}", "g.io")
        .replace("{singular}", "s")
        .replace("{kind}", "K");
    if sample.contains(['{', '}']) {
        return Err(format!(
            "{template:?} has an unknown placeholder (known: {{plural}}, {{group}}, {{singular}}, {{kind}})"
        ));
    }
    if sample.is_empty() || sample.contains(['/', '\\']) || sample == "." || sample == ".." {
        return Err(format!("{template:?} does not make a file name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(c: &Config) -> ConfigKey {
        match c.validate() {
            Err(Error::Config { key, .. }) => key,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn apply_verbs_follow_the_generator_unless_told() {
        let verbs = |c: Config| c.settings().map(|s| s.apply_verbs).unwrap();
        assert!(
            verbs(Config::new()),
            "all generators: apply configurations too"
        );
        assert!(!verbs(Config::new().generators([Generator::Client])));
        assert!(verbs(
            Config::new()
                .generators([Generator::Client])
                .apply_configurations(true)
        ));
        assert!(!verbs(Config::new().apply_configurations(false)));
    }

    #[test]
    fn fake_crds_follow_the_crd_generator_unless_told() {
        let crds = |c: Config| c.settings().map(|s| s.fake_crds).unwrap();
        assert!(crds(Config::new()));
        let client_only = || Config::new().generators([Generator::Client]);
        assert!(!crds(client_only()));
        assert!(crds(client_only().crd_impls(true)));
        assert!(!crds(Config::new().crd_impls(false)));
    }

    #[test]
    fn every_option_is_checked_once_with_its_name() {
        assert_eq!(key_of(&Config::new().groups("x")), ConfigKey::Groups);
        assert_eq!(
            key_of(&Config::new().plural_exceptions("A")),
            ConfigKey::PluralExceptions
        );
        assert_eq!(
            key_of(&Config::new().apis_module("not a path")),
            ConfigKey::ApisModule
        );
        assert_eq!(
            key_of(&Config::new().client_module("a::<b>")),
            ConfigKey::ClientModule
        );
        assert_eq!(
            key_of(&Config::new().runtime_crate("")),
            ConfigKey::RuntimeCrate
        );
        assert_eq!(
            key_of(&Config::new().crd_file_name("{nope}.yaml")),
            ConfigKey::CrdFileName
        );
        assert_eq!(key_of(&Config::new().generators([])), ConfigKey::Generators);
        let e = Config::new()
            .groups("a")
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("groups: invalid group-version \"a\""), "{e}");
        let e = Config::new()
            .header_file("/nonexistent/header.txt")
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/nonexistent/header.txt:1:1: error: cannot read header file"),
            "{e}"
        );
    }

    #[test]
    fn the_crd_dir_defaults_to_the_output_dir() {
        let c = Config::new().output_dir("out/client");
        assert_eq!(c.get_crd_dir(), Path::new("out/client/crd"));
        assert_eq!(c.crd_dir("crd").get_crd_dir(), Path::new("crd"));
        let s = Config::new()
            .apis_module(" crate :: a ")
            .runtime_crate("::rt")
            .settings()
            .unwrap();
        assert_eq!(
            (s.apis_module.as_str(), s.runtime_crate.as_str()),
            ("crate::a", "::rt")
        );
    }
}
