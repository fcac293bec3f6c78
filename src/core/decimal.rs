//! Decimal text as rl stores it, written on the stack: no allocation, no
//! `format!` (the bucket header is formatted on every admission, RL.SLIDE's
//! member on every admission too).

/// Bytes the default [`Line`] holds: more than the longest rl value, an
/// RL.COUNT header (a tag, two signed numbers and eight counts, each at most
/// 21 bytes with its comma, and a held-bucket set of at most 500 hex
/// digits: 712). Shorter values use a smaller `N` (less stack to clear).
pub const LINE_CAPACITY: usize = 1024;

/// `b'0'` in each byte of a u64.
const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// `x` (below 10^8) as its eight digits, zero-padded, one value 0..=9 a
/// byte, the first digit in the lowest: the two halves of four digits side
/// by side in one u64, split into pairs and then into digits with
/// multiplications by reciprocals (P. Khuong's method, as D. Lemire
/// describes it), exact for every such `x` (tested below).
fn eight_values(x: u64) -> u64 {
    let merged = (x / 10_000) | ((x % 10_000) << 32);
    let hundreds_hi = ((merged * 10_486) >> 20) & ((0x7f << 32) | 0x7f);
    let hundreds_lo = merged - 100 * hundreds_hi;
    let hundreds = (hundreds_lo << 16) + hundreds_hi;
    let mut tens = ((hundreds * 103) >> 10) & ((0xf << 48) | (0xf << 32) | (0xf << 16) | 0xf);
    tens += (hundreds - 10 * tens) << 8;
    tens
}

/// `x` (below 10^8) as eight ASCII digits, zero-padded.
fn eight_digits(x: u64) -> [u8; 8] {
    (eight_values(x) + ASCII_ZEROS).to_le_bytes()
}

/// A short value built left to right in a stack buffer of `N` bytes.
pub struct Line<const N: usize = LINE_CAPACITY> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Default for Line<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Line<N> {
    pub fn new() -> Line<N> {
        Line {
            buf: [0; N],
            len: 0,
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    pub fn byte(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    pub fn bytes(&mut self, s: &[u8]) {
        self.buf[self.len..self.len + s.len()].copy_from_slice(s);
        self.len += s.len();
    }

    /// `v` in decimal, zero-padded to at least `width` digits (at most 20).
    pub fn unsigned(&mut self, v: u64, width: usize) {
        // Eight digits at a time, each group in a few multiplications
        // ([`eight_digits`]), only the groups `v` has: the TAT's 16 digits,
        // the expiry's 13 and a member's 19 are formatted on every
        // admission, where a pair a step cost about half as much again.
        const E8: u64 = 100_000_000;
        let mut digits = [b'0'; 24];
        let (groups, high) = if v < E8 {
            (1, v)
        } else if v < E8 * E8 {
            digits[16..].copy_from_slice(&eight_digits(v % E8));
            (2, v / E8)
        } else {
            digits[8..16].copy_from_slice(&eight_digits((v / E8) % E8));
            digits[16..].copy_from_slice(&eight_digits(v % E8));
            (3, v / (E8 * E8))
        };
        let high = eight_values(high);
        let from = 24 - 8 * groups;
        digits[from..from + 8].copy_from_slice(&(high + ASCII_ZEROS).to_le_bytes());
        // The high group's leading zeros are its low zero bytes (the first
        // digit is the lowest byte); 0 is one digit.
        let n = (8 * groups - (high.trailing_zeros() / 8) as usize).max(1);
        self.bytes(&digits[24 - n.max(width.min(20))..]);
    }

    /// The last `width` digits (at most 8) of `v` (below 10^8), zero-padded:
    /// a fixed-width field (an RL.SLIDE member's number within its ms),
    /// one group and no length to find.
    #[inline]
    pub fn fixed(&mut self, v: u64, width: usize) {
        let eight = eight_digits(v);
        self.bytes(&eight[8 - width.min(8)..]);
    }

    /// `v` in decimal, with a `-` when negative.
    pub fn signed(&mut self, v: i64) {
        if v < 0 {
            self.byte(b'-');
        }
        self.unsigned(v.unsigned_abs(), 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn unsigned(v: u64, width: usize) -> String {
        let mut l: Line = Line::new();
        l.unsigned(v, width);
        String::from_utf8(l.as_slice().to_vec()).unwrap()
    }

    #[test]
    fn writes_every_digit_and_pads() {
        assert_eq!(unsigned(0, 1), "0");
        assert_eq!(unsigned(0, 9), "000000000");
        assert_eq!(unsigned(7, 1), "7");
        assert_eq!(unsigned(42, 9), "000000042");
        assert_eq!(unsigned(100_000_000, 9), "100000000");
        assert_eq!(unsigned(1_000_000_000, 9), "1000000000");
        assert_eq!(unsigned(u64::MAX, 1), "18446744073709551615");
        let mut l: Line<24> = Line::new();
        l.bytes(b"1764523000123");
        l.fixed(42, 6);
        assert_eq!(l.as_slice(), b"1764523000123000042");
        let mut l: Line<48> = Line::new();
        l.signed(-1_764_523_000_123);
        l.byte(b',');
        l.signed(i64::MIN);
        assert_eq!(l.as_slice(), b"-1764523000123,-9223372036854775808");
    }

    #[test]
    fn eight_digits_are_exact_at_every_group_boundary() {
        for x in (0..100_000_000u64).step_by(9_973).chain([
            0, 9, 10, 99, 100, 9_999, 10_000, 99_999_999, 12_345_678, 10_001_000,
        ]) {
            assert_eq!(eight_digits(x), *format!("{x:08}").as_bytes(), "{x}");
        }
    }

    proptest! {
        #[test]
        fn matches_format(v: u64, width in 1usize..21, s: i64) {
            prop_assert_eq!(unsigned(v, width), format!("{v:0width$}"));
            let mut l: Line<21> = Line::new();
            l.signed(s);
            let text = s.to_string();
            prop_assert_eq!(l.as_slice(), text.as_bytes());
        }
    }
}
