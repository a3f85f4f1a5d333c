//! Health probes (controller-runtime's `pkg/healthz`): named checks behind `/healthz`
//! (liveness) and `/readyz` (readiness).
//!
//! A [`Checker`] is anything that answers `Ok(())` or an error; closures
//! `Fn() -> Result<(), E: Display>` are checkers, and [`ping`] always passes.
//!
//! | request | answer |
//! | --- | --- |
//! | `GET /readyz` | `200 ok` when every check passes; otherwise `503` listing each check as `[+]name ok` or `[-]name failed` |
//! | `GET /readyz?verbose` | the list, also on success, with failure reasons |
//! | `GET /readyz?exclude=name` | the same without the excluded checks |
//! | `GET /readyz/name` | that one check: `200 ok` or `503` with its reason; `404` for an unknown name |
//!
//! ```
//! use kube_controller_runtime::healthz::{Checker, ping};
//! assert!(ping().is_ok());
//! let disk = || -> Result<(), String> { Err("disk full".into()) };
//! assert_eq!(Checker::check(&disk).unwrap_err(), "disk full");
//! ```

use std::convert::Infallible;
use std::fmt::{Display, Write as _};
use std::sync::Arc;

use http::StatusCode;
use parking_lot::RwLock;

/// Why a check could not be added. Not retryable: the name must change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HealthzError {
    /// A check of that name exists already.
    #[error("a check named {0:?} already exists")]
    Duplicate(String),
    /// The name is empty or contains `/`.
    #[error("invalid check name {0:?}: it must be non-empty and contain no '/'")]
    InvalidName(String),
}

/// A named health check (controller-runtime's `healthz.Checker`).
pub trait Checker: Send + Sync + 'static {
    /// `Ok(())` when healthy; otherwise why not.
    fn check(&self) -> Result<(), String>;
}

impl<F, E> Checker for F
where
    F: Fn() -> Result<(), E> + Send + Sync + 'static,
    E: Display,
{
    fn check(&self) -> Result<(), String> {
        self().map_err(|e| e.to_string())
    }
}

/// A check that always passes (controller-runtime's `healthz.Ping`).
///
/// ```
/// assert!(kube_controller_runtime::healthz::ping().is_ok());
/// ```
pub fn ping() -> Result<(), Infallible> {
    Ok(())
}

type NamedChecks = Vec<(String, Arc<dyn Checker>)>;

/// The checks of one endpoint (`/healthz` or `/readyz`).
#[derive(Clone, Default)]
pub(crate) struct Checks {
    kind: &'static str,
    list: Arc<RwLock<NamedChecks>>,
}

impl Checks {
    pub(crate) fn new(kind: &'static str) -> Self {
        Checks {
            kind,
            list: Arc::default(),
        }
    }

    pub(crate) fn add(&self, name: &str, check: Arc<dyn Checker>) -> Result<(), HealthzError> {
        if name.is_empty() || name.contains('/') {
            return Err(HealthzError::InvalidName(name.to_string()));
        }
        let mut list = self.list.write();
        if list.iter().any(|(n, _)| n == name) {
            return Err(HealthzError::Duplicate(name.to_string()));
        }
        list.push((name.to_string(), check));
        Ok(())
    }

    /// Answers `GET /<kind><rest>?<query>`.
    pub(crate) fn serve(&self, rest: &str, query: Option<&str>) -> (StatusCode, String) {
        let checks: NamedChecks = self.list.read().clone();
        if let Some(name) = rest.strip_prefix('/').filter(|n| !n.is_empty()) {
            return match checks.iter().find(|(n, _)| n == name) {
                None => (StatusCode::NOT_FOUND, format!("no check named {name:?}\n")),
                Some((_, c)) => match c.check() {
                    Ok(()) => (StatusCode::OK, "ok".into()),
                    Err(e) => {
                        tracing::info!(check = name, endpoint = self.kind, reason = %e, "health check failed");
                        (
                            StatusCode::SERVICE_UNAVAILABLE,
                            format!("internal server error: {e}\n"),
                        )
                    }
                },
            };
        }
        if !rest.is_empty() {
            return (StatusCode::NOT_FOUND, "not found\n".into());
        }
        let mut verbose = false;
        let mut excluded: Vec<String> = Vec::new();
        for (k, v) in form_pairs(query.unwrap_or_default()) {
            match k.as_str() {
                "verbose" => verbose = true,
                "exclude" => excluded.push(v),
                _ => {}
            }
        }
        let mut body = String::new();
        let mut failed = false;
        for (name, check) in &checks {
            if excluded.iter().any(|e| e == name) {
                let _ = writeln!(body, "[+]{name} excluded: ok");
                continue;
            }
            match check.check() {
                Ok(()) => {
                    let _ = writeln!(body, "[+]{name} ok");
                }
                Err(e) => {
                    failed = true;
                    tracing::info!(check = %name, endpoint = self.kind, reason = %e, "health check failed");
                    if verbose {
                        let _ = writeln!(body, "[-]{name} failed: {e}");
                    } else {
                        let _ = writeln!(body, "[-]{name} failed: reason withheld");
                    }
                }
            }
        }
        if failed {
            let _ = writeln!(body, "{} check failed", self.kind);
            (StatusCode::SERVICE_UNAVAILABLE, body)
        } else if verbose {
            let _ = writeln!(body, "{} check passed", self.kind);
            (StatusCode::OK, body)
        } else {
            (StatusCode::OK, "ok".into())
        }
    }
}

fn form_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_single_and_excluded() {
        let checks = Checks::new("readyz");
        checks
            .add("ping", Arc::new(ping))
            .unwrap_or_else(|e| panic!("{e}"));
        checks
            .add("db", Arc::new(|| Err::<(), _>("no connection")))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            checks.add("ping", Arc::new(ping)),
            Err(HealthzError::Duplicate("ping".into()))
        );
        assert!(checks.add("a/b", Arc::new(ping)).is_err());
        let (code, body) = checks.serve("", None);
        assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            body,
            "[+]ping ok\n[-]db failed: reason withheld\nreadyz check failed\n"
        );
        let (_, body) = checks.serve("", Some("verbose"));
        assert!(body.contains("[-]db failed: no connection"));
        assert_eq!(
            checks.serve("", Some("exclude=db")),
            (StatusCode::OK, "ok".into())
        );
        assert_eq!(checks.serve("/ping", None), (StatusCode::OK, "ok".into()));
        assert_eq!(checks.serve("/db", None).0, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(checks.serve("/nope", None).0, StatusCode::NOT_FOUND);
    }
}
