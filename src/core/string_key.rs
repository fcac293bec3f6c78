//! The storage kind `RL.THROTTLE` and `RL.FIXED` share: one plain decimal
//! string with an absolute expiry, read through [`StringView`] and written
//! whole as [`StringWrite`] (replicated as `SET key value PXAT at`, or as
//! `INCRBY key step` when only the count moves: [`step_to`]).
//!
//! A blocked key (`BLOCK`, `RL.BLOCK`) holds `<state>e<expiry>b<until>`: the
//! state as before, the expiry it would have without the block (the TAT
//! rounded up, the window's end) and the block's end, all plain decimals in
//! ms but the state. Its TTL is the later of the two ends, so the key lives
//! as long as either says something. An unblocked state is plain digits, so
//! the hot path reads it as before and looks for the extended form only
//! when the digits stop.

use super::error::RlError;
use super::options::block::in_force;

/// Read access to a string key. Implementations never write.
pub trait StringView {
    /// The stored bytes; `None` for a missing key.
    fn value(&self) -> Option<&[u8]>;
    /// The key's absolute expiry in ms; `None` without a TTL.
    fn expire_at_ms(&self) -> Option<i64>;
}

/// What an admission stores: the whole value and its absolute expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringWrite {
    pub value: u64,
    /// The state's own expiry (the key's, when no block is kept).
    pub expire_at_ms: i64,
    /// The end of a block kept with the state (`None`: none).
    pub blocked_until: Option<i64>,
    /// The value is a count (a fixed window's), which a write that keeps
    /// its expiry may step with `INCRBY`; a throttle's schedule is always
    /// written whole (see [`step_to`]).
    pub count: bool,
}

impl StringWrite {
    /// A state without a block, expiring at `expire_at_ms`.
    pub fn plain(value: u64, expire_at_ms: i64) -> StringWrite {
        StringWrite {
            value,
            expire_at_ms,
            blocked_until: None,
            count: false,
        }
    }

    /// A fixed window's count without a block, its window ending at
    /// `expire_at_ms`.
    pub fn counter(value: u64, expire_at_ms: i64) -> StringWrite {
        StringWrite {
            count: true,
            ..StringWrite::plain(value, expire_at_ms)
        }
    }

    /// The key's absolute expiry: the state's, or the block's end if later.
    pub fn key_expire_at_ms(&self) -> i64 {
        self.blocked_until
            .map_or(self.expire_at_ms, |u| u.max(self.expire_at_ms))
    }

    /// The extended value of a blocked state, `<value>e<expiry>b<until>`;
    /// `None` for a plain one (stored as the digits of `value`).
    pub fn blocked_bytes(&self) -> Option<String> {
        let until = self.blocked_until?;
        Some(format!("{}e{}b{}", self.value, self.expire_at_ms, until))
    }
}

/// A stored value split into its state's bytes, the state's own expiry and
/// the block's end. A plain value is its own state, its expiry the key's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored<'a> {
    pub state: &'a [u8],
    pub expire_at_ms: Option<i64>,
    pub blocked_until: Option<i64>,
}

/// `<state>e<expiry>b<until>` split in three; `None` when `bytes` is not of
/// that shape (then it is read as a plain state, and refused if it is
/// none). Expiry and end: 1 to 15 digits (exact in the function edition's
/// doubles), an optional `-` before the
/// expiry (a clock before the epoch, as tests run).
pub fn split_blocked(bytes: &[u8]) -> Option<Stored<'_>> {
    let e = bytes.iter().position(|&b| b == b'e')?;
    let (state, rest) = (&bytes[..e], &bytes[e + 1..]);
    let b = rest.iter().position(|&b| b == b'b')?;
    let expiry = small_int(&rest[..b])?;
    let until = small_int(&rest[b + 1..])?;
    Some(Stored {
        state,
        expire_at_ms: Some(expiry),
        blocked_until: Some(until),
    })
}

fn small_int(bytes: &[u8]) -> Option<i64> {
    let (neg, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    if digits.len() > 15 {
        return None;
    }
    let v = i64::try_from(super::args::unsigned(digits)?).ok()?;
    Some(if neg { -v } else { v })
}

/// Reads a stored value with `parse` for its state: the plain form first
/// (the hot path), the blocked form when that fails. A blocked form must
/// still carry a TTL, as every state does ([`with_ttl`]).
pub fn read_state<T>(
    bytes: &[u8],
    key_expire_at_ms: Option<i64>,
    expected: &'static str,
    parse: impl Fn(&[u8]) -> Result<T, RlError>,
) -> Result<(T, Option<i64>, Option<i64>), RlError> {
    match parse(bytes) {
        Ok(v) => Ok((
            with_ttl(Ok(v), key_expire_at_ms, expected)?,
            key_expire_at_ms,
            None,
        )),
        Err(err) => {
            let stored = split_blocked(bytes).ok_or(err)?;
            let v = with_ttl(parse(stored.state), key_expire_at_ms, expected)?;
            Ok((v, stored.expire_at_ms, stored.blocked_until))
        }
    }
}

/// A stored value, parsed, that must carry a TTL: rl writes every string
/// state with one, so a string without (a user's `SET cnt 5`) is not rl's
/// and is refused as not `expected`, never reset or overwritten. The value
/// is checked first: a foreign value is refused whatever its TTL.
pub fn with_ttl<T>(
    parsed: Result<T, RlError>,
    expire_at_ms: Option<i64>,
    expected: &'static str,
) -> Result<T, RlError> {
    let value = parsed?;
    match expire_at_ms {
        Some(_) => Ok(value),
        None => Err(RlError::ForeignString { expected }),
    }
}

/// The step `INCRBY` takes the stored value to `w`'s with, when that is
/// all the write changes: `w` is a count, the key holds a plain count in
/// the form `INCRBY` reads and writes back (digits, no sign, no leading
/// zero, within `i64`), and already expires when `w` does (a fixed
/// window's count after its first admission). `None` for any other write
/// (a throttle's schedule, documented as `SET`), and for a step of 0: the
/// host then writes the whole value and its expiry (`SET ... PXAT`).
pub fn step_to(
    stored: Option<&[u8]>,
    key_expire_at_ms: Option<i64>,
    w: &StringWrite,
) -> Option<i64> {
    if !w.count || w.blocked_until.is_some() || key_expire_at_ms != Some(w.expire_at_ms) {
        return None;
    }
    let stored = stored?;
    if stored.len() > 1 && stored[0] == b'0' {
        return None;
    }
    let old = i64::try_from(super::args::unsigned(stored)?).ok()?;
    let step = i64::try_from(w.value).ok()?.checked_sub(old)?;
    (step != 0).then_some(step)
}

/// A string key in memory (tests, benches).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryString {
    pub value: Option<Vec<u8>>,
    pub expire_at_ms: Option<i64>,
}

impl MemoryString {
    /// Applies a write the way the host does (`SET key value PXAT at`).
    pub fn apply(&mut self, w: &StringWrite) {
        let bytes = w.blocked_bytes().unwrap_or_else(|| w.value.to_string());
        self.value = Some(bytes.into_bytes());
        self.expire_at_ms = Some(w.key_expire_at_ms());
    }
}

impl StringView for MemoryString {
    fn value(&self) -> Option<&[u8]> {
        self.value.as_deref()
    }
    fn expire_at_ms(&self) -> Option<i64> {
        self.expire_at_ms
    }
}

/// What `RL.UNBLOCK` does to a string key: the state written back plain,
/// or the key deleted when the state's own expiry has come (a TAT reached,
/// a window over: the key would already be gone but for the block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StringChange {
    Set(StringWrite),
    Delete,
}

/// `RL.BLOCK` on a string limiter's key: `plain`, the state as its
/// limiter read it (its empty state for no key), blocked until `until`.
pub fn blocked(plain: StringWrite, until: i64) -> StringWrite {
    StringWrite {
        blocked_until: Some(until),
        ..plain
    }
}

/// `RL.UNBLOCK` on a string limiter's key, read as `(state, block's end)`
/// by its limiter (`None`: no key): the change that lifts a block holding
/// at `now_ms`; `None` when none holds (nothing to write).
pub fn unblocked(read: Option<(StringWrite, Option<i64>)>, now_ms: i64) -> Option<StringChange> {
    let (plain, until) = read?;
    in_force(until, now_ms)?;
    if plain.expire_at_ms <= now_ms {
        return Some(StringChange::Delete);
    }
    Some(StringChange::Set(plain))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_values_split_and_others_do_not() {
        let w = blocked(StringWrite::counter(5, 2_000), 9_000);
        assert_eq!(w.blocked_bytes().as_deref(), Some("5e2000b9000"));
        assert_eq!(w.key_expire_at_ms(), 9_000);
        let mut s = MemoryString::default();
        s.apply(&w);
        assert_eq!(s.value.as_deref(), Some(&b"5e2000b9000"[..]));
        let got = split_blocked(b"5e2000b9000").unwrap();
        assert_eq!(
            (got.state, got.expire_at_ms, got.blocked_until),
            (&b"5"[..], Some(2_000), Some(9_000))
        );
        assert_eq!(split_blocked(b"5e-20b9").unwrap().expire_at_ms, Some(-20));
        for bad in [
            &b"5"[..],
            b"5e2000",
            b"5b9e2",
            b"5e20b",
            b"5ex20b9",
            b"5e20b9x",
            b"5e1234567890123456789b1",
        ] {
            assert_eq!(split_blocked(bad), None, "{bad:?}");
        }
        let plain = StringWrite::plain(7, 100);
        assert_eq!(
            (plain.blocked_bytes(), plain.key_expire_at_ms()),
            (None, 100)
        );
    }

    #[test]
    fn only_a_count_that_keeps_its_expiry_and_form_steps() {
        let w = StringWrite::counter(7, 100);
        let step = |stored: &[u8], at: Option<i64>, w: &StringWrite| step_to(Some(stored), at, w);
        assert_eq!(step(b"6", Some(100), &w), Some(1));
        assert_eq!(step(b"0", Some(100), &w), Some(7));
        // A refund steps down.
        assert_eq!(step(b"12", Some(100), &w), Some(-5));
        let top = StringWrite::counter(i64::MAX as u64, 100);
        assert_eq!(step(b"0", Some(100), &top), Some(i64::MAX));
        // The whole value and its expiry are written instead: no key, a
        // new window (another expiry), no TTL, nothing changed, a form
        // INCRBY would read otherwise or refuse, a blocked state either
        // side, a value past i64.
        assert_eq!(step_to(None, None, &w), None);
        assert_eq!(step(b"6", Some(99), &w), None);
        assert_eq!(step(b"6", None, &w), None);
        assert_eq!(step(b"7", Some(100), &w), None);
        for form in [
            &b"06"[..],
            b"+6",
            b"-1",
            b" 6",
            b"6 ",
            b"",
            b"6.0",
            b"9223372036854775808",
        ] {
            assert_eq!(step(form, Some(100), &w), None, "{form:?}");
        }
        assert_eq!(step(b"6e100b200", Some(200), &w), None);
        let blocked = blocked(w, 200);
        assert_eq!(step(b"6", Some(100), &blocked), None);
        assert_eq!(
            step(b"6", Some(100), &StringWrite::counter(u64::MAX, 100)),
            None
        );
        // A throttle's schedule is never stepped.
        assert_eq!(step(b"6", Some(100), &StringWrite::plain(7, 100)), None);
    }
}
