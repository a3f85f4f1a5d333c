//! The `PROJECT` file at a scaffolded project's root (Kubebuilder's idea): what `kube-codegen
//! new` and `add …` have made, read by every later command.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ScaffoldError;

/// The file's name.
pub const PROJECT_FILE: &str = "PROJECT";

/// The format this version writes and reads.
const VERSION: &str = "1";

/// A scaffolded project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    /// The format version (`"1"`).
    pub version: String,
    /// The crate and binary name.
    pub project_name: String,
    /// The domain API groups are under (`meitu.com`), if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// The namespace `deploy/` installs the operator in.
    pub namespace: String,
    /// The kinds added with `add api`.
    #[serde(default)]
    pub resources: Vec<ApiResource>,
}

/// One kind of the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiResource {
    /// The API group (`mtsre.meitu.com`).
    pub group: String,
    /// Its folder under `src/pkg/apis` (`mtsre`).
    pub group_dir: String,
    /// The version (`v1`).
    pub version: String,
    /// The kind (`Eru`).
    pub kind: String,
    /// The resource (`erus`).
    pub plural: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether `add controller` has written its controller.
    #[serde(default)]
    pub controller: bool,
    /// The webhooks `add webhook` has written for this version of the kind (Kubebuilder's
    /// `webhooks` of a PROJECT resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<Webhooks>,
}

/// The webhooks of one version of a kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Webhooks {
    /// A defaulting (mutating) webhook.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defaulting: bool,
    /// A validating webhook.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub validation: bool,
    /// A conversion webhook, this version being the hub.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conversion: bool,
    /// The version of the `…WebhookConfiguration`s (`v1`).
    pub webhook_version: String,
}

impl Project {
    /// A new project's record.
    pub fn new(name: &str, domain: Option<&str>) -> Self {
        Project {
            version: VERSION.into(),
            project_name: name.into(),
            domain: domain.map(String::from),
            namespace: "default".into(),
            resources: Vec::new(),
        }
    }

    /// Reads `dir/PROJECT`.
    pub fn read(dir: &Path) -> Result<Project, ScaffoldError> {
        let path = dir.join(PROJECT_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ScaffoldError::NotAProject {
                    dir: dir.to_path_buf(),
                });
            }
            Err(e) => return Err(crate::Error::io(&path, "cannot read file", e).into()),
        };
        let project: Project =
            serde_saphyr::from_str(&text).map_err(|e| ScaffoldError::ProjectFile {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        if project.version != VERSION {
            return Err(ScaffoldError::ProjectFile {
                path,
                reason: format!(
                    "version {:?} is not one this kube-codegen reads (\"{VERSION}\")",
                    project.version
                ),
            });
        }
        Ok(project)
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or_default();
        format!(
            "# Written by kube-codegen (new, add api, add controller, add webhook); read by its later commands.\n{}",
            crate::crd::yaml::to_yaml(&value)
        )
    }

    /// The kind `group`/`version`/`kind`, if added.
    pub fn resource(&self, group: &str, version: &str, kind: &str) -> Option<&ApiResource> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
    }
}
