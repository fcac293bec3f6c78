//! Which buckets older than the newest have a field of their own: a bit set
//! kept in the bucket header, in hex. Bit `i` stands for bucket
//! `newest - 1 - i`. With it, eviction and the denial walk read exactly the
//! fields that exist instead of probing every bucket index in between (a
//! subject seen every few seconds leaves most indexes empty, and each probe
//! of a missing field is a search of the whole hash).

use smallvec::SmallVec;

use super::bucket_window::MAX_BUCKETS;
use super::decimal::Line;

/// Bits a stored set may use. Every field rl keeps is within one window
/// (at most [`MAX_BUCKETS`] buckets) of the newest; twice that is refused
/// as not rl's.
pub const MAX_BITS: usize = 2 * MAX_BUCKETS as usize;

/// The set, 64 bits per word, word 0 holding bits 0..64.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeldBuckets {
    words: SmallVec<[u64; 2]>,
}

impl HeldBuckets {
    /// Parses lowercase hex (most significant digit first) of at most
    /// `MAX_BITS / 4` digits; `None` for anything else.
    pub fn parse(hex: &[u8]) -> Option<HeldBuckets> {
        if hex.is_empty() || hex.len() > MAX_BITS / 4 {
            return None;
        }
        let mut set = HeldBuckets::default();
        for (i, &c) in hex.iter().rev().enumerate() {
            let nibble = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                _ => return None,
            };
            let (word, shift) = (i / 16, (i % 16) * 4);
            if set.words.len() <= word {
                set.words.resize(word + 1, 0);
            }
            set.words[word] |= u64::from(nibble) << shift;
        }
        set.trim();
        Some(set)
    }

    /// Appends the set in hex without leading zeros (`0` when empty).
    pub fn write<const N: usize>(&self, line: &mut Line<N>) {
        let Some(top) = self.highest() else {
            line.byte(b'0');
            return;
        };
        for i in (0..=top / 4).rev() {
            let nibble = (self.words[i / 16] >> ((i % 16) * 4)) & 0xf;
            line.byte(b"0123456789abcdef"[nibble as usize]);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The highest bit set (the oldest bucket held).
    pub fn highest(&self) -> Option<usize> {
        let top = *self.words.last()?;
        Some((self.words.len() - 1) * 64 + 63 - top.leading_zeros() as usize)
    }

    pub fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    pub fn insert(&mut self, i: usize) {
        if self.words.len() <= i / 64 {
            self.words.resize(i / 64 + 1, 0);
        }
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// The bits set, lowest (newest bucket) first.
    pub fn bits(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(at, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                let bit = (rest != 0).then(|| rest.trailing_zeros() as usize)?;
                rest &= rest - 1;
                Some(at * 64 + bit)
            })
        })
    }

    /// Clears every bit from `len` on.
    pub fn truncate(&mut self, len: usize) {
        let whole = len / 64;
        if whole < self.words.len() {
            self.words.truncate(whole + 1);
            self.words[whole] &= (1u64 << (len % 64)).wrapping_sub(1);
        }
        self.trim();
    }

    /// Moves every bit `i` to `i + by` (the newest bucket moved `by` on).
    pub fn shift_up(&mut self, by: usize) {
        if self.is_empty() || by == 0 {
            return;
        }
        let (words, bits) = (by / 64, by % 64);
        let mut out: SmallVec<[u64; 2]> = SmallVec::from_elem(0, words);
        let mut carry = 0u64;
        for &w in &self.words {
            out.push(w << bits | carry);
            carry = if bits == 0 { 0 } else { w >> (64 - bits) };
        }
        out.push(carry);
        self.words = out;
        self.trim();
    }

    fn trim(&mut self) {
        while self.words.last() == Some(&0) {
            self.words.pop();
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
            ops in proptest::collection::vec((0u8..3, 0usize..200), 0..20),
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
                    _ => {
                        set.insert(n);
                        model.insert(n);
                    }
                }
                prop_assert_eq!(set.bits().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(set.highest(), model.last().copied());
                let text = hex(&set);
                let parsed = HeldBuckets::parse(text.as_bytes());
                prop_assert_eq!(parsed.as_ref(), Some(&set));
            }
        }
    }
}
