//! Stage 6, write: put rendered files on disk so that a failed run leaves earlier output
//! untouched, or (`--verify-only`) compare instead of writing.
//!
//! Writing happens in two phases. First every changed file is written to a temporary sibling
//! (`<name>.kube-codegen-tmp`); if any of those writes fails, the temporaries are removed and
//! nothing else was changed. Then each temporary is renamed over its target (an atomic step per
//! file) and stale generated files — ones carrying the generated marker that this run no longer
//! produces — are removed. Files whose content is unchanged are not rewritten, so their mtimes
//! (and `cargo`'s rebuild decisions) stay put. Hand-written files are never deleted.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::output::GENERATED_MARKER;

/// What a run will change on disk.
#[derive(Debug, Default)]
pub struct Plan {
    /// Files to create or overwrite, with their new content.
    pub writes: Vec<(PathBuf, String)>,
    /// Files whose content is already right.
    pub unchanged: Vec<PathBuf>,
    /// Stale generated files to remove.
    pub deletes: Vec<PathBuf>,
}

/// Whether the file at `path` starts with the generated marker.
pub fn is_generated_file(path: &Path) -> bool {
    fs::read_to_string(path)
        .map(|t| t.starts_with(GENERATED_MARKER))
        .unwrap_or(false)
}

impl Plan {
    /// Plans writing `files` (absolute or cwd-relative paths and contents). Generated files under
    /// any of `owned_dirs` that are not in `files` are scheduled for removal.
    pub fn new(files: Vec<(PathBuf, String)>, owned_dirs: &[PathBuf]) -> Result<Plan> {
        let mut plan = Plan::default();
        let wanted: BTreeSet<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
        for (path, text) in files {
            match fs::read(&path) {
                Ok(old) if old == text.as_bytes() => plan.unchanged.push(path),
                _ => plan.writes.push((path, text)),
            }
        }
        for dir in owned_dirs {
            let mut found = Vec::new();
            walk_rs(dir, &mut found)?;
            for f in found {
                if !wanted.contains(&f) && is_generated_file(&f) {
                    plan.deletes.push(f);
                }
            }
        }
        plan.deletes.sort();
        Ok(plan)
    }

    /// Whether the disk already matches.
    pub fn is_clean(&self) -> bool {
        self.writes.is_empty() && self.deletes.is_empty()
    }

    /// Applies the plan: all-or-nothing for the write phase (a failure removes the temporaries
    /// and the folders it created), then renames and removals.
    pub fn apply(&self) -> Result<()> {
        let mut staged: Vec<(PathBuf, PathBuf)> = Vec::with_capacity(self.writes.len());
        let mut created: Vec<PathBuf> = Vec::new();
        let result = (|| {
            for (path, text) in &self.writes {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    create_dirs(parent, &mut created)?;
                }
                let tmp = tmp_path(path);
                fs::write(&tmp, text).map_err(|e| Error::io(path, "cannot write file", e))?;
                staged.push((tmp, path.clone()));
            }
            Ok(())
        })();
        if let Err(e) = result {
            for (tmp, _) in &staged {
                let _ = fs::remove_file(tmp);
            }
            // Deepest first; `remove_dir` leaves any folder that something else filled meanwhile.
            for dir in created.iter().rev() {
                let _ = fs::remove_dir(dir);
            }
            return Err(e);
        }
        for (tmp, path) in &staged {
            fs::rename(tmp, path).map_err(|e| Error::io(path, "cannot replace file", e))?;
        }
        for path in &self.deletes {
            fs::remove_file(path).map_err(|e| Error::io(path, "cannot remove stale file", e))?;
            tracing::info!(path = %path.display(), "removed stale generated file");
        }
        Ok(())
    }

    /// Fails with [`Error::Stale`] and a short diff when the disk does not match.
    pub fn verify(&self, root: &Path) -> Result<()> {
        if self.is_clean() {
            return Ok(());
        }
        let mut diff = String::new();
        const MAX_FILES: usize = 5;
        for (path, text) in self.writes.iter().take(MAX_FILES) {
            match fs::read_to_string(path) {
                Ok(old) => {
                    diff.push_str(&format!("--- {0}\n+++ {0} (generated)\n", path.display()));
                    diff.push_str(&short_diff(&old, text));
                }
                Err(_) => diff.push_str(&format!("missing: {}\n", path.display())),
            }
        }
        if self.writes.len() > MAX_FILES {
            diff.push_str(&format!(
                "… and {} more file(s)\n",
                self.writes.len() - MAX_FILES
            ));
        }
        for path in &self.deletes {
            diff.push_str(&format!(
                "stale (no longer generated): {}\n",
                path.display()
            ));
        }
        Err(Error::Stale {
            root: root.to_path_buf(),
            count: self.writes.len() + self.deletes.len(),
            diff: diff.trim_end().to_string(),
        })
    }
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
pub fn short_diff(old: &str, new: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn generated(body: &str) -> String {
        format!("{GENERATED_MARKER}\n{body}")
    }

    #[test]
    fn writes_changes_keeps_unchanged_and_removes_only_stale_generated_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("same.rs"), generated("same")).unwrap();
        fs::write(d.join("stale.rs"), generated("old")).unwrap();
        fs::write(d.join("handwritten.rs"), "// mine\n").unwrap();
        let files = vec![
            (d.join("same.rs"), generated("same")),
            (d.join("sub/new.rs"), generated("new")),
        ];
        let plan = Plan::new(files, &[d.to_path_buf()]).unwrap();
        assert_eq!(plan.unchanged, [d.join("same.rs")]);
        assert_eq!(plan.deletes, [d.join("stale.rs")]);
        let err = plan.verify(d).unwrap_err().to_string();
        assert!(err.contains("2 file(s) differ"), "{err}");
        assert!(err.contains("missing:"), "{err}");
        plan.apply().unwrap();
        assert!(!d.join("stale.rs").exists());
        assert!(d.join("handwritten.rs").exists());
        assert_eq!(
            fs::read_to_string(d.join("sub/new.rs")).unwrap(),
            generated("new")
        );
        Plan::new(vec![(d.join("sub/new.rs"), generated("new"))], &[])
            .unwrap()
            .verify(d)
            .unwrap();
    }

    #[test]
    fn a_failed_write_leaves_everything_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("a.rs"), "old a").unwrap();
        // A regular file where a folder must go: no user, not even root, can write below it.
        fs::write(d.join("blocked"), "a file").unwrap();
        let plan = Plan::new(
            vec![
                (d.join("a.rs"), "new a".into()),
                (d.join("new/deeper/c.rs"), "new c".into()),
                (d.join("blocked/b.rs"), "new b".into()),
            ],
            &[],
        )
        .unwrap();
        let err = plan.apply().unwrap_err().to_string();
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
    fn short_diff_shows_the_first_hunk() {
        let d = short_diff("a\nb\nc\nd\n", "a\nb\nX\nd\n");
        assert_eq!(d, "@@ -3,1 +3,1 @@\n a\n b\n-c\n+X\n");
    }
}
