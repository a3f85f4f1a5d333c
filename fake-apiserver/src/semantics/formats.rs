//! The string formats structural schemas may name, checked as kube-openapi's format registry
//! checks them (`email`, `date-time`, `ipv4`, …). Formats it does not know are not checked.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use regex::Regex;

fn re(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

fn matches(cell: &'static OnceLock<Option<Regex>>, pattern: &str, s: &str) -> bool {
    re(cell, pattern).is_some_and(|r| r.is_match(s))
}

fn is_uuid(s: &str, version: Option<char>) -> bool {
    static UUID: OnceLock<Option<Regex>> = OnceLock::new();
    let ok = matches(
        &UUID,
        r"^(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
        s,
    );
    ok && version.is_none_or(|v| s.chars().filter(|c| *c != '-').nth(12) == Some(v))
}

fn is_hostname(s: &str) -> bool {
    static HOST: OnceLock<Option<Regex>> = OnceLock::new();
    s.len() <= 255
        && matches(
            &HOST,
            r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
            s,
        )
}

fn is_duration(s: &str) -> bool {
    // Go's time.ParseDuration, plus kube-openapi's day and week units.
    static DURATION: OnceLock<Option<Regex>> = OnceLock::new();
    s == "0"
        || matches(
            &DURATION,
            r"^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h|d|w))+$",
            s,
        )
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    (ip.parse::<Ipv4Addr>().is_ok() && bits <= 32)
        || (ip.parse::<Ipv6Addr>().is_ok() && bits <= 128)
}

fn is_mac(s: &str) -> bool {
    static MAC: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &MAC,
        r"^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{2}[:-]){7}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$",
        s,
    )
}

fn is_email(s: &str) -> bool {
    static EMAIL: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &EMAIL,
        r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$",
        s,
    )
}

fn is_uri(s: &str) -> bool {
    static URI: OnceLock<Option<Regex>> = OnceLock::new();
    matches(&URI, r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$", s)
}

fn is_date_time(s: &str) -> bool {
    s.parse::<jiff::Timestamp>().is_ok()
}

fn is_date(s: &str) -> bool {
    s.len() == 10 && s.parse::<jiff::civil::Date>().is_ok()
}

/// Whether `s` is valid in `format`; unknown formats accept anything.
pub(crate) fn check(format: &str, s: &str) -> bool {
    match format {
        "email" => is_email(s),
        "date-time" | "datetime" => is_date_time(s),
        "date" => is_date(s),
        "duration" => is_duration(s),
        "hostname" => is_hostname(s),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "uri" => is_uri(s),
        "uuid" => is_uuid(s, None),
        "uuid3" => is_uuid(s, Some('3')),
        "uuid4" => is_uuid(s, Some('4')),
        "uuid5" => is_uuid(s, Some('5')),
        "byte" => go_base64_error(s).is_none(),
        _ => true,
    }
}

/// Where Go's `base64.StdEncoding.DecodeString` fails on `s` (the `N` of its `illegal base64
/// data at input byte N`), or `None` when `s` decodes. kube-apiserver decodes every `[]byte`
/// field (a ConfigMap's `binaryData`, a Secret's `data`, a `format: byte` string) with it, so
/// this follows its rules rather than a stricter decoder's: padding required, `\r` and `\n`
/// skipped anywhere, unused trailing bits allowed, and the error position Go computes.
pub(crate) fn go_base64_error(s: &str) -> Option<usize> {
    let src = s.as_bytes();
    let symbol = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let newline = |b: u8| b == b'\n' || b == b'\r';
    let skip_newlines = |mut at: usize| {
        while at < src.len() && newline(src[at]) {
            at += 1;
        }
        at
    };
    let mut at = 0;
    loop {
        // One quantum: four symbols, or two or three and padding.
        let mut symbols = 0;
        while symbols < 4 {
            let Some(&b) = src.get(at) else {
                return (symbols > 0).then_some(at - symbols);
            };
            at += 1;
            if symbol(b) {
                symbols += 1;
                continue;
            }
            if newline(b) {
                continue;
            }
            if b != b'=' || symbols < 2 {
                return Some(at - 1);
            }
            if symbols == 2 {
                // "==": the second '=' may follow newlines.
                at = skip_newlines(at);
                match src.get(at) {
                    None => return Some(src.len()),
                    Some(b'=') => at += 1,
                    Some(_) => return Some(at - 1),
                }
            }
            // Padding ends the input; anything but newlines after it is an error.
            at = skip_newlines(at);
            return (at < src.len()).then_some(at);
        }
    }
}

/// `s` decoded as Go decodes base64 (newlines skipped, unused trailing bits allowed) and
/// encoded again as Go encodes it; `None` when `s` does not decode.
pub(crate) fn go_base64_canonical(s: &str) -> Option<String> {
    use base64::Engine as _;
    use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
    );
    if go_base64_error(s).is_some() {
        return None;
    }
    let symbols: String = s.chars().filter(|c| !matches!(c, '\n' | '\r')).collect();
    let bytes = LENIENT.decode(symbols).ok()?;
    Some(base64::engine::general_purpose::STANDARD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::{check, go_base64_error};
    use base64::Engine as _;

    /// Positions as Go 1.25's `base64.StdEncoding.DecodeString` reports them (and as
    /// kube-apiserver v1.37.1 answered a ConfigMap create with them).
    #[test]
    fn base64_errors_where_go_reports_them() {
        for (input, want) in [
            ("", None),
            ("aGk=", None),
            ("aGk=\n", None),
            ("a\nGk=", None),
            ("aGl=", None), // unused trailing bits: Go's StdEncoding is not strict
            ("aA==", None),
            ("aGVsbG8gd29ybGQ=", None),
            ("!!", Some(0)),
            ("aGk", Some(0)),
            ("aGk=x", Some(4)),
            ("aG k=", Some(2)),
            ("ab!", Some(2)),
            ("a===", Some(1)),
            ("aA=", Some(3)),
            ("aA=x", Some(2)),
            ("aGVsbG8gd29ybGQ", Some(12)),
        ] {
            assert_eq!(go_base64_error(input), want, "{input:?}");
        }
    }

    #[test]
    fn everything_a_standard_encoder_writes_decodes() {
        let mut bytes = Vec::new();
        for n in 0..300u16 {
            bytes.push((n.wrapping_mul(37) % 256) as u8);
            let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
            assert_eq!(go_base64_error(&encoded), None, "{encoded}");
        }
    }

    #[test]
    fn formats() {
        for (f, good, bad) in [
            ("email", "a@example.com", "nope"),
            ("date-time", "2024-01-02T03:04:05Z", "yesterday"),
            ("date", "2024-01-02", "2024-13-02"),
            ("ipv4", "10.0.0.1", "10.0.0.256"),
            ("ipv6", "::1", "1.2.3.4"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
            ("duration", "1h30m", "1 hour"),
            ("hostname", "a.example.com", "-bad-"),
            ("mac", "01:23:45:67:89:ab", "01:23"),
            ("byte", "aGk=", "!!"),
        ] {
            assert!(check(f, good), "{f} {good}");
            assert!(!check(f, bad), "{f} {bad}");
        }
        assert!(check("no-such-format", "anything"));
    }
}
