//! Stage 1, scan: find `<apis>/<group>/<version>/*.rs`, read and parse each file with `syn`,
//! keeping the source text so that the tags stage can see plain `//` comments.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Pos, Result};
use crate::namer;

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

/// A parsed Rust source file of an API package.
#[derive(Debug)]
pub(crate) struct SourceFile {
    /// Path of the file (the apis dir joined with group, version and file name).
    pub path: PathBuf,
    /// The file's text, as read.
    pub text: String,
    /// The parsed file.
    pub ast: syn::File,
    /// Where each line of `text` starts, for the tags stage.
    pub lines: crate::tags::LineIndex,
}

impl SourceFile {
    /// The Rust module this file defines inside its package: `None` for `mod.rs`.
    pub fn module(&self) -> Option<String> {
        let stem = self.path.file_stem()?.to_str()?;
        (stem != "mod").then(|| stem.to_string())
    }
}

/// The sources of one API package, `<apis>/<group>/<version>/`.
#[derive(Debug)]
pub(crate) struct PackageSource {
    /// The group's folder name (`crddemo`, `example3.io`).
    pub group_dir: String,
    /// The version folder name (`v1`).
    pub version: String,
    /// The package folder.
    pub dir: PathBuf,
    /// Every `.rs` file of the package, sorted by name, `mod.rs` included.
    pub files: Vec<SourceFile>,
}

impl PackageSource {
    /// The package's `mod.rs`, which holds the package tags.
    pub fn mod_file(&self) -> Option<&SourceFile> {
        self.files.iter().find(|f| f.module().is_none())
    }
}

/// A package to read: `<apis>/<group>/<version>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PackageRef {
    /// The group's folder name.
    pub group_dir: String,
    /// The version folder name.
    pub version: String,
    /// The package folder.
    pub dir: PathBuf,
}

/// The packages named in `groups` (or, when empty, every `<group>/<version>` folder whose
/// version looks like `v1`, `v1beta1` …) under `apis_dir`, checked to exist. With
/// `every_version`, the other version folders of the one group named are added (a CRD holds
/// every version of its kind).
pub(crate) fn packages(
    apis_dir: &Path,
    groups: &[GroupVersions],
    every_version: bool,
) -> Result<Vec<PackageRef>> {
    if !apis_dir.is_dir() {
        return Err(Error::file(
            apis_dir,
            "apis directory does not exist or is not a directory",
        ));
    }
    let mut wanted: Vec<(String, String)> = if groups.is_empty() {
        discover(apis_dir)?
    } else {
        groups
            .iter()
            .flat_map(|g| g.versions.iter().map(|v| (g.group.clone(), v.clone())))
            .collect()
    };
    if every_version && let [g] = groups {
        let mut others: Vec<String> = Vec::new();
        for version in sorted_entries(&apis_dir.join(&g.group))? {
            if let Some(v) = file_name(&version)
                && version.is_dir()
                && namer::is_version(&v)
                && !g.versions.contains(&v)
            {
                others.push(v);
            }
        }
        wanted.extend(others.into_iter().map(|v| (g.group.clone(), v)));
    }
    if wanted.is_empty() {
        return Err(Error::file(
            apis_dir,
            "no API packages found: expected <group>/<version>/ folders such as crddemo/v1",
        ));
    }
    let mut out = Vec::with_capacity(wanted.len());
    for (group, version) in wanted {
        let dir = apis_dir.join(&group).join(&version);
        if !dir.is_dir() {
            return Err(Error::file(
                &dir,
                format!("package folder for {group}:{version} does not exist"),
            ));
        }
        if !namer::is_version(&version) {
            return Err(Error::file(
                &dir,
                format!("{version:?} is not a Kubernetes API version (v1, v1beta1, v2alpha1 …)"),
            ));
        }
        out.push(PackageRef {
            group_dir: group,
            version,
            dir,
        });
    }
    Ok(out)
}

/// Reads and parses every `.rs` file of one package.
pub(crate) fn read(package: &PackageRef) -> Result<PackageSource> {
    Ok(PackageSource {
        group_dir: package.group_dir.clone(),
        version: package.version.clone(),
        dir: package.dir.clone(),
        files: read_package(&package.dir)?,
    })
}

fn discover(apis_dir: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for group in sorted_entries(apis_dir)? {
        if !group.is_dir() {
            continue;
        }
        let Some(gname) = file_name(&group) else {
            continue;
        };
        for version in sorted_entries(&group)? {
            let Some(vname) = file_name(&version) else {
                continue;
            };
            if version.is_dir() && namer::is_version(&vname) {
                out.push((gname.clone(), vname));
            }
        }
    }
    Ok(out)
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name()?.to_str().map(String::from)
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let rd = fs::read_dir(dir).map_err(|e| Error::io(dir, "cannot read directory", e))?;
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(dir, "cannot read directory", e))?;
        out.push(entry.path());
    }
    // File-system order is arbitrary; sorting keeps output byte-identical across machines.
    out.sort();
    Ok(out)
}

/// Whether a file name is generator output (never read back as input).
pub(crate) fn is_generated_name(name: &str) -> bool {
    name.starts_with("zz_generated")
}

fn read_package(dir: &Path) -> Result<Vec<SourceFile>> {
    let mut files = Vec::new();
    for path in sorted_entries(dir)? {
        let Some(name) = file_name(&path) else {
            continue;
        };
        if !path.is_file() || !name.ends_with(".rs") || is_generated_name(&name) {
            continue;
        }
        files.push(read_source(&path)?);
    }
    Ok(files)
}

/// Reads and parses one file; the error names the file, line and column.
pub(crate) fn read_source(path: &Path) -> Result<SourceFile> {
    let bytes = fs::read(path).map_err(|e| Error::io(path, "cannot read file", e))?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let col = String::from_utf8_lossy(&valid[line_start..])
                .chars()
                .count()
                + 1;
            return Err(Error::at(
                Location::new(path, Pos { line, col }),
                "file is not valid UTF-8",
            ));
        }
    };
    parse_source(path, text)
}

/// Parses `text` as the content of `path`.
pub(crate) fn parse_source(path: &Path, text: String) -> Result<SourceFile> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let ast = syn::parse_file(body).map_err(|e| {
        Error::at(
            Location::new(path, Pos::of_span(e.span())),
            format!("cannot parse Rust: {e}"),
        )
    })?;
    Ok(SourceFile {
        path: path.to_path_buf(),
        lines: crate::tags::LineIndex::new(&text),
        text,
        ast,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_group_version_lists() {
        let g = GroupVersions::parse_list("crddemo:v1 example:v1beta1,v1 crddemo:v2").unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].versions, ["v1", "v2"]);
        assert_eq!(g[1].versions, ["v1beta1", "v1"]);
        assert!(GroupVersions::parse_list("crddemo").is_err());
        assert!(GroupVersions::parse_list("crddemo:").is_err());
        assert!(GroupVersions::parse_list("").is_err());
    }

    #[test]
    fn reports_parse_errors_with_position() {
        let err = parse_source(Path::new("x.rs"), "pub struct A {\n  a: u8,,\n}\n".into())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.rs:2:"), "{err}");
        assert!(err.contains("error: cannot parse Rust"), "{err}");
    }
}
