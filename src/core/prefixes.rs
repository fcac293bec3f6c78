//! Key prefix lists, the value of `rl.shadow-prefixes` and
//! `rl.stats-prefixes`: prefixes separated by spaces, at most
//! [`MAX_PREFIXES`] of them. Parsed here so the refusals are plain data
//! with one text each, tested without a server.

use std::fmt;

/// Prefixes a list holds at most: matching a key scans them all, so the
/// bound is what keeps that scan a few hundred instructions.
pub const MAX_PREFIXES: usize = 32;

/// Bytes one prefix holds at most.
pub const MAX_PREFIX_LEN: usize = 128;

/// Why a list was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixError {
    TooMany(usize),
    TooLong(usize),
    /// A byte outside printable ASCII, or `,` / `=`, which would break the
    /// `INFO` line the prefix is shown in.
    BadByte(u8),
    Twice(String),
}

impl fmt::Display for PrefixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrefixError::TooMany(n) => write!(
                f,
                "at most {MAX_PREFIXES} prefixes, separated by spaces (got {n})"
            ),
            PrefixError::TooLong(n) => {
                write!(f, "a prefix is at most {MAX_PREFIX_LEN} bytes (got {n})")
            }
            PrefixError::BadByte(b) => write!(
                f,
                "a prefix is printable ASCII without ',' or '=' (got byte 0x{b:02x})"
            ),
            PrefixError::Twice(p) => write!(f, "prefix '{p}' is listed twice"),
        }
    }
}

/// The prefixes of `value`, in the order given; empty for an empty (or
/// all-space) value, which turns the list off.
pub fn parse(value: &[u8]) -> Result<Vec<Vec<u8>>, PrefixError> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for p in value.split(|&b| b == b' ').filter(|p| !p.is_empty()) {
        if out.len() == MAX_PREFIXES {
            let n = value
                .split(|&b| b == b' ')
                .filter(|p| !p.is_empty())
                .count();
            return Err(PrefixError::TooMany(n));
        }
        if p.len() > MAX_PREFIX_LEN {
            return Err(PrefixError::TooLong(p.len()));
        }
        if let Some(&b) = p
            .iter()
            .find(|&&b| !(0x21..=0x7e).contains(&b) || b == b',' || b == b'=')
        {
            return Err(PrefixError::BadByte(b));
        }
        if out.iter().any(|q| q == p) {
            // Printable ASCII: the bytes are text.
            return Err(PrefixError::Twice(String::from_utf8_lossy(p).into_owned()));
        }
        out.push(p.to_vec());
    }
    Ok(out)
}

/// The list as `CONFIG GET` shows it: one space between prefixes.
pub fn render(prefixes: &[Vec<u8>]) -> Vec<u8> {
    prefixes.join(&b' ')
}

/// Whether `key` starts with any of `prefixes`.
pub fn any_matches(prefixes: &[Vec<u8>], key: &[u8]) -> bool {
    prefixes.iter().any(|p| key.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_in_order_and_render_canonically() {
        let cases: &[(&str, &[&str], &str)] = &[
            ("", &[], ""),
            ("   ", &[], ""),
            ("api:", &["api:"], "api:"),
            ("  api:v1:   {t}:x ", &["api:v1:", "{t}:x"], "api:v1: {t}:x"),
        ];
        for (value, want, shown) in cases {
            let got = parse(value.as_bytes()).unwrap();
            let want: Vec<Vec<u8>> = want.iter().map(|p| p.as_bytes().to_vec()).collect();
            assert_eq!(got, want, "{value:?}");
            assert_eq!(render(&got), shown.as_bytes(), "{value:?}");
        }
        let full: Vec<String> = (0..MAX_PREFIXES).map(|i| format!("p{i}:")).collect();
        assert_eq!(
            parse(full.join(" ").as_bytes()).unwrap().len(),
            MAX_PREFIXES
        );
    }

    #[test]
    fn bad_lists_are_refused_with_their_reason() {
        let too_many: Vec<String> = (0..=MAX_PREFIXES).map(|i| format!("p{i}:")).collect();
        let long = "x".repeat(MAX_PREFIX_LEN + 1);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                too_many.join(" ").into_bytes(),
                "at most 32 prefixes, separated by spaces (got 33)",
            ),
            (long.into_bytes(), "a prefix is at most 128 bytes (got 129)"),
            (
                b"a:,b".to_vec(),
                "a prefix is printable ASCII without ',' or '=' (got byte 0x2c)",
            ),
            (
                b"a=b".to_vec(),
                "a prefix is printable ASCII without ',' or '=' (got byte 0x3d)",
            ),
            (
                b"a\tb".to_vec(),
                "a prefix is printable ASCII without ',' or '=' (got byte 0x09)",
            ),
            (
                b"caf\xc3\xa9".to_vec(),
                "a prefix is printable ASCII without ',' or '=' (got byte 0xc3)",
            ),
            (b"a: b: a:".to_vec(), "prefix 'a:' is listed twice"),
        ];
        for (value, text) in cases {
            let err = parse(&value).unwrap_err();
            assert_eq!(err.to_string(), text, "{value:?}");
        }
        assert_eq!(
            parse(&[b'x'; MAX_PREFIX_LEN]).unwrap()[0].len(),
            MAX_PREFIX_LEN
        );
    }

    #[test]
    fn a_key_matches_any_prefix_it_starts_with() {
        let list = parse(b"api: user:1").unwrap();
        assert!(any_matches(&list, b"api:v1:x"));
        assert!(any_matches(&list, b"user:12"));
        assert!(any_matches(&list, b"api:"));
        assert!(!any_matches(&list, b"ap"));
        assert!(!any_matches(&list, b"user:2"));
        assert!(!any_matches(&[], b"api:"));
    }
}
