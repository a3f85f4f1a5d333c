//! Writing a file that holds a secret (the served server's kubeconfig, with its bearer token) so
//! that nobody else can read it and no link planted beside it receives it.
//!
//! * The content goes to a new temporary file in the target's directory, created with
//!   `O_CREAT | O_EXCL` (`create_new`) and mode 0600 from the start: an existing file or a
//!   symbolic link at that name makes the open fail instead of being followed or truncated, and
//!   there is no moment at which the file is readable by others. The name has a random part, so
//!   it cannot be planted in advance; a name that is taken is retried with another.
//! * The temporary file is renamed onto the target, so a reader sees the old file or the new one,
//!   never half of one. `rename` replaces the directory entry and never follows a link.
//! * A target that exists and is not a regular file (a symbolic link, a directory, a FIFO …) is
//!   refused with [`FakeError::UnsafeKubeconfigPath`]: we did not write it, so we do not
//!   replace it.

use std::io::Write;
use std::path::Path;

use crate::error::FakeError;

/// How many random temporary names to try before giving up (each collision means someone else
/// created that exact name, which a random 128-bit part makes all but impossible).
const ATTEMPTS: usize = 8;

/// Writes `contents` to `path` as described in the module docs: mode 0600 on Unix, never
/// through a link, all or nothing.
pub(crate) fn write_private_file(path: &Path, contents: &[u8]) -> Result<(), FakeError> {
    refuse_unless_replaceable(path)?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| FakeError::UnsafeKubeconfigPath {
            path: path.to_path_buf(),
            reason: "it names no file".into(),
        })?;
    let (tmp, mut file) = create_temporary(dir, &file_name)?;
    let result = file
        .write_all(contents)
        .and_then(|()| file.sync_all())
        .map_err(FakeError::Io)
        .and_then(|()| {
            drop(file);
            // Checked again just before the rename: a link planted since the first check is
            // refused rather than replaced (rename would not follow it either way).
            refuse_unless_replaceable(path)?;
            std::fs::rename(&tmp, path).map_err(FakeError::Io)
        });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// `Ok` when `path` does not exist or is a regular file; the typed refusal otherwise. Looks at
/// the entry itself (`symlink_metadata`), never at what a link points to.
fn refuse_unless_replaceable(path: &Path) -> Result<(), FakeError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(FakeError::Io(e)),
    };
    let kind = meta.file_type();
    let reason = if kind.is_symlink() {
        "it is a symbolic link, which this server did not write; remove it or choose another path"
    } else if kind.is_dir() {
        "it is a directory"
    } else if !kind.is_file() {
        "it is not a regular file"
    } else {
        return Ok(());
    };
    Err(FakeError::UnsafeKubeconfigPath {
        path: path.to_path_buf(),
        reason: reason.into(),
    })
}

/// Creates `.<file_name>.<random>.tmp` in `dir` with `O_EXCL` and mode 0600.
fn create_temporary(
    dir: &Path,
    file_name: &str,
) -> Result<(std::path::PathBuf, std::fs::File), FakeError> {
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let tmp = dir.join(format!(
            ".{file_name}.{}.tmp",
            uuid::Uuid::new_v4().simple()
        ));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&tmp) {
            Ok(file) => {
                // The process umask can only remove bits from 0600; make sure nothing else
                // removed the owner's own (a umask of 0200 would leave a file we cannot
                // rewrite later).
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    file.set_permissions(std::fs::Permissions::from_mode(0o600))
                        .inspect_err(|_| {
                            let _ = std::fs::remove_file(&tmp);
                        })?;
                }
                return Ok((tmp, file));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(FakeError::Io(e)),
        }
    }
    Err(FakeError::Io(last.unwrap_or_else(|| {
        std::io::Error::other("no temporary file name was free")
    })))
}
