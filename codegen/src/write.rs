//! Stage 7, write: put rendered files on disk so that a failed run leaves earlier output
//! untouched, or (`--verify-only`) compare instead of writing.
//!
//! Files arrive one by one while the workers render them ([`Stager::accept`]), so a run never
//! holds its whole output. A file whose content is already on disk is left alone, so its mtime
//! (and `cargo`'s rebuild decisions) stays put. A changed file is written at once to a
//! temporary sibling (`<name>.kube-codegen-tmp`). When every file has arrived,
//! [`Stager::finish`] finds the stale generated files — ones carrying the generated marker,
//! under a folder this run owns, that it no longer produces, and CRD YAML files of this run's
//! groups that it no longer produces — then renames each temporary over its target (an atomic
//! step per file) and removes the stale files. If anything fails before that, the temporaries
//! and the folders made for them are removed: nothing else was changed. Hand-written files are
//! never deleted.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::generated::{GENERATED_MARKER, YAML_MARKER};

/// What a run changed on disk (or, verifying, would change).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Every file the run generates, sorted.
    pub files: Vec<PathBuf>,
    /// The files whose content changed (written, or verifying: out of date), sorted.
    pub written: Vec<PathBuf>,
    /// Stale generated files removed (verifying: that would be removed), sorted.
    pub removed: Vec<PathBuf>,
}

/// Whether the file at `path` starts with the generated marker.
pub(crate) fn is_generated_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; GENERATED_MARKER.len()];
    fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == GENERATED_MARKER.as_bytes())
}

/// Whether a run writes files or only compares them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Write what changed.
    Write,
    /// Compare; [`Stager::finish`] fails with [`Error::Stale`] on any difference.
    Verify,
}

/// Where stale files are looked for.
#[derive(Debug, Default, Clone)]
pub(crate) struct Owned {
    /// Folders whose generated `.rs` files this run owns.
    pub dirs: Vec<PathBuf>,
    /// The CRD folder and the groups whose generated CRD files this run owns.
    pub crds: Option<(PathBuf, BTreeSet<String>)>,
}

/// Receives the rendered files of a run; see the [module docs](self).
#[derive(Debug)]
pub(crate) struct Stager {
    mode: Mode,
    files: BTreeSet<PathBuf>,
    changed: Vec<PathBuf>,
    staged: Vec<(PathBuf, PathBuf)>,
    created: Vec<PathBuf>,
    diff: String,
    diffs: usize,
    /// Set once the staged files are committed; until then, dropping the stager undoes them.
    committed: bool,
}

impl Drop for Stager {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        for (tmp, _) in &self.staged {
            let _ = fs::remove_file(tmp);
        }
        // Deepest first; `remove_dir` leaves any folder that something else filled meanwhile.
        for dir in self.created.iter().rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

/// How many differing files `--verify-only` shows.
const MAX_DIFF_FILES: usize = 5;

impl Stager {
    /// A stager that writes or verifies.
    pub(crate) fn new(mode: Mode) -> Self {
        Stager {
            mode,
            files: BTreeSet::new(),
            changed: Vec::new(),
            staged: Vec::new(),
            created: Vec::new(),
            diff: String::new(),
            diffs: 0,
            committed: false,
        }
    }

    /// Takes one generated file: leaves it if the disk has it already; else stages it
    /// (writing) or records the difference (verifying).
    pub(crate) fn accept(&mut self, path: PathBuf, text: String) -> Result<()> {
        if !self.files.insert(path.clone()) {
            return Err(Error::file(
                &path,
                "internal error: two generated files have this path; please report this",
            ));
        }
        let old = fs::read(&path).ok();
        if old.as_deref() == Some(text.as_bytes()) {
            return Ok(());
        }
        self.changed.push(path.clone());
        match self.mode {
            Mode::Write => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    create_dirs(parent, &mut self.created)?;
                }
                let tmp = tmp_path(&path);
                fs::write(&tmp, &text).map_err(|e| Error::io(&path, "cannot write file", e))?;
                self.staged.push((tmp, path));
            }
            Mode::Verify => {
                self.diffs += 1;
                if self.diffs <= MAX_DIFF_FILES {
                    match old.map(String::from_utf8) {
                        Some(Ok(old)) => {
                            self.diff.push_str(&format!(
                                "--- {0}\n+++ {0} (generated)\n",
                                path.display()
                            ));
                            self.diff.push_str(&short_diff(&old, &text));
                        }
                        _ => self
                            .diff
                            .push_str(&format!("missing: {}\n", path.display())),
                    }
                }
            }
        }
        Ok(())
    }

    /// Undoes what was staged: removes the temporaries and the folders made for them (as
    /// dropping an unfinished stager does).
    pub(crate) fn abort(self) {
        drop(self);
    }

    /// Finds the stale files of `owned`, then commits (writing) or reports (verifying, with
    /// `root` named in the error).
    pub(crate) fn finish(mut self, owned: &Owned, root: &Path) -> Result<Report> {
        let stale = self.stale(owned)?;
        let mut written = self.changed.clone();
        written.sort();
        let report = Report {
            files: self.files.iter().cloned().collect(),
            written,
            removed: stale.clone(),
        };
        match self.mode {
            Mode::Verify => {
                if report.written.is_empty() && report.removed.is_empty() {
                    return Ok(report);
                }
                let mut diff = self.diff.clone();
                if self.diffs > MAX_DIFF_FILES {
                    diff.push_str(&format!(
                        "… and {} more file(s)\n",
                        self.diffs - MAX_DIFF_FILES
                    ));
                }
                for path in &stale {
                    diff.push_str(&format!(
                        "stale (no longer generated): {}\n",
                        path.display()
                    ));
                }
                Err(Error::Stale {
                    root: root.to_path_buf(),
                    count: report.written.len() + report.removed.len(),
                    diff: diff.trim_end().to_string(),
                })
            }
            Mode::Write => {
                self.committed = true;
                for (tmp, path) in &self.staged {
                    fs::rename(tmp, path).map_err(|e| Error::io(path, "cannot replace file", e))?;
                }
                for path in &stale {
                    fs::remove_file(path)
                        .map_err(|e| Error::io(path, "cannot remove stale file", e))?;
                    tracing::info!(path = %path.display(), "removed stale generated file");
                }
                Ok(report)
            }
        }
    }

    fn stale(&self, owned: &Owned) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for dir in &owned.dirs {
            let mut found = Vec::new();
            walk_rs(dir, &mut found)?;
            out.extend(
                found
                    .into_iter()
                    .filter(|f| !self.files.contains(f) && is_generated_file(f)),
            );
        }
        if let Some((dir, groups)) = &owned.crds {
            out.extend(stale_crd_files(dir, &self.files, groups)?);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

/// Generated YAML files in `dir` (not its subfolders) for one of `groups` that are not in
/// `wanted`: the CRDs a run no longer produces. Hand-written files (without the marker line) and
/// CRDs of other groups (written by other runs into a shared folder) are never listed.
fn stale_crd_files(
    dir: &Path,
    wanted: &BTreeSet<PathBuf>,
    groups: &BTreeSet<String>,
) -> Result<Vec<PathBuf>> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(Vec::new());
        }
        Err(e) => return Err(Error::io(dir, "cannot read directory", e)),
    };
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(dir, "cannot read directory", e))?;
        let path = entry.path();
        let is_yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
        if is_yaml
            && path.is_file()
            && !wanted.contains(&path)
            && fs::read_to_string(&path).is_ok_and(|t| {
                t.starts_with(YAML_MARKER) && written_group(&t).is_some_and(|g| groups.contains(&g))
            })
        {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// `fs::create_dir_all`, recording each folder it creates (outermost first) in `created`.
fn create_dirs(dir: &Path, created: &mut Vec<PathBuf>) -> Result<()> {
    let missing: Vec<&Path> = dir
        .ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .take_while(|p| !p.is_dir())
        .collect();
    for d in missing.into_iter().rev() {
        match fs::create_dir(d) {
            Ok(()) => created.push(d.to_path_buf()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => {}
            Err(e) => return Err(Error::io(d, "cannot create output directory", e)),
        }
    }
    Ok(())
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".kube-codegen-tmp");
    path.with_file_name(name)
}

fn walk_rs(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        // Nothing there (or a file where the folder would be): nothing to clean up. Writing
        // will report the problem with the path it cannot create.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(());
        }
        Err(e) => return Err(Error::io(dir, "cannot read directory", e)),
    };
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(dir, "cannot read directory", e))?;
        let path = entry.path();
        if path.is_dir() {
            walk_rs(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The first differing hunk of two texts, with up to three lines of context and at most twelve
/// changed lines.
pub(crate) fn short_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let start = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut end_a = a.len();
    let mut end_b = b.len();
    while end_a > start && end_b > start && a[end_a - 1] == b[end_b - 1] {
        end_a -= 1;
        end_b -= 1;
    }
    let ctx = start.saturating_sub(3);
    let mut out = format!(
        "@@ -{},{} +{},{} @@\n",
        start + 1,
        end_a - start,
        start + 1,
        end_b - start
    );
    for l in &a[ctx..start] {
        out.push_str(&format!(" {l}\n"));
    }
    const MAX: usize = 12;
    for l in a[start..end_a].iter().take(MAX) {
        out.push_str(&format!("-{l}\n"));
    }
    for l in b[start..end_b].iter().take(MAX) {
        out.push_str(&format!("+{l}\n"));
    }
    if end_a - start > MAX || end_b - start > MAX {
        out.push_str(" …\n");
    }
    out
}

/// The `spec.group` of a CRD file this generator wrote (its emitter writes `spec:` then
/// `  group: …` first, keys being sorted).
pub(crate) fn written_group(text: &str) -> Option<String> {
    const AT: &str = "\nspec:\n  group: ";
    let rest = &text[text.find(AT)? + AT.len()..];
    let raw = rest.lines().next()?.trim();
    if raw.starts_with('"') {
        serde_json::from_str(raw).ok()
    } else {
        Some(raw.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generated(body: &str) -> String {
        format!("{GENERATED_MARKER}\n{body}")
    }

    fn stage(mode: Mode, files: Vec<(PathBuf, String)>) -> Result<Stager> {
        let mut s = Stager::new(mode);
        for (p, t) in files {
            s.accept(p, t)?;
        }
        Ok(s)
    }

    #[test]
    fn writes_changes_keeps_unchanged_and_removes_only_stale_generated_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("same.rs"), generated("same")).unwrap();
        fs::write(d.join("stale.rs"), generated("old")).unwrap();
        fs::write(d.join("handwritten.rs"), "// mine\n").unwrap();
        let files = || {
            vec![
                (d.join("same.rs"), generated("same")),
                (d.join("sub/new.rs"), generated("new")),
            ]
        };
        let owned = Owned {
            dirs: vec![d.to_path_buf()],
            crds: None,
        };
        let err = stage(Mode::Verify, files())
            .unwrap()
            .finish(&owned, d)
            .unwrap_err()
            .to_string();
        assert!(err.contains("2 file(s) differ"), "{err}");
        assert!(err.contains("missing:"), "{err}");
        assert!(err.contains("stale (no longer generated):"), "{err}");
        assert!(!d.join("sub").exists(), "verifying writes nothing");
        let report = stage(Mode::Write, files())
            .unwrap()
            .finish(&owned, d)
            .unwrap();
        assert_eq!(report.written, [d.join("sub/new.rs")]);
        assert_eq!(report.removed, [d.join("stale.rs")]);
        assert_eq!(report.files, [d.join("same.rs"), d.join("sub/new.rs")]);
        assert!(!d.join("stale.rs").exists());
        assert!(d.join("handwritten.rs").exists());
        assert_eq!(
            fs::read_to_string(d.join("sub/new.rs")).unwrap(),
            generated("new")
        );
        stage(Mode::Verify, files())
            .unwrap()
            .finish(&owned, d)
            .unwrap();
    }

    #[test]
    fn unchanged_files_keep_their_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.rs");
        fs::write(&p, generated("a")).unwrap();
        let before = fs::metadata(&p).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let report = stage(Mode::Write, vec![(p.clone(), generated("a"))])
            .unwrap()
            .finish(&Owned::default(), dir.path())
            .unwrap();
        assert!(report.written.is_empty());
        assert_eq!(fs::metadata(&p).unwrap().modified().unwrap(), before);
    }

    #[test]
    fn a_failed_write_leaves_everything_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("a.rs"), "old a").unwrap();
        // A regular file where a folder must go: no user, not even root, can write below it.
        fs::write(d.join("blocked"), "a file").unwrap();
        let err = stage(
            Mode::Write,
            vec![
                (d.join("a.rs"), "new a".into()),
                (d.join("new/deeper/c.rs"), "new c".into()),
                (d.join("blocked/b.rs"), "new b".into()),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("cannot create output directory"), "{err}");
        assert_eq!(fs::read_to_string(d.join("a.rs")).unwrap(), "old a");
        assert_eq!(fs::read_to_string(d.join("blocked")).unwrap(), "a file");
        assert!(!d.join("a.rs.kube-codegen-tmp").exists());
        assert!(
            !d.join("new").exists(),
            "folders made for the run are gone too"
        );
        let mut left: Vec<_> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["a.rs", "blocked"]);
    }

    #[test]
    fn stale_crds_are_only_generated_files_of_this_runs_groups() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let crd = |group: &str| format!("{YAML_MARKER}\napiVersion: x\nspec:\n  group: {group}\n");
        fs::write(d.join("keep.yaml"), crd("a.io")).unwrap();
        fs::write(d.join("gone.yaml"), crd("a.io")).unwrap();
        fs::write(d.join("other.yaml"), crd("b.io")).unwrap();
        fs::write(d.join("mine.yaml"), "spec:\n  group: a.io\n").unwrap();
        let wanted: BTreeSet<PathBuf> = [d.join("keep.yaml")].into();
        let groups: BTreeSet<String> = ["a.io".to_string()].into();
        assert_eq!(
            stale_crd_files(d, &wanted, &groups).unwrap(),
            [d.join("gone.yaml")]
        );
    }

    #[test]
    fn short_diff_shows_the_first_hunk() {
        let d = short_diff("a\nb\nc\nd\n", "a\nb\nX\nd\n");
        assert_eq!(d, "@@ -3,1 +3,1 @@\n a\n b\n-c\n+X\n");
    }
}
