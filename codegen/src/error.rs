//! The generator's error type.
//!
//! Every error renders as one line in the compiler's format, `path:line:col: error: cause`, so
//! editors and CI logs can jump to the place. Problems that concern a whole file or folder (a
//! missing apis dir, an unwritable output dir) point at `1:1` of that path.

use std::fmt;
use std::path::{Path, PathBuf};

/// A position in a source file: 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
}

impl Pos {
    /// The first character of a file.
    pub const START: Pos = Pos { line: 1, col: 1 };

    /// A position from a `proc_macro2` span (whose columns are 0-based).
    pub fn of_span(span: proc_macro2::Span) -> Pos {
        let lc = span.start();
        Pos {
            line: lc.line.max(1),
            col: lc.column + 1,
        }
    }
}

/// A place in the input: a file and a position in it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// The file, as the user named it (relative paths stay relative).
    pub path: PathBuf,
    /// Where in the file.
    pub pos: Pos,
}

impl Location {
    /// A location at `pos` in `path`.
    pub fn new(path: impl Into<PathBuf>, pos: Pos) -> Self {
        Location {
            path: path.into(),
            pos,
        }
    }

    /// The start of `path`, for errors about a whole file or folder.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Location::new(path, Pos::START)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            self.path.display(),
            self.pos.line,
            self.pos.col
        )
    }
}

/// Everything that can go wrong in a generator run. None is worth retrying as is: each needs
/// the input, the options or the file system fixed first.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An option is invalid (checked by [`Config::validate`](crate::Config::validate) before any
    /// input is read).
    #[error("{key}: {message}")]
    Config {
        /// The option.
        key: ConfigKey,
        /// What is wrong with its value.
        message: String,
    },
    /// The input is wrong: bad Rust, a bad tag, an invalid model.
    #[error("{location}: error: {message}")]
    Input {
        /// Where the problem is.
        location: Location,
        /// What is wrong, in one sentence.
        message: String,
    },
    /// Reading the input or writing the output failed.
    #[error("{}:1:1: error: {action}: {source}", path.display())]
    Io {
        /// The file or folder concerned.
        path: PathBuf,
        /// What the generator was doing, e.g. "cannot read file".
        action: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// `--verify-only` found generated files that differ from what the generator would write.
    #[error("{}:1:1: error: generated code is out of date ({} file(s) differ); run the generator to update it\n{diff}", root.display(), count)]
    Stale {
        /// The output root that was checked.
        root: PathBuf,
        /// How many files differ, are missing, or are left over.
        count: usize,
        /// A short, human-readable diff of the first differences.
        diff: String,
    },
}

impl Error {
    /// An input error at `location`.
    pub fn at(location: Location, message: impl Into<String>) -> Self {
        Error::Input {
            location,
            message: message.into(),
        }
    }

    /// An input error concerning a whole file or folder.
    pub fn file(path: impl AsRef<Path>, message: impl Into<String>) -> Self {
        Error::at(Location::file(path.as_ref()), message)
    }

    /// An I/O error while doing `action` on `path`.
    pub fn io(path: impl AsRef<Path>, action: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            action,
            source,
        }
    }
}

/// The generator's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An option of [`Config`](crate::Config), as errors name it. `Display` gives the name the builder method and
/// the proc-macro key share (`client_module`); [`ConfigKey::cli_flag`] the CLI's spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConfigKey {
    /// The root of the API types.
    ApisDir,
    /// The group-versions to generate.
    Groups,
    /// The root of the client tree.
    OutputDir,
    /// The Rust path of the apis tree.
    ApisModule,
    /// The Rust path of the client tree.
    ClientModule,
    /// The Rust path of the runtime crate.
    RuntimeCrate,
    /// The boilerplate header file.
    HeaderFile,
    /// `Kind:plural` exceptions.
    PluralExceptions,
    /// The generators to run.
    Generators,
    /// The CRD output folder.
    CrdDir,
    /// The CRD file name template.
    CrdFileName,
    /// The apply configurations of types the run does not generate.
    ExternalApplyConfigurations,
}

impl ConfigKey {
    /// The builder method and proc-macro key (`client_module`).
    pub fn name(self) -> &'static str {
        match self {
            ConfigKey::ApisDir => "apis_dir",
            ConfigKey::Groups => "groups",
            ConfigKey::OutputDir => "output_dir",
            ConfigKey::ApisModule => "apis_module",
            ConfigKey::ClientModule => "client_module",
            ConfigKey::RuntimeCrate => "runtime_crate",
            ConfigKey::HeaderFile => "header_file",
            ConfigKey::PluralExceptions => "plural_exceptions",
            ConfigKey::Generators => "generators",
            ConfigKey::CrdDir => "crd_dir",
            ConfigKey::CrdFileName => "crd_file_name",
            ConfigKey::ExternalApplyConfigurations => "external_apply_configurations",
        }
    }

    /// The CLI flag (`--output-module`).
    ///
    /// ```
    /// assert_eq!(kube_codegen::ConfigKey::ClientModule.cli_flag(), "--output-module");
    /// ```
    pub fn cli_flag(self) -> &'static str {
        match self {
            ConfigKey::ApisDir => "--apis-dir",
            ConfigKey::Groups => "--groups",
            ConfigKey::OutputDir => "--output-dir",
            ConfigKey::ApisModule => "--apis-module",
            ConfigKey::ClientModule => "--output-module",
            ConfigKey::RuntimeCrate => "--runtime-crate",
            ConfigKey::HeaderFile => "--header-file",
            ConfigKey::PluralExceptions => "--plural-exceptions",
            ConfigKey::Generators => "<generator>",
            ConfigKey::CrdDir => "--crd-dir",
            ConfigKey::CrdFileName => "--crd-file-name",
            ConfigKey::ExternalApplyConfigurations => "--external-applyconfigurations",
        }
    }
}

impl fmt::Display for ConfigKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_compiler_style_lines() {
        let e = Error::at(
            Location::new("pkg/apis/a/v1/types.rs", Pos { line: 3, col: 5 }),
            "unknown tag",
        );
        assert_eq!(
            e.to_string(),
            "pkg/apis/a/v1/types.rs:3:5: error: unknown tag"
        );
        let e = Error::io(
            "out",
            "cannot create folder",
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        );
        assert_eq!(
            e.to_string(),
            "out:1:1: error: cannot create folder: permission denied"
        );
    }
}
