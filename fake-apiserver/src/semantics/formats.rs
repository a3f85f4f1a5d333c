//! The string formats structural schemas may name, checked as kube-openapi's format registry
//! checks them (`email`, `date-time`, `ipv4`, …). Formats it does not know are not checked.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use base64::Engine;
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
        "byte" => base64::engine::general_purpose::STANDARD.decode(s).is_ok(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::check;

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
