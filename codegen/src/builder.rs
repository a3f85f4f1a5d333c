//! A `build.rs` front door in the style of `prost_build::Config`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::config::Generator;
use crate::error::{Error, Result};
use crate::output::Layout;
use crate::pipeline;
use crate::write::{Mode, Owned};

/// Generates code into `OUT_DIR` from a `build.rs`, to be pulled in with
/// `kube_codegen_runtime::include_client!()` and `include_package!("group", "version")`.
///
/// ```no_run
/// // build.rs, in `fn main()`:
/// kube_codegen::Builder::new()
///     .apis_dir("src/pkg/apis")
///     .groups("crddemo:v1")
///     .apis_module("crate::pkg::apis")
///     .client_module("crate::client")
///     .compile()
///     .unwrap_or_else(|e| panic!("{e}"));
/// ```
///
/// The files are the CLI's, byte for byte, under `$OUT_DIR/kube-codegen/` (`client/…`,
/// `apis/<group>/<version>/zz_generated_*.rs`, `crd/*.yaml`), plus `client.rs` and
/// `apis/<group>/<version>.rs`, which declare them with `#[path = "…"]` for the include
/// macros. Only files whose content changed are rewritten, so an edit to one package leaves the
/// others' files (and their mtimes) alone.
///
/// `cargo:rerun-if-changed` is printed for the apis dir, every input file and the header file,
/// so the build script reruns exactly when an input changes (which also narrows Cargo's default
/// "any file of the package" check to these files). The generator's warnings are printed as
/// `cargo:warning=` lines, which Cargo shows.
#[derive(Debug, Clone)]
pub struct Builder {
    config: Config,
    out_dir: Option<PathBuf>,
    crd_dir_set: bool,
    emit_rerun: bool,
    rbac: Option<Rbac>,
    webhooks: Option<(PathBuf, PathBuf)>,
}

/// Where [`Builder::rbac`] reads markers and writes the role.
#[derive(Debug, Clone)]
struct Rbac {
    src_dir: PathBuf,
    role_file: PathBuf,
    name: String,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// A builder with the defaults: apis under `src/pkg/apis`, all generators, output to
    /// `$OUT_DIR/kube-codegen`, CRDs to `$OUT_DIR/kube-codegen/crd`.
    pub fn new() -> Self {
        Builder {
            config: Config::new().apis_dir("src/pkg/apis"),
            out_dir: None,
            crd_dir_set: false,
            emit_rerun: true,
            rbac: None,
            webhooks: None,
        }
    }

    /// Starts from `config` (its output dir is replaced by `$OUT_DIR/kube-codegen`).
    pub fn from_config(config: Config) -> Self {
        Builder {
            config,
            ..Builder::new()
        }
    }

    /// The options this builder describes.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The root of the API types (relative to the package root).
    pub fn apis_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.config = self.config.apis_dir(dir);
        self
    }

    /// The group-versions to generate, as `generate-groups.sh` takes them:
    /// `"crddemo:v1 example:v1beta1,v1"`. Default: every version folder found.
    pub fn groups(mut self, spec: &str) -> Self {
        self.config = self.config.groups(spec);
        self
    }

    /// The Rust path of the apis module (default `crate::pkg::apis`).
    pub fn apis_module(mut self, path: &str) -> Self {
        self.config = self.config.apis_module(path);
        self
    }

    /// The Rust path of the module that includes the client (default `crate::pkg::client`).
    pub fn client_module(mut self, path: &str) -> Self {
        self.config = self.config.client_module(path);
        self
    }

    /// The path of the runtime crate in generated code (default `::kube_codegen_runtime`).
    pub fn runtime_crate(mut self, path: &str) -> Self {
        self.config = self.config.runtime_crate(path);
        self
    }

    /// A boilerplate file put at the top of every generated file.
    pub fn header_file(mut self, path: impl AsRef<Path>) -> Self {
        self.config = self.config.header_file(path);
        self
    }

    /// Adds a plural exception (`"Endpoints", "Endpoints"`).
    pub fn plural_exception(mut self, kind: &str, plural: &str) -> Self {
        self.config = self.config.plural_exceptions(&format!("{kind}:{plural}"));
        self
    }

    /// Runs only these generators (default: all).
    pub fn generators(mut self, generators: impl IntoIterator<Item = Generator>) -> Self {
        self.config = self
            .config
            .generators(generators.into_iter().collect::<BTreeSet<_>>());
        self
    }

    /// Whether to generate `clientset::versioned::fake` (default: yes; needs the runtime's `fake`
    /// feature).
    pub fn fake_clientset(mut self, yes: bool) -> Self {
        self.config = self.config.fake_clientset(yes);
        self
    }

    /// Whether the typed clients get `apply`/`apply_status` over generated apply configurations
    /// (default: whether the `applyconfiguration` generator runs); see
    /// [`Config::apply_configurations`].
    pub fn apply_configurations(mut self, yes: bool) -> Self {
        self.config = self.config.apply_configurations(yes);
        self
    }

    /// The Cargo feature the apply configurations and the typed clients' apply verbs are
    /// behind; see [`Config::apply_configurations_feature`].
    pub fn apply_configurations_feature(mut self, feature: impl Into<String>) -> Self {
        self.config = self.config.apply_configurations_feature(feature);
        self
    }

    /// Apply configurations of types the run does not generate (client-go's
    /// `--external-applyconfigurations`), as `<type path>=<configuration module>`,
    /// `<module path>::*=<configuration module>` or
    /// [`BUILTIN_APPLY_CONFIGURATIONS`](crate::BUILTIN_APPLY_CONFIGURATIONS); see
    /// [`Config::external_apply_configurations`]. Repeatable.
    pub fn external_apply_configurations(mut self, spec: &str) -> Self {
        self.config = self.config.external_apply_configurations(spec);
        self
    }

    /// Whether the fake clientset installs the kinds' CRDs (default: whether the `crd`
    /// generator runs); see [`Config::crd_impls`].
    pub fn crd_impls(mut self, yes: bool) -> Self {
        self.config = self.config.crd_impls(yes);
        self
    }

    /// Whether each API group is behind a Cargo feature of its module's name (default: no); see
    /// [`Config::group_features`](crate::Config::group_features).
    pub fn group_features(mut self, yes: bool) -> Self {
        self.config = self.config.group_features(yes);
        self
    }

    /// Writes to `dir` instead of `$OUT_DIR` (files go to `<dir>/kube-codegen/`).
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Where the `crd` generator writes CustomResourceDefinition YAML (default:
    /// `<out>/kube-codegen/crd`). A relative path is relative to the package root, so
    /// `.crd_dir("crd")` keeps the manifests in the source tree.
    pub fn crd_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.config = self.config.crd_dir(dir);
        self.crd_dir_set = true;
        self
    }

    /// The CRD file name template (default `{plural}.{group}.yaml`; `{singular}` and `{kind}`
    /// are also replaced).
    pub fn crd_file_name(mut self, template: &str) -> Self {
        self.config = self.config.crd_file_name(template);
        self
    }

    /// Also writes the RBAC manifest of the `// +kubebuilder:rbac:…` markers under `src_dir` to
    /// `role_file` — a ClusterRole named `name` and a Role per namespace the markers name — as
    /// `kube-codegen rbac` does (relative paths are relative to the package root, so
    /// `.rbac("src", "deploy/role.yaml", "my-operator")` keeps it in the source tree). The file
    /// is rewritten only when the markers change it; a bad marker fails the build with its
    /// file and line.
    pub fn rbac(
        mut self,
        src_dir: impl AsRef<Path>,
        role_file: impl AsRef<Path>,
        name: &str,
    ) -> Self {
        self.rbac = Some(Rbac {
            src_dir: src_dir.as_ref().to_path_buf(),
            role_file: role_file.as_ref().to_path_buf(),
            name: name.to_string(),
        });
        self
    }

    /// Also writes the admission webhook configurations of the `// +kubebuilder:webhook:…`
    /// markers under `src_dir` to `file` — a `MutatingWebhookConfiguration` and a
    /// `ValidatingWebhookConfiguration`, as controller-gen writes `config/webhook/manifests.yaml`
    /// and `kube-codegen manifests` writes `deploy/webhooks.yaml`. With no marker nothing is
    /// written (and a file this generator wrote before is removed); a bad marker fails the build
    /// with its file and line.
    pub fn webhooks(mut self, src_dir: impl AsRef<Path>, file: impl AsRef<Path>) -> Self {
        self.webhooks = Some((src_dir.as_ref().to_path_buf(), file.as_ref().to_path_buf()));
        self
    }

    /// Whether to print `cargo:rerun-if-changed` lines (default: yes).
    pub fn emit_rerun_if_changed(mut self, yes: bool) -> Self {
        self.emit_rerun = yes;
        self
    }

    /// Generates and writes `<out>/kube-codegen/client.rs`,
    /// `<out>/kube-codegen/apis/<group>/<version>.rs` and the files they declare (and, with the
    /// `crd` generator, the CRD YAML files); returns every generated path, sorted.
    pub fn compile(self) -> Result<Vec<PathBuf>> {
        self.compile_with(&mut |directive| println!("{directive}"))
    }

    /// [`compile`](Self::compile), handing each Cargo directive (`cargo:rerun-if-changed=…`,
    /// `cargo:warning=…`) to `cargo` instead of printing it.
    fn compile_with(self, cargo: &mut dyn FnMut(String)) -> Result<Vec<PathBuf>> {
        let out = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or_else(|| Error::Config {
                    key: crate::error::ConfigKey::OutputDir,
                    message:
                        "OUT_DIR is not set: call compile() from a build script or set out_dir()"
                            .into(),
                })?,
        }
        .join("kube-codegen");
        // `#[path]` attributes in the included roots name the files absolutely.
        let out =
            std::path::absolute(&out).map_err(|e| Error::io(&out, "cannot resolve path", e))?;
        let mut config = self.config.clone().output_dir(&out);
        if !self.crd_dir_set {
            config = config.crd_dir(out.join("crd"));
        }
        let settings = config.settings()?;
        if self.emit_rerun {
            cargo(format!(
                "cargo:rerun-if-changed={}",
                settings.apis_dir.display()
            ));
            if let Some(h) = config.get_header_file() {
                cargo(format!("cargo:rerun-if-changed={}", h.display()));
            }
        }
        let analysis = pipeline::analyze(&settings, true)?;
        if self.emit_rerun {
            for input in &analysis.inputs {
                cargo(format!("cargo:rerun-if-changed={}", input.display()));
            }
        }
        for w in &analysis.warnings {
            cargo(format!("cargo:warning={w}"));
        }
        let owned = Owned {
            dirs: vec![out.join("client"), out.join("apis")],
            crds: settings.generators.contains(&Generator::Crd).then(|| {
                (
                    settings.crd_dir.clone(),
                    analysis
                        .model
                        .packages
                        .iter()
                        .map(|p| p.group_name.clone())
                        .collect(),
                )
            }),
        };
        let layout = Layout::Included { out: out.clone() };
        let report = crate::write_all(
            &settings,
            &analysis,
            &layout,
            &[],
            Mode::Write,
            &owned,
            &out,
        )?;
        let mut files = report.files;
        if let Some(rbac) = &self.rbac {
            if self.emit_rerun {
                cargo(format!("cargo:rerun-if-changed={}", rbac.src_dir.display()));
            }
            let text = crate::scaffold::role_yaml(&rbac.name, &rbac.src_dir)?;
            if std::fs::read_to_string(&rbac.role_file).ok().as_deref() != Some(text.as_str()) {
                if let Some(dir) = rbac
                    .role_file
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| Error::io(dir, "cannot create directory", e))?;
                }
                std::fs::write(&rbac.role_file, text)
                    .map_err(|e| Error::io(&rbac.role_file, "cannot write file", e))?;
            }
            files.push(rbac.role_file.clone());
            files.sort();
        }
        if let Some((src_dir, file)) = &self.webhooks {
            if self.emit_rerun {
                cargo(format!("cargo:rerun-if-changed={}", src_dir.display()));
            }
            if crate::scaffold::write_webhooks_file(src_dir, file)? {
                files.push(file.clone());
                files.sort();
            }
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    const MOD_RS: &str = "//! +groupName=demo.k8s.io\n//! +k8s:deepcopy-gen=package\n\nmod types;\npub use types::*;\n";
    const TYPES_RS: &str = "use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};\n\n// +genclient\n// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n\n/// A demo.\npub struct Demo {\n    /// Metadata.\n    pub metadata: ObjectMeta,\n}\n\n/// Demos.\npub struct DemoList {\n    /// Metadata.\n    pub metadata: ListMeta,\n    /// Items.\n    pub items: Vec<Demo>,\n}\n";

    #[test]
    fn rbac_markers_become_the_role_file() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let apis = tmp.path().join("src/apis");
        let pkg = apis.join("demo").join("v1");
        fs::create_dir_all(&pkg).unwrap_or_else(|e| panic!("{e}"));
        fs::write(pkg.join("mod.rs"), MOD_RS).unwrap_or_else(|e| panic!("{e}"));
        fs::write(pkg.join("types.rs"), TYPES_RS).unwrap_or_else(|e| panic!("{e}"));
        fs::write(
            tmp.path().join("src/main.rs"),
            "// +kubebuilder:rbac:groups=demo.k8s.io,resources=demos,verbs=list;watch\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let role = tmp.path().join("deploy/role.yaml");
        let written = Builder::new()
            .apis_dir(&apis)
            .out_dir(tmp.path().join("out"))
            .rbac(tmp.path().join("src"), &role, "demo-operator")
            .compile_with(&mut |_| {})
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(written.contains(&role));
        let text = fs::read_to_string(&role).unwrap_or_default();
        assert!(
            text.contains("kind: ClusterRole\nmetadata:\n  name: demo-operator\n")
                && text.contains("  - demos\n  verbs:\n  - list\n  - watch\n"),
            "{text}"
        );
        fs::write(
            tmp.path().join("src/main.rs"),
            "// +kubebuilder:rbac:groups=demo.k8s.io,resources=demos,verbs=fly\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let err = Builder::new()
            .apis_dir(&apis)
            .out_dir(tmp.path().join("out"))
            .rbac(tmp.path().join("src"), &role, "demo-operator")
            .compile_with(&mut |_| {})
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("main.rs:1:1: error: +kubebuilder:rbac: unknown verb"),
            "{err}"
        );
        assert_eq!(
            fs::read_to_string(&role).unwrap_or_default(),
            text,
            "kept on error"
        );
    }

    #[test]
    fn webhook_markers_become_the_webhooks_file() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let apis = tmp.path().join("src/apis");
        let pkg = apis.join("demo").join("v1");
        fs::create_dir_all(&pkg).unwrap_or_else(|e| panic!("{e}"));
        fs::write(pkg.join("mod.rs"), MOD_RS).unwrap_or_else(|e| panic!("{e}"));
        fs::write(pkg.join("types.rs"), TYPES_RS).unwrap_or_else(|e| panic!("{e}"));
        let main = tmp.path().join("src/main.rs");
        let marker = "// +kubebuilder:webhook:path=/validate-demo-k8s-io-v1-demo,mutating=false,failurePolicy=fail,sideEffects=None,groups=demo.k8s.io,resources=demos,verbs=create;update,versions=v1,name=vdemo-v1.kb.io,admissionReviewVersions=v1\n";
        fs::write(&main, marker).unwrap_or_else(|e| panic!("{e}"));
        let file = tmp.path().join("deploy/webhooks.yaml");
        let build = || {
            Builder::new()
                .apis_dir(&apis)
                .out_dir(tmp.path().join("out"))
                .webhooks(tmp.path().join("src"), &file)
                .compile_with(&mut |_| {})
        };
        let written = build().unwrap_or_else(|e| panic!("{e}"));
        assert!(written.contains(&file));
        let text = fs::read_to_string(&file).unwrap_or_default();
        assert!(
            text.contains("kind: ValidatingWebhookConfiguration\nmetadata:\n  name: validating-webhook-configuration\n")
                && text.contains("      path: /validate-demo-k8s-io-v1-demo\n"),
            "{text}"
        );
        fs::write(
            &main,
            marker.replace("failurePolicy=fail", "failurePolicy=maybe"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let err = build().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            err.contains("main.rs:1:1: error: +kubebuilder:webhook: failurePolicy: \"maybe\""),
            "{err}"
        );
        assert_eq!(
            fs::read_to_string(&file).unwrap_or_default(),
            text,
            "kept on error"
        );
        // The markers gone, so is the file the generator wrote for them.
        fs::write(&main, "fn main() {}\n").unwrap_or_else(|e| panic!("{e}"));
        let written = build().unwrap_or_else(|e| panic!("{e}"));
        assert!(!written.contains(&file) && !file.exists());
    }

    #[test]
    fn the_conversion_marker_gives_the_crd_its_webhook() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let apis = tmp.path().join("apis");
        let mod_rs = MOD_RS.replace("demo.k8s.io", "demo.example.com");
        for (version, tags) in [
            (
                "v1",
                "// +kubebuilder:storageversion\n// +kube-codegen:webhook:conversion\n",
            ),
            ("v2", ""),
        ] {
            let pkg = apis.join("demo").join(version);
            fs::create_dir_all(&pkg).unwrap_or_else(|e| panic!("{e}"));
            fs::write(pkg.join("mod.rs"), &mod_rs).unwrap_or_else(|e| panic!("{e}"));
            let types = TYPES_RS.replace(
                "runtime.Object\n\n/// A demo.",
                &format!("runtime.Object\n{tags}\n/// A demo."),
            );
            fs::write(pkg.join("types.rs"), types).unwrap_or_else(|e| panic!("{e}"));
        }
        let crds = tmp.path().join("crds");
        let build = || {
            Builder::new()
                .apis_dir(&apis)
                .out_dir(tmp.path().join("out"))
                .crd_dir(&crds)
                .compile_with(&mut |_| {})
        };
        build().unwrap_or_else(|e| panic!("{e}"));
        let crd = fs::read_to_string(crds.join("demos.demo.example.com.yaml")).unwrap_or_default();
        assert!(
            crd.contains(
                "spec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service:\n          name: webhook-service\n          namespace: system\n          path: /convert\n      conversionReviewVersions:\n      - v1\n  group: demo.example.com\n"
            ),
            "{crd}"
        );
        // Its own Service and path.
        let v1 = apis.join("demo/v1/types.rs");
        let text = fs::read_to_string(&v1).unwrap_or_default();
        fs::write(
            &v1,
            text.replace(
                "conversion\n",
                "conversion:serviceName=my-webhooks,serviceNamespace=ops,path=/my-convert\n",
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        build().unwrap_or_else(|e| panic!("{e}"));
        let crd = fs::read_to_string(crds.join("demos.demo.example.com.yaml")).unwrap_or_default();
        assert!(
            crd.contains("          name: my-webhooks\n          namespace: ops\n          path: /my-convert\n"),
            "{crd}"
        );
        fs::write(&v1, text.replace("conversion\n", "conversion:port=1\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        let err = build().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            err.contains("types.rs:6:4: error: +kube-codegen:webhook:conversion:port: unknown argument \"port\""),
            "{err}"
        );
        // One version: nothing to convert between.
        fs::remove_dir_all(apis.join("demo/v2")).unwrap_or_else(|e| panic!("{e}"));
        fs::write(&v1, &text).unwrap_or_else(|e| panic!("{e}"));
        let err = build().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            err.contains("types.rs:6:4: error: +kube-codegen:webhook:conversion: Demo has only the version v1; a conversion webhook converts between versions"),
            "{err}"
        );
    }

    #[test]
    fn cargo_hears_of_every_input_and_every_warning() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let apis = tmp.path().join("apis");
        let pkg = apis.join("demo").join("v1");
        fs::create_dir_all(&pkg).unwrap_or_else(|e| panic!("{e}"));
        fs::write(pkg.join("mod.rs"), MOD_RS).unwrap_or_else(|e| panic!("{e}"));
        fs::write(pkg.join("types.rs"), TYPES_RS).unwrap_or_else(|e| panic!("{e}"));
        let header = tmp.path().join("boilerplate.txt");
        fs::write(&header, "// Copyright.\n").unwrap_or_else(|e| panic!("{e}"));

        let mut directives = Vec::new();
        let written = Builder::new()
            .apis_dir(&apis)
            .header_file(&header)
            .out_dir(tmp.path().join("out"))
            .compile_with(&mut |d| directives.push(d))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            written
                .iter()
                .any(|p| p.ends_with("kube-codegen/client.rs"))
        );
        let client_rs = std::fs::read_to_string(tmp.path().join("out/kube-codegen/client.rs"))
            .unwrap_or_else(|e| panic!("{e}"));
        let declared = tmp.path().join("out/kube-codegen/client/clientset/mod.rs");
        assert!(
            client_rs.contains(&format!(
                "#[path = \"{}\"]\npub mod clientset;",
                declared.display()
            )),
            "{client_rs}"
        );
        assert!(declared.is_file());

        let rerun: Vec<&str> = directives
            .iter()
            .filter_map(|d| d.strip_prefix("cargo:rerun-if-changed="))
            .collect();
        let want = [
            apis.display().to_string(),
            header.display().to_string(),
            pkg.join("mod.rs").display().to_string(),
            pkg.join("types.rs").display().to_string(),
        ];
        assert_eq!(rerun, want.iter().map(String::as_str).collect::<Vec<_>>());

        let warnings: Vec<&str> = directives
            .iter()
            .filter_map(|d| d.strip_prefix("cargo:warning="))
            .collect();
        assert_eq!(warnings.len(), 1, "{directives:?}");
        assert!(
            warnings[0].starts_with(&format!("{}:", pkg.join("types.rs").display()))
                && warnings[0]
                    .contains(": warning: demos.demo.k8s.io: group demo.k8s.io is protected")
                && warnings[0].contains("api-approved.kubernetes.io"),
            "{}",
            warnings[0]
        );

        directives.clear();
        Builder::new()
            .apis_dir(&apis)
            .out_dir(tmp.path().join("out"))
            .emit_rerun_if_changed(false)
            .generators([Generator::Client])
            .compile_with(&mut |d| directives.push(d))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(directives.is_empty(), "{directives:?}");
    }
}
