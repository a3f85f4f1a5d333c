//! The serving certificate: like kube-apiserver without `--tls-cert-file`, the fake makes a
//! self-signed CA at start-up and a serving certificate signed by it for `localhost`, the
//! loopback addresses and the address it binds. The kubeconfig it writes trusts that CA, so
//! clients verify the server and send their bearer token (client-go sends none over plain
//! HTTP).

use std::net::IpAddr;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::error::FakeError;

/// A CA and a serving certificate it signed.
pub(crate) struct ServingCert {
    /// The CA certificate (PEM): what clients trust.
    pub(crate) ca_pem: String,
    /// The TLS configuration with the serving certificate and key.
    pub(crate) config: Arc<rustls::ServerConfig>,
}

fn tls_err(e: impl std::fmt::Display) -> FakeError {
    FakeError::Tls(e.to_string())
}

/// Makes a fresh CA and a serving certificate for `localhost`, `127.0.0.1`, `::1` and `ip`.
pub(crate) fn generate(ip: IpAddr) -> Result<ServingCert, FakeError> {
    let ca_key = KeyPair::generate().map_err(tls_err)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "kube-fake-apiserver-ca");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key).map_err(tls_err)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let key = KeyPair::generate().map_err(tls_err)?;
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).map_err(tls_err)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kube-fake-apiserver");
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let mut ips: Vec<IpAddr> = vec![
        IpAddr::from([127, 0, 0, 1]),
        IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
    ];
    if !ips.contains(&ip) && !ip.is_unspecified() {
        ips.push(ip);
    }
    params
        .subject_alt_names
        .extend(ips.into_iter().map(SanType::IpAddress));
    let cert = params.signed_by(&key, &issuer).map_err(tls_err)?;

    let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone(), ca_cert.der().clone()];
    let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_err)?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(tls_err)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(ServingCert {
        ca_pem: ca_cert.pem(),
        config: Arc::new(config),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_a_ca_and_a_serving_certificate() {
        let c = generate(IpAddr::from([127, 0, 0, 1])).unwrap_or_else(|e| panic!("{e}"));
        assert!(c.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert_eq!(c.config.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }
}
