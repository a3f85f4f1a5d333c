//! `ServedApiServer::write_kubeconfig` puts the bearer token only where it was asked to: a new
//! file of mode 0600, never through a symbolic link planted at the target or at a temporary name.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use kube_fake_apiserver::{FakeApiServer, FakeError, ServedApiServer};

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// A fresh directory under the system's temporary directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("kube-fake-kubeconfig-{name}-{}", uuid_like()));
        ok(std::fs::create_dir_all(&dir));
        Scratch(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{}-{nanos}", std::process::id())
}

async fn served() -> ServedApiServer {
    ok(FakeApiServer::new().serve(([127, 0, 0, 1], 0).into()).await)
}

fn mode(path: &Path) -> u32 {
    ok(std::fs::symlink_metadata(path)).permissions().mode() & 0o777
}

#[tokio::test]
async fn the_kubeconfig_is_a_new_file_of_mode_0600_with_the_token() {
    let dir = Scratch::new("fresh");
    let target = dir.path("kc.yaml");
    let served = served().await;
    ok(served.write_kubeconfig(&target));
    assert_eq!(mode(&target), 0o600);
    let text = ok(std::fs::read_to_string(&target));
    assert!(text.contains(served.token()));
    // An existing regular file (ours, from a previous run) is replaced, still 0600.
    ok(std::fs::set_permissions(
        &target,
        std::fs::Permissions::from_mode(0o644),
    ));
    ok(served.write_kubeconfig(&target));
    assert_eq!(mode(&target), 0o600);
    // Nothing is left behind but the kubeconfig.
    let names: Vec<_> = ok(std::fs::read_dir(&dir.0))
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("kc.yaml")]);
}

#[tokio::test]
async fn a_symlink_planted_at_the_target_is_refused_and_receives_nothing() {
    let dir = Scratch::new("link");
    let victim = dir.path("victim");
    ok(std::fs::write(&victim, "untouched"));
    let target = dir.path("kc.yaml");
    ok(std::os::unix::fs::symlink(&victim, &target));
    let served = served().await;

    let err = served
        .write_kubeconfig(&target)
        .expect_err("a symlink at the kubeconfig path must be refused");
    match &err {
        FakeError::UnsafeKubeconfigPath { path, .. } => assert_eq!(path, &target),
        other => panic!("wrong error: {other:?}"),
    }
    assert!(err.to_string().contains(&target.display().to_string()));
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(ok(std::fs::read_to_string(&victim)), "untouched");
    assert!(
        ok(std::fs::symlink_metadata(&target))
            .file_type()
            .is_symlink()
    );
    // No temporary file with the token is left behind either.
    for entry in ok(std::fs::read_dir(&dir.0)).filter_map(Result::ok) {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        assert!(!text.contains(served.token()), "{}", entry.path().display());
    }
}

#[tokio::test]
async fn a_dangling_symlink_or_a_directory_at_the_target_is_refused() {
    let dir = Scratch::new("dangling");
    let elsewhere = dir.path("not-yet");
    let target = dir.path("kc.yaml");
    ok(std::os::unix::fs::symlink(&elsewhere, &target));
    let served = served().await;
    assert!(matches!(
        served.write_kubeconfig(&target),
        Err(FakeError::UnsafeKubeconfigPath { .. })
    ));
    assert!(!elsewhere.exists(), "the link was followed");

    let as_dir = dir.path("a-dir");
    ok(std::fs::create_dir(&as_dir));
    assert!(matches!(
        served.write_kubeconfig(&as_dir),
        Err(FakeError::UnsafeKubeconfigPath { .. })
    ));
}

#[tokio::test]
async fn symlinks_planted_at_predictable_temporary_names_receive_nothing() {
    // The old writer used `.<name>.<pid>.tmp`, which anyone sharing the directory could plant.
    let dir = Scratch::new("tmp");
    let victim = dir.path("victim");
    ok(std::fs::write(&victim, "untouched"));
    let target = dir.path("kc.yaml");
    let planted = dir.path(&format!(".kc.yaml.{}.tmp", std::process::id()));
    ok(std::os::unix::fs::symlink(&victim, &planted));
    let served = served().await;
    ok(served.write_kubeconfig(&target));
    assert_eq!(ok(std::fs::read_to_string(&victim)), "untouched");
    assert!(ok(std::fs::symlink_metadata(&target)).file_type().is_file());
    assert_eq!(mode(&target), 0o600);
}
