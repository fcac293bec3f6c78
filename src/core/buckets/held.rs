//! Which buckets older than the newest have a field of their own: a bit set
//! kept in the bucket header, in hex. Bit `i` stands for bucket
//! `newest - 1 - i`. With it, eviction and the denial walk read exactly the
//! fields that exist instead of probing every bucket index in between (a
//! subject seen every few seconds leaves most indexes empty, and each probe
//! of a missing field is a search of the whole hash).

use smallvec::SmallVec;

use super::request::MAX_BUCKETS;
use crate::core::decimal::Line;

/// Bits a stored set may use. Every field rl keeps is within one window
/// (at most [`MAX_BUCKETS`] buckets) of the newest; twice the bound of
/// earlier releases (1,000 buckets) is refused as not rl's, so that a key
/// they wrote stays readable under the lower bound.
pub const MAX_BITS: usize = 2 * 1_000;
const _: () = assert!(MAX_BITS >= 2 * MAX_BUCKETS as usize);

/// The set kept as its own hex text (most significant digit first, no
/// leading zeros, empty when no bit is set), so the common admission
/// (nothing evicted, same bucket) copies it through without converting it;
/// every operation works on the few digits it touches.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct HeldBuckets {
    hex: SmallVec<[u8; 32]>,
}

impl Clone for HeldBuckets {
    /// One copy of the digits (a SmallVec's own `clone` goes byte by byte).
    fn clone(&self) -> Self {
        HeldBuckets {
            hex: SmallVec::from_slice(&self.hex),
        }
    }
}

const DIGITS: &[u8; 16] = b"0123456789abcdef";

fn value(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => digit - b'0',
        _ => digit - b'a' + 10,
    }
}

impl HeldBuckets {
    /// Parses lowercase hex (most significant digit first) of at most
    /// `MAX_BITS / 4` digits; `None` for anything else.
    pub fn parse(hex: &[u8]) -> Option<HeldBuckets> {
        let valid = |c: &u8| c.is_ascii_digit() || (b'a'..=b'f').contains(c);
        if hex.is_empty() || hex.len() > MAX_BITS / 4 || !hex.iter().all(valid) {
            return None;
        }
        let zeros = hex.iter().take_while(|&&c| c == b'0').count();
        Some(HeldBuckets {
            hex: SmallVec::from_slice(&hex[zeros..]),
        })
    }

    /// Appends the set in hex without leading zeros (`0` when empty).
    pub fn write<const N: usize>(&self, line: &mut Line<N>) {
        if self.hex.is_empty() {
            line.byte(b'0');
        } else {
            line.bytes(&self.hex);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.hex.is_empty()
    }

    /// Digit `k` counted from the least significant end (0 past the top).
    fn nibble(&self, k: usize) -> u8 {
        let n = self.hex.len();
        if k < n {
            value(self.hex[n - 1 - k])
        } else {
            0
        }
    }

    /// The highest bit set (the oldest bucket held).
    pub fn highest(&self) -> Option<usize> {
        let top = value(*self.hex.first()?);
        Some((self.hex.len() - 1) * 4 + 7 - top.leading_zeros() as usize)
    }

    pub fn contains(&self, i: usize) -> bool {
        self.nibble(i / 4) >> (i % 4) & 1 == 1
    }

    pub fn insert(&mut self, i: usize) {
        let k = i / 4;
        let n = self.hex.len();
        if k >= n {
            self.hex
                .insert_many(0, std::iter::repeat_n(b'0', k + 1 - n));
        }
        let at = self.hex.len() - 1 - k;
        self.hex[at] = DIGITS[usize::from(value(self.hex[at]) | 1 << (i % 4))];
    }

    /// Clears bit `i` (a bucket whose field is removed, `RL.REFUND`).
    pub fn remove(&mut self, i: usize) {
        let k = i / 4;
        let n = self.hex.len();
        if k >= n {
            return;
        }
        let at = n - 1 - k;
        self.hex[at] = DIGITS[usize::from(value(self.hex[at]) & !(1 << (i % 4)))];
        self.trim();
    }

    /// The bits set, lowest (newest bucket) first.
    pub fn bits(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.hex.len()).flat_map(move |k| {
            (0..4)
                .map(move |b| k * 4 + b)
                .filter(move |&i| self.nibble(k) >> (i % 4) & 1 == 1)
        })
    }

    /// How many bits are set (one pass over the digits, nothing collected).
    pub fn count(&self) -> usize {
        self.hex
            .iter()
            .map(|&d| value(d).count_ones() as usize)
            .sum()
    }

    /// The bits set, highest (oldest bucket) first: the digits below the
    /// last bit taken are not visited.
    pub fn bits_down(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.hex.len()).rev().flat_map(move |k| {
            (0..4)
                .rev()
                .map(move |b| k * 4 + b)
                .filter(move |&i| self.nibble(k) >> (i % 4) & 1 == 1)
        })
    }

    /// Clears every bit from `len` on.
    pub fn truncate(&mut self, len: usize) {
        let keep = len.div_ceil(4);
        if self.hex.len() > keep {
            let extra = self.hex.len() - keep;
            self.hex.drain(..extra);
        }
        // The top digit kept may hold bits from `len` on.
        if !len.is_multiple_of(4) && self.hex.len() == keep {
            self.hex[0] = DIGITS[usize::from(value(self.hex[0]) & ((1 << (len % 4)) - 1))];
        }
        self.trim();
    }

    /// Moves every bit `i` to `i + by` (the newest bucket moved `by` on).
    pub fn shift_up(&mut self, by: usize) {
        if self.is_empty() || by == 0 {
            return;
        }
        let bits = by % 4;
        if bits != 0 {
            let mut carry = 0u8;
            for digit in self.hex.iter_mut().rev() {
                let v = value(*digit);
                *digit = DIGITS[usize::from((v << bits | carry) & 0xf)];
                carry = v >> (4 - bits);
            }
            if carry != 0 {
                self.hex.insert(0, DIGITS[usize::from(carry)]);
            }
        }
        self.hex.extend(std::iter::repeat_n(b'0', by / 4));
        self.trim();
    }

    fn trim(&mut self) {
        let zeros = self.hex.iter().take_while(|&&c| c == b'0').count();
        if zeros > 0 {
            self.hex.drain(..zeros);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn hex(set: &HeldBuckets) -> String {
        let mut line: Line = Line::new();
        set.write(&mut line);
        String::from_utf8(line.as_slice().to_vec()).unwrap()
    }

    #[test]
    fn hex_round_trips() {
        let mut set = HeldBuckets::default();
        assert_eq!(hex(&set), "0");
        for i in [0, 3, 64, 130] {
            set.insert(i);
        }
        let text = hex(&set);
        assert_eq!(text.len(), 130 / 4 + 1);
        assert!(text.ends_with('9'), "{text}");
        assert_eq!(HeldBuckets::parse(text.as_bytes()), Some(set.clone()));
        assert_eq!(set.bits().collect::<Vec<_>>(), [0, 3, 64, 130]);
        assert_eq!(set.highest(), Some(130));
        assert_eq!(HeldBuckets::parse(b"0"), Some(HeldBuckets::default()));
        assert_eq!(HeldBuckets::parse(b"000f").unwrap().highest(), Some(3));
    }

    #[test]
    fn what_rl_did_not_write_is_refused() {
        for bad in [&b""[..], b"F", b"-1", b"1 ", b"g"] {
            assert_eq!(HeldBuckets::parse(bad), None, "{bad:?}");
        }
        assert!(HeldBuckets::parse(&[b'f'; MAX_BITS / 4]).is_some());
        assert_eq!(HeldBuckets::parse(&[b'1'; MAX_BITS / 4 + 1]), None);
    }

    proptest! {
        /// Shifting and truncating behave like the same moves on a set of
        /// integers.
        #[test]
        fn behaves_like_a_set_of_offsets(
            start in proptest::collection::btree_set(0usize..300, 0..40),
            ops in proptest::collection::vec((0u8..4, 0usize..200), 0..20),
        ) {
            let mut set = HeldBuckets::default();
            start.iter().for_each(|&i| set.insert(i));
            let mut model: BTreeSet<usize> = start;
            for (op, n) in ops {
                match op {
                    0 => {
                        set.shift_up(n);
                        model = model.iter().map(|&i| i + n).collect();
                    }
                    1 => {
                        set.truncate(n);
                        model.retain(|&i| i < n);
                    }
                    2 => {
                        set.insert(n);
                        model.insert(n);
                    }
                    _ => {
                        set.remove(n);
                        model.remove(&n);
                    }
                }
                prop_assert_eq!(set.bits().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(set.highest(), model.last().copied());
                prop_assert_eq!(set.count(), model.len());
                prop_assert_eq!(
                    set.bits_down().collect::<Vec<_>>(),
                    model.iter().rev().copied().collect::<Vec<_>>()
                );
                prop_assert_eq!(
                    set.bits_down().take_while(|&i| i >= n).collect::<Vec<_>>(),
                    model.range(n..).rev().copied().collect::<Vec<_>>()
                );
                let text = hex(&set);
                let parsed = HeldBuckets::parse(text.as_bytes());
                prop_assert_eq!(parsed.as_ref(), Some(&set));
            }
        }
    }
}
