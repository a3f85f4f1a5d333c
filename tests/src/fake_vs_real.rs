//! What the tests that send the same raw requests to the in-memory server and to
//! kube-apiserver share: the request and its [`Answer`], the summary of a refusal as they
//! compare it, and the loopback certificates a webhook the test runs serves with (the envtest
//! technique: kube-apiserver calls the test's own HTTPS server on 127.0.0.1).

use http_body_util::BodyExt;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use serde_json::{Value, json};

/// Why a request got no answer to compare.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The request could not be built (a bad path or header).
    #[error("building the request: {0}")]
    Request(#[from] http::Error),
    /// The server could not be reached, or its body not read.
    #[error("sending the request: {0}")]
    Client(#[from] kube::Error),
}

/// A server's answer: its status, `Warning` headers and body (JSON, or null).
#[derive(Debug, Clone)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The `Warning` headers, in order.
    pub warnings: Vec<String>,
    /// The body as JSON; `null` when it is not JSON.
    pub body: Value,
}

/// Sends `body` (JSON) with `content_type` and reads the answer whatever its status.
pub async fn send(
    client: &kube::Client,
    method: &str,
    path: &str,
    content_type: &str,
    body: Option<Value>,
) -> Result<Answer, SendError> {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .header("accept", "application/json")
        .body(kube::client::Body::from(
            body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
        ))?;
    let resp = client.send(req).await?;
    let status = resp.status().as_u16();
    let warnings = resp
        .headers()
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::to_string)
        .collect();
    let bytes = resp.into_body().collect().await?.to_bytes();
    Ok(Answer {
        status,
        warnings,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    })
}

/// The warnings of an answer, each normalised, joined.
pub fn warnings_summary(a: &Answer, normalise: impl Fn(&str) -> String) -> String {
    a.warnings
        .iter()
        .map(|w| normalise(w))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A refusal (a `Status` with a code of 400 or more) as compared: code, reason, message and
/// causes, normalised, and the warnings; `None` for any other answer.
pub fn refusal_summary(a: &Answer, normalise: impl Fn(&str) -> String) -> Option<String> {
    if a.body.get("kind") != Some(&json!("Status")) || a.status < 400 {
        return None;
    }
    let causes = normalise(
        &a.body
            .pointer("/details/causes")
            .map(Value::to_string)
            .unwrap_or_default(),
    );
    Some(format!(
        "{} {} {:?} causes={} warnings=[{}]",
        a.status,
        a.body.get("reason").and_then(Value::as_str).unwrap_or(""),
        normalise(a.body.get("message").and_then(Value::as_str).unwrap_or("")),
        causes,
        warnings_summary(a, &normalise)
    ))
}

/// Prints two transcripts of the same steps (`(step, summary)`, in order) as a table, the
/// in-memory server's beside kube-apiserver's (run with `--nocapture` to see it), and returns
/// the steps where they differ, each with both summaries.
pub fn transcript_differences<S, T>(fake: &[(S, T)], real: &[(S, T)]) -> Vec<String>
where
    S: std::fmt::Display,
    T: std::fmt::Display + PartialEq,
{
    eprintln!("| step | in-memory server | kube-apiserver v1.37.1 | agree |");
    eprintln!("| --- | --- | --- | --- |");
    for ((step, f), (_, r)) in fake.iter().zip(real) {
        let agree = if f == r { "yes" } else { "NO" };
        eprintln!("| {step} | `{f}` | `{r}` | {agree} |");
    }
    fake.iter()
        .zip(real)
        .filter(|((_, f), (_, r))| f != r)
        .map(|((step, f), (_, r))| format!("{step}:\n  fake: {f}\n  real: {r}"))
        .collect()
}

/// A certificate authority and a serving certificate it signed for `localhost` and
/// 127.0.0.1, all PEM.
#[derive(Debug, Clone)]
pub struct LoopbackCertificates {
    /// The CA's certificate (a webhook configuration's `caBundle`).
    pub ca: String,
    /// The serving certificate.
    pub cert: String,
    /// The serving certificate's private key.
    pub key: String,
}

/// Makes a CA named `ca_name` and a serving certificate it signed for the loopback address.
pub fn loopback_certificates(ca_name: &str) -> Result<LoopbackCertificates, rcgen::Error> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, ca_name);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params
        .subject_alt_names
        .push(SanType::IpAddress([127, 0, 0, 1].into()));
    let cert = params.signed_by(&key, &issuer)?;
    Ok(LoopbackCertificates {
        ca: ca_cert.pem(),
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}
