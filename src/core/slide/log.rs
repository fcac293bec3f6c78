//! The log's layout: one sorted-set entry per admitted unit of cost, its
//! score the admission time in ms, its member numbered from that score; read
//! through [`LogView`], written as [`LogWrite`] data: an [`Admission`], or
//! the removal of named entries (`RL.REFUND`).

use smallvec::SmallVec;

use crate::core::expiry::Expiry;

/// Members of one millisecond are numbered `0..MEMBERS_PER_MS`; a member is
/// `score * MEMBERS_PER_MS + n`. It is an integer, so a listpack stores it in
/// at most 9 bytes, and it is unique across scores by construction.
pub const MEMBERS_PER_MS: i64 = 1_000_000;

/// Latest `now` for which members (`now * MEMBERS_PER_MS + n`) fit in i64
/// (year 2262), and so the latest score rl writes. A key holding later
/// scores (`+inf`, `1e300`) was not written by rl.
pub const MAX_NOW_MS: i64 = i64::MAX / MEMBERS_PER_MS - 1;

/// The member that holds a block (`BLOCK ms`, `RL.BLOCK`), its score the
/// block's end: not a number, so no entry's member, and it sorts after
/// the digit members of its score (the newest entry while the block holds).
pub const BLOCK_MEMBER_TEXT: &[u8] = b"rl block";

/// [`BLOCK_MEMBER_TEXT`] as an [`Entry`]'s member reads it: a number no
/// entry rl numbers can be (a stored integer member equal to it reads as
/// not rl's, see the host's member parsing).
pub const BLOCK_MEMBER: i64 = i64::MIN;

/// The member for the `n`-th entry admitted at `score`.
pub fn member(score: i64, n: i64) -> i64 {
    score * MEMBERS_PER_MS + n
}

/// A member's bytes as the integer the server reads them as (its
/// `string2ll`, which `RedisModule_StringToLongLong` calls): an optional
/// `-`, then `0` alone or digits without a leading zero, in `i64`, at most
/// 20 bytes; `None` for anything else. Parsed here from the bytes, where the
/// server's call costs several times more per member read.
pub fn member_integer(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes {
        [b'0'] => return Some(0),
        [b'-', rest @ ..] => (true, rest),
        _ => (false, bytes),
    };
    // The server's bound on the whole text (sign included): 20 bytes.
    if bytes.len() > 20 || !matches!(digits.first(), Some(b'1'..=b'9')) {
        return None;
    }
    // Digits only, at most 20 of them, in u64 (eight at a time).
    let v = crate::core::args::unsigned(digits)?;
    if negative {
        0i64.checked_sub_unsigned(v)
    } else {
        i64::try_from(v).ok()
    }
}

/// One stored entry: its score in whole ms (a score that is not a whole
/// finite number, `+inf` included, reads as `i64::MIN`) and its member, if
/// the member is an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub score: i64,
    pub member: Option<i64>,
}

impl Entry {
    /// Whether rl could have written this entry: a score it accepts and the
    /// member it numbers from that score (`score * MEMBERS_PER_MS + n`).
    pub fn is_rl(&self) -> bool {
        (0..=MAX_NOW_MS).contains(&self.score)
            && self
                .member
                .is_some_and(|m| m.div_euclid(MEMBERS_PER_MS) == self.score)
    }

    /// Whether this is the block's member, at a score rl could have given
    /// a block's end (`now + ms`, at most `MAX_NOW_MS + MAX_BLOCK_MS`).
    pub fn is_block(&self) -> bool {
        self.member == Some(BLOCK_MEMBER)
            && (0..=MAX_NOW_MS + crate::core::options::block::MAX_BLOCK_MS as i64)
                .contains(&self.score)
    }
}

/// The oldest end of a log, as [`LogView::oldest_through`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Oldest {
    /// How many entries have a score `<= cutoff` (exact, however many).
    pub stale: u64,
    /// The oldest entries, in order: the first `min(stale, max_read)` of
    /// them, and at least the oldest one (none for an empty log).
    pub entries: SmallVec<[Entry; 4]>,
}

/// Read access to a log, in score order. Implementations answer from the
/// stored data only; they never write. Each answer costs bounded work.
pub trait LogView {
    /// Number of entries, including those that have left the window.
    fn entry_count(&mut self) -> u64;
    /// The oldest end: see [`Oldest`].
    fn oldest_through(&mut self, cutoff: i64, max_read: u64) -> Oldest;
    /// Score of the `n`-th (1-based) entry with score `> after`, knowing
    /// that `rank` entries have a score `<= after`.
    fn nth_after(&mut self, after: i64, rank: u64, n: u64) -> Option<i64>;
    /// The last entry: highest score and, among equal scores, the greatest
    /// member. New entries are recorded at its score or later, so it also
    /// tells which members are taken.
    fn newest(&mut self) -> Option<Entry>;
    /// The `n` newest entries with a score `> after`, newest first (fewer
    /// when fewer are there). `n` is small (`RL.REFUND`: at most
    /// `MAX_COST + 1`): the answer walks them from the end.
    fn newest_after(&mut self, after: i64, n: u64) -> SmallVec<[Entry; 4]>;
    /// [`newest`](Self::newest) and [`oldest_through`](Self::oldest_through)
    /// together (the oldest end `None` for an empty log), for a store that
    /// reads both in one pass: every call reads both.
    fn ends(&mut self, cutoff: i64, max_read: u64) -> (Option<Entry>, Oldest) {
        let newest = self.newest();
        let oldest = match newest {
            Some(_) => self.oldest_through(cutoff, max_read),
            None => Oldest::default(),
        };
        (newest, oldest)
    }
}

/// What an admitted request writes. A denied request writes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    /// Remove this many of the oldest entries, all of which have left the
    /// window (and were checked to be rl's).
    pub evict: u64,
    /// Score of the new entries: `now`, or the newest entry's score if the
    /// clock stepped back.
    pub at: i64,
    /// First candidate member; the new entries take the next free members.
    pub first_member: i64,
    /// How many entries to add (the request's cost).
    pub count: u64,
    /// The key must live until the newest entry leaves the window.
    pub expiry: Expiry,
    /// Remove the block's member, a block that has ended: an admission
    /// after a block keeps no trace of it.
    pub unblock: bool,
}

/// What a call writes to a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogWrite {
    /// An admission (`RL.SLIDE`, a `SLIDE` clause).
    Admit(Admission),
    /// `RL.REFUND`: remove these members, entries rl numbered that still
    /// count. The expiry stays: it covers the newest entry, which a removal
    /// never makes newer.
    Remove(SmallVec<[i64; 4]>),
    /// A block until `until` (`BLOCK ms` on a denial, `RL.BLOCK`): the
    /// block's member at that score (`ZADD`), the key kept until then.
    Block { until: i64, expiry: Expiry },
    /// `RL.UNBLOCK`: the block's member removed (`ZREM`), the counts kept.
    Unblock,
}

/// An in-memory log with sorted-set semantics (order by score, then member).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryLog {
    entries: Vec<(i64, i64)>,
}

impl MemoryLog {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn entries(&self) -> &[(i64, i64)] {
        &self.entries
    }

    /// Adds an entry as a foreign writer would (tests).
    pub fn insert(&mut self, score: i64, member: i64) {
        self.entries.push((score, member));
        self.sort();
    }

    /// Sorted-set order: by score, then member, the block's member (a
    /// string) after the numbers of its score.
    fn sort(&mut self) {
        self.entries
            .sort_unstable_by_key(|&(s, m)| (s, m == BLOCK_MEMBER, m));
    }

    /// Applies an admission the way the host does on the sorted set.
    pub fn apply(&mut self, a: &Admission) {
        let mut m = a.first_member;
        for _ in 0..a.count {
            while self.entries.iter().any(|&(_, x)| x == m) {
                m += 1;
            }
            self.entries.push((a.at, m));
            m += 1;
        }
        if a.unblock {
            self.entries.retain(|&(_, m)| m != BLOCK_MEMBER);
        }
        self.sort();
        // By rank, as ZREMRANGEBYRANK 0 evict-1 does on a replica.
        self.entries.drain(..a.evict as usize);
    }

    /// Applies any write the way the host does.
    pub fn apply_write(&mut self, w: &LogWrite) {
        match w {
            LogWrite::Admit(a) => self.apply(a),
            LogWrite::Remove(members) => self.entries.retain(|(_, m)| !members.contains(m)),
            LogWrite::Block { until, .. } => {
                self.entries.retain(|&(_, m)| m != BLOCK_MEMBER);
                self.insert(*until, BLOCK_MEMBER);
            }
            LogWrite::Unblock => self.entries.retain(|&(_, m)| m != BLOCK_MEMBER),
        }
    }
}

impl LogView for MemoryLog {
    fn entry_count(&mut self) -> u64 {
        self.entries.len() as u64
    }
    fn oldest_through(&mut self, cutoff: i64, max_read: u64) -> Oldest {
        let stale = self.entries.partition_point(|&(s, _)| s <= cutoff);
        let read = (stale as u64).min(max_read).max(1) as usize;
        Oldest {
            stale: stale as u64,
            entries: self
                .entries
                .iter()
                .take(read)
                .map(|&(score, m)| Entry {
                    score,
                    member: Some(m),
                })
                .collect(),
        }
    }
    fn nth_after(&mut self, after: i64, rank: u64, n: u64) -> Option<i64> {
        debug_assert_eq!(
            rank as usize,
            self.entries.partition_point(|&(s, _)| s <= after)
        );
        let idx = usize::try_from(rank + n).ok()?.checked_sub(1)?;
        self.entries.get(idx).map(|&(s, _)| s)
    }
    fn newest(&mut self) -> Option<Entry> {
        self.entries.last().map(|&(score, m)| Entry {
            score,
            member: Some(m),
        })
    }
    fn newest_after(&mut self, after: i64, n: u64) -> SmallVec<[Entry; 4]> {
        self.entries
            .iter()
            .rev()
            .take_while(|&&(s, _)| s > after)
            .take(usize::try_from(n).unwrap_or(usize::MAX))
            .map(|&(score, m)| Entry {
                score,
                member: Some(m),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::member_integer;
    use proptest::prelude::*;

    #[test]
    fn member_integers_read_as_the_server_reads_them() {
        let rows: &[(&[u8], Option<i64>)] = &[
            (b"0", Some(0)),
            (b"7", Some(7)),
            (b"-7", Some(-7)),
            (b"1796126400000000001", Some(1_796_126_400_000_000_001)),
            (b"9223372036854775807", Some(i64::MAX)),
            (b"-9223372036854775808", Some(i64::MIN)),
            (b"9223372036854775808", None),
            (b"-9223372036854775809", None),
            (b"18446744073709551616", None),
            (b"99999999999999999999", None),
            (b"9999999999999999999", None),
            (b"-9999999999999999999", None),
            (b"999999999999999999", Some(999_999_999_999_999_999)),
            (b"-0", None),
            (b"00", None),
            (b"07", None),
            (b"-07", None),
            (b"+7", None),
            (b" 7", None),
            (b"7 ", None),
            (b"7.0", None),
            (b"-", None),
            (b"", None),
            (b"rl block", None),
            (b"000000000000000000001", None),
        ];
        for &(bytes, want) in rows {
            assert_eq!(
                member_integer(bytes),
                want,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    proptest! {
        /// Exactly the canonical decimal texts of i64 values are integers
        /// (as `string2ll` accepts), each read as its value.
        #[test]
        fn only_canonical_decimals_are_integers(s in "-?[0-9]{0,21}|[-+ 0-9a]{0,6}") {
            let want = s.parse::<i64>().ok().filter(|v| v.to_string() == s);
            prop_assert_eq!(member_integer(s.as_bytes()), want);
        }

        #[test]
        fn a_stray_byte_among_the_digits_is_no_integer(
            head in "[1-9][0-9]{1,17}",
            odd in prop::sample::select(vec![b'/', b':', b'a', b' ', 0x00, 0x30 + 0x80, 0xb9, 0x3a]),
            at in 0usize..19,
            tail in "[0-9]{0,3}",
        ) {
            let mut text = format!("{head}{tail}").into_bytes();
            let at = at.min(text.len() - 1).max(1);
            text[at] = odd;
            prop_assert_eq!(member_integer(&text), None);
        }

        #[test]
        fn every_i64_reads_back(v in any::<i64>()) {
            prop_assert_eq!(member_integer(v.to_string().as_bytes()), Some(v));
        }
    }
}
