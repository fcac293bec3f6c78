//! Small parsers shared by every command's request type.

use super::error::RlError;
use super::syntax::Syntax;

/// Largest window in ms of every windowed limiter (about 31.7 years), so `now + window` and every
/// score stay exact in a double and far from integer overflow.
pub const MAX_WINDOW_MS: u64 = 1_000_000_000_000;

/// Parses a decimal integer in `1..=max`; anything else (sign, spaces,
/// leading zeros, overflow, non-digits, empty) names `arg` in the error.
pub fn positive(bytes: &[u8], arg: &'static str, max: u64) -> Result<u64, RlError> {
    match argument(bytes) {
        Some(v) if (1..=max).contains(&v) => Ok(v),
        _ => Err(RlError::OutOfRange { arg, max }),
    }
}

/// Parses a decimal integer in `0..=max` (for arguments where zero means
/// something, like a burst of none or a quantity that only peeks).
pub fn non_negative(bytes: &[u8], arg: &'static str, max: u64) -> Result<u64, RlError> {
    match argument(bytes) {
        Some(v) if v <= max => Ok(v),
        _ => Err(RlError::NotInRange { arg, min: 0, max }),
    }
}

/// A non-negative integer argument written as the server writes integers
/// (`string2ll`): digits only, no sign, no leading zero (`05` and `00` are
/// refused, as `SET k v EX 05` is). Stored states are read with the more
/// lenient [`unsigned`], since earlier releases wrote zero-padded counts.
pub fn argument(bytes: &[u8]) -> Option<u64> {
    if bytes.len() > 1 && bytes[0] == b'0' {
        return None;
    }
    unsigned(bytes)
}

/// A plain unsigned decimal (digits only, no sign, no spaces, leading zeros
/// allowed) that fits in a `u64`, as rl reads its stored integer states;
/// `None` for anything else.
pub fn unsigned(bytes: &[u8]) -> Option<u64> {
    let n = bytes.len();
    if n == 0 || n > 20 {
        return None;
    }
    // 19 digits stay below u64::MAX: only a 20th can overflow, so only it
    // is checked. Eight digits at a time while eight remain (a stored TAT's
    // 16 in two steps, a member's 19 in two and three single digits), by
    // index: slice iterators cost as much again here.
    let safe = n.min(19);
    let (mut value, mut i) = (0u64, 0);
    while i + 8 <= safe {
        let group = u64::from_le_bytes(bytes[i..i + 8].try_into().ok()?);
        value = value * 100_000_000 + eight_digits(group)?;
        i += 8;
    }
    while i < safe {
        let d = bytes[i].wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        value = value * 10 + u64::from(d);
        i += 1;
    }
    if n == 20 {
        let d = bytes[19].wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(value)
}

/// Eight ASCII digits read as one little-endian u64 (the first digit in the
/// lowest byte) as their value; `None` if a byte is not a digit. Each byte
/// is a digit when its high half is 3 and adding 6 keeps it so; then the
/// digits are combined in pairs, fours and eights with three
/// multiplications.
fn eight_digits(x: u64) -> Option<u64> {
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    if x & HIGH != ZEROS || x.wrapping_add(0x0606_0606_0606_0606) & HIGH != ZEROS {
        return None;
    }
    let x = x - ZEROS;
    let x = (x * 10 + (x >> 8)) & 0x00ff_00ff_00ff_00ff;
    let x = (x * 100 + (x >> 16)) & 0x0000_ffff_0000_ffff;
    Some((x * 10_000 + (x >> 32)) & 0xffff_ffff)
}

/// The trailing `[COST cost]` of a command declared by `syntax` (whose only
/// option is `COST`): `cost` in `1..=max`, default 1.
pub fn cost_option(syntax: &Syntax, args: &[&[u8]], max: u64) -> Result<u64, RlError> {
    let mut cost = None;
    syntax.for_each_option(args, |name, value| {
        set_once(&mut cost, positive(value, name, max)?, name)
    })?;
    Ok(cost.unwrap_or(1))
}

/// Sets an option slot once; a second occurrence is an error.
pub fn set_once<T>(slot: &mut Option<T>, value: T, option: &'static str) -> Result<(), RlError> {
    if slot.is_some() {
        return Err(RlError::DuplicateOption { option });
    }
    *slot = Some(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_accepts_only_integers_in_range() {
        let ok: &[(&[u8], u64)] = &[(b"1", 1), (b"100", 100), (b"1000", 1000)];
        for (input, want) in ok {
            assert_eq!(positive(input, "n", 1000), Ok(*want));
        }
        let bad: &[&[u8]] = &[
            b"",
            b"0",
            b"007",
            b"01",
            b"-0",
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
    fn non_negative_accepts_zero_and_names_the_argument() {
        let ok: &[(&[u8], u64)] = &[(b"0", 0), (b"7", 7), (b"1000", 1000)];
        for (input, want) in ok {
            assert_eq!(non_negative(input, "n", 1000), Ok(*want));
        }
        let bad: &[&[u8]] = &[
            b"",
            b"00",
            b"05",
            b"-0",
            b"-1",
            b"+0",
            b" 0",
            b"1001",
            b"1e3",
            b"99999999999999999999999",
        ];
        for input in bad {
            assert_eq!(
                non_negative(input, "n", 1000),
                Err(RlError::NotInRange {
                    arg: "n",
                    min: 0,
                    max: 1000
                }),
                "input {input:?}"
            );
        }
    }

    #[test]
    fn unsigned_reads_only_plain_digits() {
        assert_eq!(unsigned(b"0"), Some(0));
        assert_eq!(
            unsigned(b"000000042"),
            Some(42),
            "earlier releases' padded counts"
        );
        assert_eq!(argument(b"000000042"), None, "but not as an argument");
        assert_eq!(unsigned(b"18446744073709551615"), Some(u64::MAX));
        for bad in [&b""[..], b"18446744073709551616", b"-1", b"1.0", b"12 "] {
            assert_eq!(unsigned(bad), None, "{bad:?}");
        }
    }

    proptest::proptest! {
        /// The same answer as Rust's own parsing of plain digits, at every
        /// length and with a stray byte anywhere.
        #[test]
        fn unsigned_is_rusts_parse_of_plain_digits(
            s in "[0-9]{0,21}|[0-9]{0,9}[^0-9][0-9]{0,11}|1844674407370955161[0-9]",
        ) {
            let want = if s.is_empty() || s.len() > 20 || !s.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else {
                s.parse::<u64>().ok()
            };
            proptest::prop_assert_eq!(unsigned(s.as_bytes()), want);
        }
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
