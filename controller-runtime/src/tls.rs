//! The metrics server's certificate (controller-runtime's `SecureServing`): the user's
//! `tls.crt` and `tls.key` from a directory, or, without one, a self-signed CA made at start-up
//! and a serving certificate it signed for `localhost` and the loopback addresses, as
//! controller-runtime generates one when no `CertDir` is given.

use std::path::Path;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The server configuration and, when self-signed, the CA's PEM (what a client trusts).
pub(crate) struct Serving {
    pub(crate) config: Arc<rustls::ServerConfig>,
    pub(crate) ca_pem: Option<String>,
}

fn config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<rustls::ServerConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| e.to_string())?;
    // HTTP/1.1 only, as controller-runtime disables HTTP/2 by default (CVE-2023-44487).
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// `dir/tls.crt` (the chain) and `dir/tls.key`.
pub(crate) fn from_dir(dir: &Path) -> Result<Serving, String> {
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    let chain = CertificateDer::pem_file_iter(&cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("{}: no certificate", cert.display()));
    }
    let private =
        PrivateKeyDer::from_pem_file(&key).map_err(|e| format!("{}: {e}", key.display()))?;
    Ok(Serving {
        config: config(chain, private)?,
        ca_pem: None,
    })
}

/// A CA made here and a serving certificate it signed, all PEM.
pub(crate) struct LocalPki {
    /// The CA's certificate: what a client trusts.
    pub(crate) ca_pem: String,
    /// The serving certificate, then the CA's.
    pub(crate) chain_pem: String,
    /// The serving certificate's private key (PKCS #8).
    pub(crate) key_pem: String,
}

/// A fresh CA named `<name>-ca` and a serving certificate named `name` for `localhost`,
/// `127.0.0.1` and `::1`.
pub(crate) fn local_pki(name: &str) -> Result<LocalPki, rcgen::Error> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("{name}-ca"));
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.subject_alt_names.extend([
        SanType::IpAddress([127, 0, 0, 1].into()),
        SanType::IpAddress(std::net::Ipv6Addr::LOCALHOST.into()),
    ]);
    let cert = params.signed_by(&key, &issuer)?;
    Ok(LocalPki {
        ca_pem: ca_cert.pem(),
        chain_pem: format!("{}{}", cert.pem(), ca_cert.pem()),
        key_pem: key.serialize_pem(),
    })
}

/// A fresh CA and a serving certificate for `localhost`, `127.0.0.1` and `::1`.
pub(crate) fn self_signed() -> Result<Serving, String> {
    let pki = local_pki("kube-controller-runtime-metrics").map_err(|e| e.to_string())?;
    let chain = CertificateDer::pem_slice_iter(pki.chain_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let private =
        PrivateKeyDer::from_pem_slice(pki.key_pem.as_bytes()).map_err(|e| e.to_string())?;
    Ok(Serving {
        config: config(chain, private)?,
        ca_pem: Some(pki.ca_pem),
    })
}
