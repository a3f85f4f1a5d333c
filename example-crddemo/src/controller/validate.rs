//! Spec validation: what makes a `Mydemo` exposable.

use std::net::IpAddr;

use crate::pkg::apis::crddemo::v1::MydemoSpec;

/// Why a spec cannot be exposed; the message goes into the Ready condition and the Warning
/// event, so it names the field and the bad value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidSpec {
    /// `spec.ip` is not an IPv4 or IPv6 address.
    #[error("spec.ip {0:?} is not an IPv4 or IPv6 address")]
    Ip(String),
    /// `spec.port` is outside 1–65535.
    #[error("spec.port {0} is outside 1-65535")]
    Port(i32),
}

/// A spec that passed validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// The address.
    pub ip: IpAddr,
    /// The port.
    pub port: u16,
}

/// Checks `spec`: the IP must parse as IPv4 or IPv6, the port must be 1–65535.
///
/// ```
/// use example_crddemo::controller::validate::{validate, InvalidSpec};
/// use example_crddemo::pkg::apis::crddemo::v1::MydemoSpec;
/// let ok = validate(&MydemoSpec { ip: "127.0.0.1".into(), port: 8080 }).unwrap();
/// assert_eq!(ok.port, 8080);
/// let bad = validate(&MydemoSpec { ip: "10.0.0.300".into(), port: 80 });
/// assert_eq!(bad, Err(InvalidSpec::Ip("10.0.0.300".into())));
/// ```
pub fn validate(spec: &MydemoSpec) -> Result<Endpoint, InvalidSpec> {
    let ip: IpAddr = spec
        .ip
        .trim()
        .parse()
        .map_err(|_| InvalidSpec::Ip(spec.ip.clone()))?;
    let port = u16::try_from(spec.port)
        .ok()
        .filter(|p| *p != 0)
        .ok_or(InvalidSpec::Port(spec.port))?;
    Ok(Endpoint { ip, port })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(ip: &str, port: i32) -> MydemoSpec {
        MydemoSpec {
            ip: ip.into(),
            port,
        }
    }

    #[test]
    fn accepts_ipv4_and_ipv6_and_the_port_range() {
        assert!(validate(&spec("127.0.0.1", 1)).is_ok());
        assert!(validate(&spec("::1", 65535)).is_ok());
        assert!(validate(&spec("fd00::10", 443)).is_ok());
    }

    #[test]
    fn rejects_bad_addresses_and_ports() {
        assert_eq!(validate(&spec("", 80)), Err(InvalidSpec::Ip("".into())));
        assert_eq!(
            validate(&spec("example.com", 80)),
            Err(InvalidSpec::Ip("example.com".into()))
        );
        assert_eq!(validate(&spec("1.2.3.4", 0)), Err(InvalidSpec::Port(0)));
        assert_eq!(
            validate(&spec("1.2.3.4", 65536)),
            Err(InvalidSpec::Port(65536))
        );
        assert_eq!(validate(&spec("1.2.3.4", -1)), Err(InvalidSpec::Port(-1)));
    }
}
