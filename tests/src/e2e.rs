//! Small helpers shared by the end-to-end test files and benches: logging, unique names,
//! namespaces, timings.

use std::sync::OnceLock;
use std::time::Instant;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ObjectMeta, PostParams};

/// Installs a test-writer `tracing` subscriber (`RUST_LOG`, default `tests=info`); a second
/// call is a no-op.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("tests=info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .try_init();
}

/// Six lower-case alphanumerics, fixed for the test process, that make names unique per run.
pub fn run_id() -> &'static str {
    static RUN: OnceLock<String> = OnceLock::new();
    RUN.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut n = (nanos as u64) ^ (u64::from(std::process::id()) << 32);
        let mut id = String::new();
        for _ in 0..6 {
            id.push(char::from_digit((n % 36) as u32, 36).unwrap_or('x'));
            n /= 36;
        }
        id
    })
}

/// Creates the namespace `name` through `client`.
pub async fn create_namespace(client: &kube::Client, name: &str) -> kube::Result<Namespace> {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
}

/// Prints how long a test took when dropped (`cargo test -- --nocapture` shows it).
pub struct Timer(&'static str, Instant);

impl Timer {
    /// Starts timing `name`.
    pub fn new(name: &'static str) -> Self {
        Timer(name, Instant::now())
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        eprintln!("[e2e] {} took {:.2?}", self.0, self.1.elapsed());
    }
}
