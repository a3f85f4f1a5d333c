//! A real kube-apiserver, with its own etcd, for end-to-end tests.
//!
//! [`RealApiServer::start`] obtains the binaries (`$KUBE_CODEGEN_K8S_BIN`, or the bin dir that
//! `scripts/build-kube-apiserver.sh` prints, building them on first use), makes a fresh data
//! directory, starts etcd and kube-apiserver on free loopback ports, waits until `/readyz`
//! answers 200 and writes a kubeconfig. Authentication is a static bearer token for `admin` in
//! `system:masters`; authorization is RBAC; the serving certificate is the self-signed one
//! kube-apiserver writes into its `--cert-dir`. On request
//! ([`RealApiServer::start_controller_manager`], or [`Options::controller_manager`]) a
//! kube-controller-manager of the same release runs beside them, with the Deployment,
//! ReplicaSet and garbage-collector controllers by default.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tests::apiserver::HarnessError> {
//! use tests::apiserver::RealApiServer;
//! let server = RealApiServer::start().await?;
//! let client = server.client()?;
//! println!("{:?}", client.apiserver_version().await?);
//! # Ok(()) }
//! ```
//!
//! # Teardown
//!
//! Each server runs under a small `sh` supervisor (`SUPERVISOR`) whose stdin is a pipe
//! held by the harness. When that pipe closes, the supervisor sends SIGTERM to its server,
//! SIGKILL 10 s later if it is still running, and exits once the server is gone. Dropping a
//! [`RealApiServer`] (also while a test panics) closes kube-apiserver's pipe and waits for it,
//! then does the same for etcd (force-killing a server and its supervisor that are still there
//! after 25 s), and removes the data directory. If the test process itself dies, even by
//! SIGKILL, the kernel closes the pipes: both supervisors stop their servers all the same
//! (etcd's waits up to 10 s for kube-apiserver to exit first) and etcd's removes the data
//! directory. No `unsafe`, no `prctl` and no PID file are involved.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use tracing::{debug, info, warn};

/// Environment variable naming a directory with `etcd`, `kube-apiserver` (and `kubectl`); when
/// set, `scripts/build-kube-apiserver.sh` is not run.
pub const BIN_DIR_ENV: &str = "KUBE_CODEGEN_K8S_BIN";

/// Environment variable that, when set to a non-empty value other than `0`, keeps every data
/// directory (etcd data, certificates, logs, kubeconfig) after the server stops.
pub const KEEP_DIR_ENV: &str = "KUBE_CODEGEN_E2E_KEEP";

/// How long [`RealApiServer::start`] waits for `/readyz` by default.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long [`wait_crd_established`] waits.
pub const CRD_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the supervisor waits between SIGTERM and SIGKILL, and at most for the process it
/// must outlive (keep in sync with [`SUPERVISOR`]).
const TERM_GRACE: Duration = Duration::from_secs(10);

/// kube-apiserver's PID, in the data directory (read by etcd's supervisor).
const APISERVER_PIDFILE: &str = "kube-apiserver.pid";

/// The lines of a log quoted in start-up errors.
const LOG_TAIL_LINES: usize = 40;

/// The supervisor every server runs under:
/// `sh -c SUPERVISOR <name> <log> <cleanup-dir> <pidfile> <outlive-pidfile> <cmd>...`
/// (empty strings for the optional three).
///
/// It starts `<cmd>` in the background with its output appended to `<log>`, writes the
/// server's PID to `<pidfile>` and prints it on stdout, then waits for the server. A watcher
/// subshell reads the supervisor's stdin (the harness's pipe); at EOF it signals the supervisor
/// (USR1), which starts a stopper: it waits (up to 10 s) until the process named in
/// `<outlive-pidfile>` is gone — etcd outlives kube-apiserver, whose shutdown needs it — then
/// sends SIGTERM to the server, and SIGKILL 10 s later. After an EOF-triggered stop,
/// `<cleanup-dir>` (if not empty) is removed. SIGTERM or SIGHUP to the supervisor stops the
/// server the same way; SIGINT (Ctrl-C reaches the whole process group) is left to the server.
const SUPERVISOR: &str = r#"
log=$1 cleanup=$2 pidfile=$3 outlive=$4
shift 4
"$@" </dev/null >>"$log" 2>&1 &
child=$!
[ -n "$pidfile" ] && echo "$child" >"$pidfile"
echo "$child"
exec >/dev/null 2>>"$log"
eof=0 stopper=
on_eof() {
    [ "$eof" = 1 ] && return
    eof=1
    ( if [ -n "$outlive" ] && [ -s "$outlive" ] && read -r other <"$outlive"; then
          i=0
          while [ "$i" -lt 100 ] && kill -0 "$other" 2>/dev/null; do
              sleep 0.1; i=$((i + 1))
          done
      fi
      kill -TERM "$child" 2>/dev/null
      i=0
      while [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
      kill -KILL "$child" 2>/dev/null ) &
    stopper=$!
}
trap on_eof USR1 TERM HUP
trap '' INT
exec 3<&0
( while read -r _; do :; done <&3; kill -USR1 $$ ) &
watcher=$!
exec 3<&- 0</dev/null
while :; do
    wait "$child"
    rc=$?
    kill -0 "$child" 2>/dev/null || break
done
[ -n "$stopper" ] && kill -KILL "$stopper" 2>/dev/null
kill -KILL "$watcher" 2>/dev/null
if [ "$eof" = 1 ] && [ -n "$cleanup" ]; then rm -rf -- "$cleanup"; fi
exit "$rc"
"#;

/// The files a [`SUPERVISOR`] uses besides its log, and extra environment for the program.
#[derive(Default, Clone, Copy)]
struct SupervisorFiles<'a> {
    /// Extra environment variables for the supervisor and the program.
    env: &'a [(OsString, OsString)],
    /// Removed after an EOF-triggered stop.
    cleanup: Option<&'a Path>,
    /// Receives the server's PID.
    pidfile: Option<&'a Path>,
    /// Names a process to outlive at an EOF-triggered stop.
    outlive: Option<&'a Path>,
}

/// The DER prefix of a SubjectPublicKeyInfo for an uncompressed P-256 point
/// (`id-ecPublicKey`, `prime256v1`, then the BIT STRING header for 65 bytes).
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// Everything that can go wrong while starting, restarting or using a [`RealApiServer`].
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// An I/O operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// `scripts/build-kube-apiserver.sh` failed or printed no bin dir.
    #[error("{script} failed ({status}); its output is above, run it by hand to see why{detail}")]
    BuildScript {
        /// The script's path.
        script: PathBuf,
        /// How it ended.
        status: String,
        /// More detail, if any.
        detail: String,
    },
    /// A binary is missing from the bin dir.
    #[error(
        "{0} not found or not executable (build it with scripts/build-kube-apiserver.sh or point {BIN_DIR_ENV} at a directory that has it)"
    )]
    MissingBinary(PathBuf),
    /// A server process exited while it should have been running.
    #[error("{name} exited ({status}); last lines of {}:\n{tail}", log.display())]
    Exited {
        /// `etcd` or `kube-apiserver`.
        name: &'static str,
        /// Its exit status.
        status: String,
        /// Its log file.
        log: PathBuf,
        /// The end of its log.
        tail: String,
    },
    /// A server did not become ready in time.
    #[error("{name} not ready after {timeout:?} ({last}); last lines of {}:\n{tail}", log.display())]
    NotReady {
        /// `etcd` or `kube-apiserver`.
        name: &'static str,
        /// How long the harness waited.
        timeout: Duration,
        /// The last probe's outcome.
        last: String,
        /// Its log file.
        log: PathBuf,
        /// The end of its log.
        tail: String,
    },
    /// Generating the service-account key or the token failed.
    #[error("key generation failed: {0}")]
    Crypto(String),
    /// The kubeconfig could not be read back.
    #[error("kubeconfig: {0}")]
    Kubeconfig(#[from] kube::config::KubeconfigError),
    /// A request to the server failed.
    #[error("kube-apiserver request failed: {0}")]
    Kube(#[from] kube::Error),
    /// `kubectl` failed.
    #[error("kubectl {args} failed ({status}):\n{stderr}")]
    Kubectl {
        /// Its arguments.
        args: String,
        /// How it ended.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// A wait gave up.
    #[error("timed out after {timeout:?} waiting for {what}")]
    Timeout {
        /// What was awaited, and the last state seen.
        what: String,
        /// How long.
        timeout: Duration,
    },
    /// A blocking helper task failed to run to completion.
    #[error("harness task failed: {0}")]
    Task(String),
}

impl HarnessError {
    fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> HarnessError {
        let context = context.into();
        move |source| HarnessError::Io { context, source }
    }

    /// Whether the failure was a port taken between picking and binding it (worth a retry).
    fn is_port_clash(&self) -> bool {
        match self {
            HarnessError::Exited { tail, .. } => tail.contains("address already in use"),
            _ => false,
        }
    }
}

/// Options for [`RealApiServer::start_with`].
#[derive(Debug, Clone)]
pub struct Options {
    /// The directory with `etcd` and `kube-apiserver`; `None` means `$KUBE_CODEGEN_K8S_BIN` or
    /// the output of `scripts/build-kube-apiserver.sh`.
    pub bin_dir: Option<PathBuf>,
    /// How long to wait for `/readyz`.
    pub ready_timeout: Duration,
    /// Keep the data directory after the server stops (default: [`KEEP_DIR_ENV`] is set).
    pub keep_data_dir: bool,
    /// Extra kube-apiserver flags, appended to the harness's own.
    pub extra_apiserver_args: Vec<String>,
    /// Also start kube-controller-manager once kube-apiserver is ready (default: no; see
    /// [`RealApiServer::start_controller_manager`], which tests that first install CRDs call
    /// themselves, so that the garbage collector watches their kinds from the start).
    pub controller_manager: Option<ControllerManagerOptions>,
}

/// The controllers [`ControllerManagerOptions::default`] runs: Deployments roll out through
/// ReplicaSets (and those create Pods, which stay Pending: there is no scheduler or kubelet), and
/// the garbage collector deletes dependents whose owners are gone.
pub const DEFAULT_CONTROLLERS: &[&str] = &[
    "deployment-controller",
    "replicaset-controller",
    "garbage-collector-controller",
];

/// How [`RealApiServer::start_controller_manager`] runs kube-controller-manager.
#[derive(Debug, Clone)]
pub struct ControllerManagerOptions {
    /// The `--controllers` to run (kube-controller-manager's names, such as
    /// `deployment-controller`); default [`DEFAULT_CONTROLLERS`].
    pub controllers: Vec<String>,
    /// Extra flags, appended to the harness's own.
    pub extra_args: Vec<String>,
    /// How long to wait for `/healthz`.
    pub ready_timeout: Duration,
}

impl Default for ControllerManagerOptions {
    fn default() -> Self {
        ControllerManagerOptions {
            controllers: DEFAULT_CONTROLLERS
                .iter()
                .map(|c| (*c).to_string())
                .collect(),
            extra_args: Vec::new(),
            ready_timeout: DEFAULT_READY_TIMEOUT,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        let keep = std::env::var(KEEP_DIR_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
        Options {
            bin_dir: None,
            ready_timeout: DEFAULT_READY_TIMEOUT,
            keep_data_dir: keep,
            extra_apiserver_args: Vec::new(),
            controller_manager: None,
        }
    }
}

/// The process IDs of a running [`RealApiServer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerPids {
    /// etcd.
    pub etcd: u32,
    /// etcd's supervisor shell.
    pub etcd_supervisor: u32,
    /// kube-apiserver (`None` between [`RealApiServer::stop_apiserver`] and
    /// [`RealApiServer::start_apiserver`]).
    pub apiserver: Option<u32>,
    /// kube-apiserver's supervisor shell.
    pub apiserver_supervisor: Option<u32>,
}

impl ServerPids {
    /// Every PID, servers and supervisors.
    pub fn all(&self) -> Vec<u32> {
        [
            Some(self.etcd),
            Some(self.etcd_supervisor),
            self.apiserver,
            self.apiserver_supervisor,
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// A kube-apiserver and its etcd, running as child processes on loopback; stopped on drop.
pub struct RealApiServer {
    dir: PathBuf,
    keep_dir: bool,
    bin_dir: PathBuf,
    etcd: Option<Supervised>,
    apiserver: Option<Supervised>,
    apiserver_args: Vec<OsString>,
    etcd_port: u16,
    port: u16,
    url: String,
    token: String,
    ca_pem: String,
    kubeconfig_path: PathBuf,
    config: Config,
    ready_timeout: Duration,
    started_in: Duration,
    controller_manager: Option<Supervised>,
}

impl std::fmt::Debug for RealApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealApiServer")
            .field("url", &self.url)
            .field("etcd_port", &self.etcd_port)
            .field("dir", &self.dir)
            .field("pids", &self.pids())
            .finish_non_exhaustive()
    }
}

impl RealApiServer {
    /// Starts etcd and kube-apiserver with the default [`Options`] and waits until they are ready.
    pub async fn start() -> Result<Self, HarnessError> {
        Self::start_with(Options::default()).await
    }

    /// Starts etcd and kube-apiserver and waits until they are ready.
    pub async fn start_with(opts: Options) -> Result<Self, HarnessError> {
        let t0 = Instant::now();
        let bin_dir = match opts.bin_dir.clone() {
            Some(dir) => dir,
            None => blocking(bin_dir).await?,
        };
        for name in ["etcd", "kube-apiserver"] {
            let path = bin_dir.join(name);
            if !is_executable(&path) {
                return Err(HarnessError::MissingBinary(path));
            }
        }
        let mut last_err = None;
        for attempt in 1..=3 {
            match Self::launch(&opts, &bin_dir, t0).await {
                Ok(server) => return Ok(server),
                Err(e) if e.is_port_clash() && attempt < 3 => {
                    warn!(attempt, error = %e, "port taken between picking and binding; retrying");
                    last_err = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(last_err.unwrap_or_else(|| HarnessError::Task("no start attempt was made".into())))
    }

    async fn launch(opts: &Options, bin_dir: &Path, t0: Instant) -> Result<Self, HarnessError> {
        let tmp = tempfile::Builder::new()
            .prefix("kube-codegen-e2e.")
            .tempdir()
            .map_err(HarnessError::io("creating the data directory"))?;
        let dir = tmp.path().to_path_buf();
        // From here on a start-up failure drops `tmp` last (after the supervisors below), which
        // removes the directory unless it is to be kept.
        let tmp = if opts.keep_data_dir {
            info!(dir = %dir.display(), "keeping the data directory");
            let _ = tmp.keep();
            None
        } else {
            Some(tmp)
        };

        let token = random_hex(32)?;
        write_private(
            &dir.join("tokens.csv"),
            &format!("{token},admin,admin,\"system:masters\"\n"),
        )?;
        let (sa_key, sa_pub) = service_account_key()?;
        write_private(&dir.join("sa.key"), &sa_key)?;
        write_private(&dir.join("sa.pub"), &sa_pub)?;
        let pki = dir.join("pki");
        fs::create_dir(&pki).map_err(HarnessError::io(format!("mkdir {}", pki.display())))?;

        let [etcd_port, peer_port, port] = free_ports()?;
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let etcd_args: Vec<OsString> = vec![
            arg("--data-dir=", dir.join("etcd")),
            format!("--listen-client-urls={etcd_url}").into(),
            format!("--advertise-client-urls={etcd_url}").into(),
            format!("--listen-peer-urls={peer_url}").into(),
            format!("--initial-advertise-peer-urls={peer_url}").into(),
            format!("--initial-cluster=default={peer_url}").into(),
            "--log-level=warn".into(),
            "--unsafe-no-fsync=true".into(),
        ];
        // If the harness disappears, etcd's supervisor waits for kube-apiserver to exit, stops
        // etcd and removes the whole data directory.
        let apiserver_pidfile = dir.join(APISERVER_PIDFILE);
        let etcd_files = SupervisorFiles {
            cleanup: (!opts.keep_data_dir).then_some(dir.as_path()),
            pidfile: None,
            outlive: Some(&apiserver_pidfile),
            ..SupervisorFiles::default()
        };
        let mut etcd = Supervised::spawn(
            "etcd",
            &bin_dir.join("etcd"),
            &etcd_args,
            &dir.join("etcd.log"),
            etcd_files,
        )?;
        wait_etcd(&mut etcd, etcd_port, Duration::from_secs(30)).await?;
        debug!(elapsed = ?t0.elapsed(), "etcd ready");

        let mut apiserver_args: Vec<OsString> = vec![
            format!("--etcd-servers={etcd_url}").into(),
            "--bind-address=127.0.0.1".into(),
            format!("--secure-port={port}").into(),
            "--advertise-address=127.0.0.1".into(),
            arg("--cert-dir=", &pki),
            arg("--token-auth-file=", dir.join("tokens.csv")),
            "--authorization-mode=RBAC".into(),
            "--service-account-issuer=https://kubernetes.default.svc".into(),
            arg("--service-account-key-file=", dir.join("sa.pub")),
            arg("--service-account-signing-key-file=", dir.join("sa.key")),
            "--service-cluster-ip-range=10.0.0.0/16".into(),
            "--disable-admission-plugins=ServiceAccount".into(),
            "--endpoint-reconciler-type=none".into(),
            "--v=1".into(),
        ];
        apiserver_args.extend(opts.extra_apiserver_args.iter().map(OsString::from));

        let url = format!("https://127.0.0.1:{port}");
        let apiserver = Supervised::spawn(
            "kube-apiserver",
            &bin_dir.join("kube-apiserver"),
            &apiserver_args,
            &dir.join("kube-apiserver.log"),
            SupervisorFiles {
                pidfile: Some(&apiserver_pidfile),
                ..SupervisorFiles::default()
            },
        )?;
        let mut server = RealApiServer {
            kubeconfig_path: dir.join("kubeconfig"),
            dir,
            keep_dir: opts.keep_data_dir,
            bin_dir: bin_dir.to_path_buf(),
            etcd: Some(etcd),
            apiserver: Some(apiserver),
            apiserver_args,
            etcd_port,
            port,
            config: Config::new(http::Uri::from_static("https://127.0.0.1")),
            url,
            token,
            ca_pem: String::new(),
            ready_timeout: opts.ready_timeout,
            started_in: Duration::ZERO,
            controller_manager: None,
        };
        server.wait_apiserver_ready().await?;
        server.write_kubeconfig().await?;
        if let Some(kcm) = &opts.controller_manager {
            server.start_controller_manager(kcm).await?;
        }
        server.started_in = t0.elapsed();
        if let Some(tmp) = tmp {
            // The server now owns the directory (removed in `Drop`).
            let _ = tmp.keep();
        }
        info!(
            url = %server.url,
            dir = %server.dir.display(),
            started_in = ?server.started_in,
            "kube-apiserver ready"
        );
        Ok(server)
    }

    /// Polls `/readyz` (TLS unverified: the certificate is only known once the server wrote it).
    async fn wait_apiserver_ready(&mut self) -> Result<(), HarnessError> {
        let uri: http::Uri = self.url.parse().map_err(|e: http::uri::InvalidUri| {
            HarnessError::Task(format!("bad server URL {}: {e}", self.url))
        })?;
        let mut config = Config::new(uri);
        config.accept_invalid_certs = true;
        config.connect_timeout = Some(Duration::from_secs(2));
        config.read_timeout = Some(Duration::from_secs(5));
        let probe = Client::try_from(config)?;
        let t0 = Instant::now();
        let mut last: String;
        loop {
            let sup = self.apiserver.as_mut().ok_or_else(|| {
                HarnessError::Task("kube-apiserver is not running (stopped)".into())
            })?;
            if let Some(status) = sup.exited()? {
                return Err(sup.exited_error(status));
            }
            let req = http::Request::get("/readyz").body(Vec::new());
            match req {
                Ok(req) => match probe.request_text(req).await {
                    Ok(body) if body.trim() == "ok" => break,
                    Ok(body) => last = format!("answered {body:?}"),
                    Err(e) => last = e.to_string(),
                },
                Err(e) => return Err(HarnessError::Task(format!("building /readyz: {e}"))),
            }
            if t0.elapsed() > self.ready_timeout {
                let (log, tail) = (sup.log.clone(), log_tail(&sup.log));
                return Err(HarnessError::NotReady {
                    name: "kube-apiserver",
                    timeout: self.ready_timeout,
                    last,
                    log,
                    tail,
                });
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        debug!(elapsed = ?t0.elapsed(), "kube-apiserver /readyz is ok");
        Ok(())
    }

    /// Reads the serving certificate, writes the kubeconfig and checks that it works.
    async fn write_kubeconfig(&mut self) -> Result<(), HarnessError> {
        let crt = self.dir.join("pki").join("apiserver.crt");
        self.ca_pem = fs::read_to_string(&crt)
            .map_err(HarnessError::io(format!("reading {}", crt.display())))?;
        let ca_b64 = base64::engine::general_purpose::STANDARD.encode(&self.ca_pem);
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-codegen-e2e\n  cluster:\n    \
             server: {url}\n    certificate-authority-data: {ca_b64}\nusers:\n- name: admin\n  \
             user:\n    token: {token}\ncontexts:\n- name: kube-codegen-e2e\n  context:\n    \
             cluster: kube-codegen-e2e\n    user: admin\n    namespace: default\n\
             current-context: kube-codegen-e2e\n",
            url = self.url,
            token = self.token,
        );
        write_private(&self.kubeconfig_path, &kubeconfig)?;
        let kc = Kubeconfig::read_from(&self.kubeconfig_path)?;
        self.config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await?;
        // Proves the token and the CA: a verified TLS connection and an authenticated request.
        let client = self.client()?;
        let version = client.apiserver_version().await?;
        debug!(git_version = %version.git_version, "kubeconfig verified");
        Ok(())
    }

    /// A new client from the kubeconfig (admin token, CA pinned).
    ///
    /// Call it inside the Tokio runtime that will use the client: a `kube::Client` spawns its
    /// request buffer on the current runtime.
    pub fn client(&self) -> Result<Client, HarnessError> {
        Ok(Client::try_from(self.config.clone())?)
    }

    /// The client configuration read from the kubeconfig.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The kubeconfig file (cluster `kube-codegen-e2e`, user `admin`, namespace `default`).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig_path
    }

    /// The server URL, `https://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The kube-apiserver port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// etcd's client URL.
    pub fn etcd_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.etcd_port)
    }

    /// The admin bearer token (user `admin`, group `system:masters`).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The serving certificate chain to trust (PEM: the leaf, then its self-signed CA).
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The data directory: `etcd/`, `pki/`, `tokens.csv`, `sa.key`, `sa.pub`, `kubeconfig` and
    /// the logs `etcd.log` and `kube-apiserver.log`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// kube-apiserver's log file (appended to across restarts).
    pub fn apiserver_log(&self) -> PathBuf {
        self.dir.join("kube-apiserver.log")
    }

    /// etcd's log file.
    pub fn etcd_log(&self) -> PathBuf {
        self.dir.join("etcd.log")
    }

    /// The directory the binaries came from.
    pub fn bin_dir(&self) -> &Path {
        &self.bin_dir
    }

    /// How long [`start`](Self::start) took, binaries lookup included.
    pub fn started_in(&self) -> Duration {
        self.started_in
    }

    /// The process IDs of the servers and their supervisors.
    pub fn pids(&self) -> ServerPids {
        ServerPids {
            etcd: self.etcd.as_ref().map_or(0, |s| s.pid),
            etcd_supervisor: self.etcd.as_ref().map_or(0, |s| s.child.id()),
            apiserver: self.apiserver.as_ref().map(|s| s.pid),
            apiserver_supervisor: self.apiserver.as_ref().map(|s| s.child.id()),
        }
    }

    /// A `kubectl` command (from the bin dir) with `KUBECONFIG` pointing at this server.
    pub fn kubectl(&self) -> Command {
        let mut cmd = Command::new(self.bin_dir.join("kubectl"));
        cmd.env("KUBECONFIG", &self.kubeconfig_path)
            .stdin(Stdio::null());
        cmd
    }

    /// `kubectl apply --server-side -f <path>`; returns the applied objects as `kind.group/name`.
    pub async fn kubectl_apply(&self, path: &Path) -> Result<Vec<String>, HarnessError> {
        let mut cmd = self.kubectl();
        let args = [
            OsString::from("apply"),
            "--server-side".into(),
            "--field-manager=kube-codegen-e2e".into(),
            "--force-conflicts".into(),
            "-o".into(),
            "name".into(),
            "-f".into(),
            path.into(),
        ];
        cmd.args(&args);
        let shown = args
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        let out =
            blocking(move || cmd.output().map_err(HarnessError::io("running kubectl"))).await?;
        if !out.status.success() {
            return Err(HarnessError::Kubectl {
                args: shown,
                status: out.status.to_string(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect())
    }

    /// Stops kube-apiserver (SIGTERM, SIGKILL after 10 s); etcd keeps running.
    pub async fn stop_apiserver(&mut self) -> Result<(), HarnessError> {
        if let Some(mut sup) = self.apiserver.take() {
            sup.begin_stop();
            let deadline = Supervised::stop_deadline();
            while !sup.poll_stopped() {
                if Instant::now() > deadline {
                    sup.force_kill();
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            info!("kube-apiserver stopped");
        }
        Ok(())
    }

    /// Starts kube-apiserver again with the same flags, port, certificates, token and etcd, and
    /// waits for `/readyz`. Existing clients keep working: they reconnect.
    pub async fn start_apiserver(&mut self) -> Result<(), HarnessError> {
        if self.apiserver.is_some() {
            return Ok(());
        }
        let t0 = Instant::now();
        self.apiserver = Some(Supervised::spawn(
            "kube-apiserver",
            &self.bin_dir.join("kube-apiserver"),
            &self.apiserver_args,
            &self.apiserver_log(),
            SupervisorFiles {
                pidfile: Some(&self.dir.join(APISERVER_PIDFILE)),
                ..SupervisorFiles::default()
            },
        )?);
        self.wait_apiserver_ready().await?;
        let crt = self.dir.join("pki").join("apiserver.crt");
        let pem = fs::read_to_string(&crt)
            .map_err(HarnessError::io(format!("reading {}", crt.display())))?;
        if pem != self.ca_pem {
            warn!("kube-apiserver wrote a new serving certificate; rewriting the kubeconfig");
            self.write_kubeconfig().await?;
        }
        info!(elapsed = ?t0.elapsed(), "kube-apiserver restarted");
        Ok(())
    }

    /// [`stop_apiserver`](Self::stop_apiserver), then [`start_apiserver`](Self::start_apiserver).
    pub async fn restart_apiserver(&mut self) -> Result<(), HarnessError> {
        self.stop_apiserver().await?;
        self.start_apiserver().await
    }

    /// Starts kube-controller-manager (from the bin dir, built by
    /// `scripts/build-kube-apiserver.sh`) against this server with `opts.controllers`, and waits
    /// until its `/healthz` answers `ok`. It authenticates with the admin kubeconfig, does not
    /// elect a leader, and gets the service-account signing key (`sa.key`) that kube-apiserver
    /// verifies tokens with, for the token controller if it is asked for. Its log is
    /// [`controller_manager_log`](Self::controller_manager_log); it stops with the server, or
    /// with [`stop_controller_manager`](Self::stop_controller_manager).
    ///
    /// The garbage collector discovers kinds added later (CRDs) only every 30 s: install CRDs
    /// first when it must collect custom resources at once.
    pub async fn start_controller_manager(
        &mut self,
        opts: &ControllerManagerOptions,
    ) -> Result<(), HarnessError> {
        if self.controller_manager.is_some() {
            return Ok(());
        }
        let binary = self.bin_dir.join("kube-controller-manager");
        if !is_executable(&binary) {
            return Err(HarnessError::MissingBinary(binary));
        }
        let t0 = Instant::now();
        let pki = self.dir.join("kcm-pki");
        fs::create_dir_all(&pki).map_err(HarnessError::io(format!("mkdir {}", pki.display())))?;
        let [port] = free_ports()?;
        let mut args: Vec<OsString> = vec![
            arg("--kubeconfig=", &self.kubeconfig_path),
            format!("--controllers={}", opts.controllers.join(",")).into(),
            "--leader-elect=false".into(),
            "--bind-address=127.0.0.1".into(),
            format!("--secure-port={port}").into(),
            arg("--cert-dir=", &pki),
            arg(
                "--service-account-private-key-file=",
                self.dir.join("sa.key"),
            ),
            "--use-service-account-credentials=false".into(),
            "--v=1".into(),
        ];
        args.extend(opts.extra_args.iter().map(OsString::from));
        let log = self.controller_manager_log();
        let mut sup = Supervised::spawn(
            "kube-controller-manager",
            &binary,
            &args,
            &log,
            SupervisorFiles::default(),
        )?;
        wait_https_ok(&mut sup, port, "/healthz", opts.ready_timeout).await?;
        info!(elapsed = ?t0.elapsed(), port, controllers = %opts.controllers.join(","), "kube-controller-manager ready");
        self.controller_manager = Some(sup);
        Ok(())
    }

    /// Stops kube-controller-manager (SIGTERM, SIGKILL after 10 s), if it runs.
    pub async fn stop_controller_manager(&mut self) {
        if let Some(mut sup) = self.controller_manager.take() {
            sup.begin_stop();
            let deadline = Supervised::stop_deadline();
            while !sup.poll_stopped() {
                if Instant::now() > deadline {
                    sup.force_kill();
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            info!("kube-controller-manager stopped");
        }
    }

    /// kube-controller-manager's PID, while it runs.
    pub fn controller_manager_pid(&self) -> Option<u32> {
        self.controller_manager.as_ref().map(|s| s.pid)
    }

    /// kube-controller-manager's log file.
    pub fn controller_manager_log(&self) -> PathBuf {
        self.dir.join("kube-controller-manager.log")
    }
}

impl Drop for RealApiServer {
    fn drop(&mut self) {
        let t0 = Instant::now();
        // kube-apiserver first: its shutdown needs etcd (with etcd gone it hangs until SIGKILL,
        // and etcd's own shutdown waits for kube-apiserver's connections).
        for mut sup in [
            self.controller_manager.take(),
            self.apiserver.take(),
            self.etcd.take(),
        ]
        .into_iter()
        .flatten()
        {
            sup.stop_blocking();
        }
        if self.keep_dir {
            info!(dir = %self.dir.display(), "kept the data directory");
        } else if let Err(e) = fs::remove_dir_all(&self.dir)
            && e.kind() != io::ErrorKind::NotFound
        {
            warn!(dir = %self.dir.display(), error = %e, "could not remove the data directory");
        }
        debug!(elapsed = ?t0.elapsed(), "real API server torn down");
    }
}

/// One server under its `sh` supervisor.
struct Supervised {
    name: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    pid: u32,
    log: PathBuf,
    done: bool,
}

impl Supervised {
    fn spawn(
        name: &'static str,
        binary: &Path,
        args: &[OsString],
        log: &Path,
        files: SupervisorFiles<'_>,
    ) -> Result<Self, HarnessError> {
        let opt = |p: Option<&Path>| p.map(Path::as_os_str).unwrap_or_default().to_os_string();
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(SUPERVISOR)
            .arg(format!("{name}-supervisor"))
            .arg(log)
            .arg(opt(files.cleanup))
            .arg(opt(files.pidfile))
            .arg(opt(files.outlive))
            .arg(binary)
            .args(args)
            .envs(files.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd
            .spawn()
            .map_err(HarnessError::io(format!("starting /bin/sh to run {name}")))?;
        let stdin = child.stdin.take();
        let mut line = String::new();
        let read = match child.stdout.take() {
            Some(out) => BufReader::new(out).read_line(&mut line),
            None => Ok(0),
        };
        let pid = match read.map(|_| line.trim().parse::<u32>()) {
            Ok(Ok(pid)) => pid,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(HarnessError::Task(format!(
                    "the supervisor of {name} did not report a PID ({other:?})"
                )));
            }
        };
        debug!(name, pid, supervisor = child.id(), "started");
        Ok(Supervised {
            name,
            child,
            stdin,
            pid,
            log: log.to_path_buf(),
            done: false,
        })
    }

    /// The supervisor's exit status, if it exited (which it does exactly when the server did).
    fn exited(&mut self) -> Result<Option<ExitStatus>, HarnessError> {
        self.child
            .try_wait()
            .map_err(HarnessError::io(format!("waiting for {}", self.name)))
    }

    fn exited_error(&self, status: ExitStatus) -> HarnessError {
        HarnessError::Exited {
            name: self.name,
            status: status.to_string(),
            log: self.log.clone(),
            tail: log_tail(&self.log),
        }
    }

    /// Closes the pipe: the supervisor sends SIGTERM to the server.
    fn begin_stop(&mut self) {
        self.stdin.take();
    }

    /// When to give up on a graceful stop begun now: the supervisor may first wait up to
    /// [`TERM_GRACE`] for a process to outlive, then up to [`TERM_GRACE`] before SIGKILL.
    fn stop_deadline() -> Instant {
        Instant::now() + 2 * TERM_GRACE + Duration::from_secs(5)
    }

    /// Stops the server and waits for it (blocking), force-killing it after the deadline.
    fn stop_blocking(&mut self) {
        if self.done {
            return;
        }
        self.begin_stop();
        let deadline = Self::stop_deadline();
        let t0 = Instant::now();
        while !self.poll_stopped() {
            if Instant::now() > deadline {
                self.force_kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        debug!(name = self.name, elapsed = ?t0.elapsed(), "stopped");
    }

    /// Whether the supervisor (hence the server) has exited; reaps it.
    fn poll_stopped(&mut self) -> bool {
        if !self.done {
            self.done = !matches!(self.child.try_wait(), Ok(None));
        }
        self.done
    }

    /// SIGKILL to the server and its supervisor.
    fn force_kill(&mut self) {
        if self.poll_stopped() {
            return;
        }
        warn!(
            name = self.name,
            pid = self.pid,
            "did not stop in time; sending SIGKILL"
        );
        let server = i32::try_from(self.pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        if let Some(pid) = server {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.done = true;
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop_blocking();
    }
}

/// Any program (a controller under test, say) run under the same stdin-pipe supervisor as
/// the servers, with its stdout and stderr appended to a log file. It cannot outlive the test:
/// dropping it (also while a test panics) sends it SIGTERM and waits, SIGKILL after 10 s, and if
/// the test process dies, even by SIGKILL, the kernel closes the pipe and the supervisor stops it
/// all the same.
///
/// The supervisor exits with the program's status (`128 + n` when signal `n` killed it), so
/// [`try_wait`](Self::try_wait) reports the program's own exit code.
///
/// ```no_run
/// # async fn demo() -> Result<(), tests::apiserver::HarnessError> {
/// use std::time::Duration;
/// use tests::apiserver::SupervisedProcess;
/// let mut p = SupervisedProcess::spawn("sleep", "/bin/sleep".as_ref(), &["60".into()], &[], "/tmp/sleep.log".as_ref())?;
/// p.signal(rustix::process::Signal::TERM)?;
/// let status = p.wait_timeout(Duration::from_secs(5)).await?;
/// assert_eq!(status.and_then(|s| s.code()), Some(143));
/// # Ok(()) }
/// ```
pub struct SupervisedProcess {
    inner: Supervised,
}

impl std::fmt::Debug for SupervisedProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SupervisedProcess")
            .field("name", &self.inner.name)
            .field("pid", &self.inner.pid)
            .field("supervisor", &self.inner.child.id())
            .field("log", &self.inner.log)
            .finish()
    }
}

impl SupervisedProcess {
    /// Starts `program` with `args` (and `env` added to the test's environment) under a
    /// supervisor; its output is appended to `log`.
    pub fn spawn(
        name: &'static str,
        program: &Path,
        args: &[OsString],
        env: &[(OsString, OsString)],
        log: &Path,
    ) -> Result<Self, HarnessError> {
        let files = SupervisorFiles {
            env,
            ..SupervisorFiles::default()
        };
        Ok(SupervisedProcess {
            inner: Supervised::spawn(name, program, args, log, files)?,
        })
    }

    /// The program's PID.
    pub fn pid(&self) -> u32 {
        self.inner.pid
    }

    /// The supervisor's PID.
    pub fn supervisor_pid(&self) -> u32 {
        self.inner.child.id()
    }

    /// The log file.
    pub fn log(&self) -> &Path {
        &self.inner.log
    }

    /// Sends `signal` to the program; does nothing once it has exited.
    pub fn signal(&mut self, signal: rustix::process::Signal) -> Result<(), HarnessError> {
        if self.try_wait()?.is_some() {
            return Ok(());
        }
        let pid = i32::try_from(self.inner.pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            .ok_or_else(|| HarnessError::Task(format!("bad PID {}", self.inner.pid)))?;
        rustix::process::kill_process(pid, signal).map_err(|e| HarnessError::Io {
            context: format!("sending {signal:?} to {} ({pid:?})", self.inner.name),
            source: e.into(),
        })
    }

    /// The program's exit status, if it has exited (the supervisor exits right after it).
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>, HarnessError> {
        let status = self.inner.exited()?;
        if status.is_some() {
            self.inner.done = true;
        }
        Ok(status)
    }

    /// Waits up to `timeout` for the program to exit; `None` if it is still running.
    pub async fn wait_timeout(
        &mut self,
        timeout: Duration,
    ) -> Result<Option<ExitStatus>, HarnessError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the program (SIGTERM through the supervisor, SIGKILL after 10 s) and waits for it.
    /// Blocking; dropping the process does the same.
    pub fn stop(mut self) -> Result<Option<ExitStatus>, HarnessError> {
        self.inner.stop_blocking();
        self.inner
            .child
            .try_wait()
            .map_err(HarnessError::io(format!("waiting for {}", self.inner.name)))
    }
}

/// Polls `https://127.0.0.1:<port><path>` (TLS unverified: a self-signed serving certificate)
/// until it answers `ok`, failing early if the supervised process exits.
async fn wait_https_ok(
    sup: &mut Supervised,
    port: u16,
    path: &str,
    timeout: Duration,
) -> Result<(), HarnessError> {
    let uri: http::Uri = format!("https://127.0.0.1:{port}")
        .parse()
        .map_err(|e: http::uri::InvalidUri| HarnessError::Task(format!("bad URL: {e}")))?;
    let mut config = Config::new(uri);
    config.accept_invalid_certs = true;
    config.connect_timeout = Some(Duration::from_secs(2));
    config.read_timeout = Some(Duration::from_secs(5));
    let probe = Client::try_from(config)?;
    let t0 = Instant::now();
    let mut last: String;
    loop {
        if let Some(status) = sup.exited()? {
            return Err(sup.exited_error(status));
        }
        let req = http::Request::get(path)
            .body(Vec::new())
            .map_err(|e| HarnessError::Task(format!("building {path}: {e}")))?;
        match probe.request_text(req).await {
            Ok(body) if body.trim() == "ok" => return Ok(()),
            Ok(body) => last = format!("answered {body:?}"),
            Err(e) => last = e.to_string(),
        }
        if t0.elapsed() > timeout {
            return Err(HarnessError::NotReady {
                name: sup.name,
                timeout,
                last,
                log: sup.log.clone(),
                tail: log_tail(&sup.log),
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until etcd answers `GET /health` with `"health":"true"`.
async fn wait_etcd(sup: &mut Supervised, port: u16, timeout: Duration) -> Result<(), HarnessError> {
    let t0 = Instant::now();
    let mut last: String;
    loop {
        if let Some(status) = sup.exited()? {
            return Err(sup.exited_error(status));
        }
        match blocking(move || Ok(etcd_health(port))).await? {
            Ok(true) => return Ok(()),
            Ok(false) => last = "unhealthy".into(),
            Err(e) => last = e.to_string(),
        }
        if t0.elapsed() > timeout {
            return Err(HarnessError::NotReady {
                name: "etcd",
                timeout,
                last,
                log: sup.log.clone(),
                tail: log_tail(&sup.log),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn etcd_health(port: u16) -> io::Result<bool> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut conn = TcpStream::connect_timeout(&addr, Duration::from_millis(500))?;
    conn.set_read_timeout(Some(Duration::from_secs(2)))?;
    conn.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut answer = String::new();
    conn.read_to_string(&mut answer)?;
    Ok(answer.starts_with("HTTP/1.") && answer.contains("\"health\":\"true\""))
}

/// Runs blocking work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, HarnessError> + Send + 'static,
) -> Result<T, HarnessError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| HarnessError::Task(e.to_string()))?
}

/// The repository root (the parent of the `tests` package).
pub fn repo_root() -> PathBuf {
    crate::crds::workspace_root()
}

/// The directory with `etcd`, `kube-apiserver` and `kubectl`: `$KUBE_CODEGEN_K8S_BIN` if set,
/// else the last line `scripts/build-kube-apiserver.sh` prints (it builds the binaries on first
/// use, 6–10 minutes, and its progress goes to stderr). Blocking; the result is cached.
pub fn bin_dir() -> Result<PathBuf, HarnessError> {
    if let Some(dir) = std::env::var_os(BIN_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    static CACHED: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut cached = CACHED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(dir) = cached.as_ref() {
        return Ok(dir.clone());
    }
    let script = repo_root().join("scripts").join("build-kube-apiserver.sh");
    info!(script = %script.display(), "obtaining kube-apiserver and etcd");
    let t0 = Instant::now();
    let out = Command::new(&script)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(HarnessError::io(format!("running {}", script.display())))?;
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(PathBuf::from);
    let dir = match (out.status.success(), last) {
        (true, Some(dir)) => dir,
        (ok, _) => {
            return Err(HarnessError::BuildScript {
                script,
                status: out.status.to_string(),
                detail: if ok {
                    "; it printed no bin dir".into()
                } else {
                    String::new()
                },
            });
        }
    };
    info!(dir = %dir.display(), elapsed = ?t0.elapsed(), "binaries ready");
    *cached = Some(dir.clone());
    Ok(dir)
}

/// Every generated CRD manifest of the repository (`example-crddemo/crd/*.yaml`, then
/// `tests/fixtures/<case>/crd/*.yaml`): the one listing, [`crate::crds::crd_files`], re-exported
/// here for the real-apiserver tests.
pub use crate::crds::crd_files;

/// Creates or updates `crd` by server-side apply (field manager `kube-codegen-e2e`, forced).
pub async fn apply_crd(
    client: &Client,
    crd: &CustomResourceDefinition,
) -> Result<CustomResourceDefinition, HarnessError> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut crd = crd.clone();
    crd.metadata.managed_fields = None;
    crd.metadata.resource_version = None;
    Ok(api
        .patch(
            &name,
            &PatchParams::apply("kube-codegen-e2e").force(),
            &Patch::Apply(&crd),
        )
        .await?)
}

/// Waits (up to [`CRD_TIMEOUT`]) until the CRD `name` is `Established` and discovery serves its
/// resource in every served version, as envtest's `WaitForCRDs` does.
pub async fn wait_crd_established(
    client: &Client,
    name: &str,
) -> Result<CustomResourceDefinition, HarnessError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let t0 = Instant::now();
    let mut last: String;
    loop {
        match crd_ready(client, &api, name).await {
            Ok(Ok(crd)) => {
                debug!(name, elapsed = ?t0.elapsed(), "CRD established and discovered");
                return Ok(crd);
            }
            Ok(Err(state)) => last = state,
            Err(e) => last = e.to_string(),
        }
        if t0.elapsed() > CRD_TIMEOUT {
            return Err(HarnessError::Timeout {
                what: format!("CRD {name} to be Established and discovered (last: {last})"),
                timeout: CRD_TIMEOUT,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `Ok(Ok(crd))` when ready, `Ok(Err(state))` while not.
async fn crd_ready(
    client: &Client,
    api: &Api<CustomResourceDefinition>,
    name: &str,
) -> Result<Result<CustomResourceDefinition, String>, kube::Error> {
    let crd = api.get(name).await?;
    let conditions = crd
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .cloned()
        .unwrap_or_default();
    let established = conditions
        .iter()
        .any(|c| c.type_ == "Established" && c.status == "True");
    if !established {
        let mut state = String::from("conditions:");
        for c in &conditions {
            let _ = write!(
                state,
                " {}={} ({})",
                c.type_,
                c.status,
                c.message.as_deref().unwrap_or("")
            );
        }
        return Ok(Err(state));
    }
    let plural = crd
        .status
        .as_ref()
        .and_then(|s| s.accepted_names.as_ref())
        .map_or(crd.spec.names.plural.as_str(), |n| n.plural.as_str())
        .to_string();
    for version in crd.spec.versions.iter().filter(|v| v.served) {
        let gv = format!("{}/{}", crd.spec.group, version.name);
        let served = match client.list_api_group_resources(&gv).await {
            Ok(list) => list.resources.iter().any(|r| r.name == plural),
            Err(e) if kube_codegen_runtime::api_status::is_not_found(&e) => false,
            Err(e) => return Err(e),
        };
        if !served {
            return Ok(Err(format!(
                "established, but {gv} does not list {plural} yet"
            )));
        }
    }
    Ok(Ok(crd))
}

/// Whether `pid` is a live process (a zombie counts as dead). Linux (`/proc`).
pub fn process_alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The last lines of a log file (`LOG_TAIL_LINES` of them).
pub fn log_tail(path: &Path) -> String {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
        }
        Err(e) => format!("(cannot read {}: {e})", path.display()),
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn arg(flag: &str, path: impl AsRef<Path>) -> OsString {
    let mut s = OsString::from(flag);
    s.push(path.as_ref());
    s
}

/// `N` distinct free TCP ports on 127.0.0.1 (held together while picking, then released).
fn free_ports<const N: usize>() -> Result<[u16; N], HarnessError> {
    let mut listeners = Vec::with_capacity(N);
    let mut ports = [0u16; N];
    for port in &mut ports {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(HarnessError::io("picking a free port on 127.0.0.1"))?;
        *port = l
            .local_addr()
            .map_err(HarnessError::io("picking a free port on 127.0.0.1"))?
            .port();
        listeners.push(l);
    }
    Ok(ports)
}

fn write_private(path: &Path, contents: &str) -> Result<(), HarnessError> {
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(contents.as_bytes()))
        .map_err(HarnessError::io(format!("writing {}", path.display())))
}

fn random_hex(bytes: usize) -> Result<String, HarnessError> {
    use ring::rand::SecureRandom;
    let mut buf = vec![0u8; bytes];
    ring::rand::SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| HarnessError::Crypto("the system RNG failed".into()))?;
    Ok(buf.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    }))
}

/// A fresh ECDSA P-256 service-account key: (PKCS#8 private key PEM, SubjectPublicKeyInfo PEM).
/// kube-apiserver signs tokens with the first (ES256) and verifies them with the second.
fn service_account_key() -> Result<(String, String), HarnessError> {
    use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair};
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng)
        .map_err(|_| HarnessError::Crypto("generating a P-256 key failed".into()))?;
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng)
        .map_err(|e| HarnessError::Crypto(format!("reading back the P-256 key: {e}")))?;
    let mut spki = P256_SPKI_PREFIX.to_vec();
    spki.extend_from_slice(pair.public_key().as_ref());
    Ok((pem("PRIVATE KEY", pkcs8.as_ref()), pem("PUBLIC KEY", &spki)))
}

fn pem(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    let _ = writeln!(out, "-----END {label}-----");
    out
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn spki_prefix_makes_a_65_byte_point_a_91_byte_spki() {
        // SEQUENCE of length 0x59 = 89 content bytes + 2 header bytes.
        assert_eq!(P256_SPKI_PREFIX.len() + 65, 0x59 + 2);
        let (key, public) = service_account_key().unwrap();
        assert!(key.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----\n"));
    }

    #[test]
    fn free_ports_are_distinct() {
        let [a, b, c] = free_ports().unwrap();
        assert!(a != b && b != c && a != c);
    }

    #[test]
    fn process_alive_sees_this_process_and_not_a_reaped_one() {
        assert!(process_alive(std::process::id()));
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_alive(pid));
    }
}
