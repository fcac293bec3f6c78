//! Small parsers shared by every command's request type.

use super::error::RlError;

/// Parses a decimal integer in `1..=max`; anything else (sign, spaces,
/// overflow, non-digits, empty) names `arg` in the error.
pub fn positive(bytes: &[u8], arg: &'static str, max: u64) -> Result<u64, RlError> {
    let err = RlError::OutOfRange { arg, max };
    if bytes.is_empty() || bytes.len() > 20 {
        return Err(err);
    }
    let mut value: u64 = 0;
    for &b in bytes {
        if !b.is_ascii_digit() {
            return Err(err);
        }
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or(err.clone())?;
    }
    if value == 0 || value > max {
        return Err(err);
    }
    Ok(value)
}

/// Sets an option slot once; a second occurrence is an error.
pub fn set_once<T>(slot: &mut Option<T>, value: T, option: &'static str) -> Result<(), RlError> {
    if slot.is_some() {
        return Err(RlError::DuplicateOption { option });
    }
    *slot = Some(value);
    Ok(())
}

/// The value following an option token, or the error naming the option.
pub fn option_value<'a>(
    args: &[&'a [u8]],
    at: usize,
    option: &'static str,
) -> Result<&'a [u8], RlError> {
    args.get(at)
        .copied()
        .ok_or(RlError::MissingValue { option })
}

/// An option token as the client sent it, made safe to echo in an error
/// line: control bytes become `?` and long tokens are cut.
pub fn token_text(bytes: &[u8]) -> String {
    const MAX_ECHO: usize = 32;
    let shown = &bytes[..bytes.len().min(MAX_ECHO)];
    let mut text: String = String::from_utf8_lossy(shown)
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if bytes.len() > MAX_ECHO {
        text.push_str("...");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_accepts_only_integers_in_range() {
        let ok: &[(&[u8], u64)] = &[(b"1", 1), (b"100", 100), (b"007", 7), (b"1000", 1000)];
        for (input, want) in ok {
            assert_eq!(positive(input, "n", 1000), Ok(*want));
        }
        let bad: &[&[u8]] = &[
            b"",
            b"0",
            b"-1",
            b"+1",
            b" 1",
            b"1 ",
            b"1.5",
            b"abc",
            b"1001",
            b"99999999999999999999",
            b"184467440737095516160",
            b"\xff",
        ];
        for input in bad {
            assert_eq!(
                positive(input, "n", 1000),
                Err(RlError::OutOfRange {
                    arg: "n",
                    max: 1000
                }),
                "input {input:?}"
            );
        }
    }

    #[test]
    fn token_text_is_safe_to_echo() {
        assert_eq!(token_text(b"COST"), "COST");
        assert_eq!(token_text(b"a\r\nb\0"), "a??b?");
        assert_eq!(token_text(&[b'x'; 40]), format!("{}...", "x".repeat(32)));
    }

    #[test]
    fn set_once_rejects_a_second_value() {
        let mut slot = None;
        assert!(set_once(&mut slot, 1, "COST").is_ok());
        assert_eq!(
            set_once(&mut slot, 2, "COST"),
            Err(RlError::DuplicateOption { option: "COST" })
        );
        assert_eq!(slot, Some(1));
    }
}
