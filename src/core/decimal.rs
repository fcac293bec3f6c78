//! Decimal text as rl stores it, written on the stack: no allocation, no
//! `format!` (the bucket header is formatted on every admission, RL.SLIDE's
//! member on every admission too).

/// Two-digit pairs "00".."99", so each step writes two digits.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Bytes the default [`Line`] holds: more than the longest rl value, an
/// RL.COUNT header (a tag, two signed numbers and eight counts, each at most
/// 21 bytes with its comma, and a held-bucket set of at most 500 hex
/// digits: 712). Shorter values use a smaller `N` (less stack to clear).
pub const LINE_CAPACITY: usize = 1024;

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
    pub fn unsigned(&mut self, mut v: u64, width: usize) {
        // Built right to left in a buffer of zeros (the padding comes free),
        // two digits a step, then copied once.
        let mut digits = [b'0'; 20];
        let mut at = digits.len();
        while v >= 100 {
            let pair = (v % 100) as usize * 2;
            v /= 100;
            at -= 2;
            digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if v >= 10 {
            let pair = v as usize * 2;
            at -= 2;
            digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else {
            at -= 1;
            digits[at] = b'0' + v as u8;
        }
        let from = at.min(digits.len() - width.min(digits.len()));
        self.bytes(&digits[from..]);
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
        let mut l: Line<48> = Line::new();
        l.signed(-1_764_523_000_123);
        l.byte(b',');
        l.signed(i64::MIN);
        assert_eq!(l.as_slice(), b"-1764523000123,-9223372036854775808");
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
