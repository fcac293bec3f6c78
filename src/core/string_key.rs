//! The storage kind `RL.THROTTLE` and `RL.FIXED` share: one plain decimal
//! string with an absolute expiry, read through [`StringView`] and written
//! whole as [`StringWrite`] (replicated as `SET key value PXAT at`).

use super::error::RlError;

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
    pub expire_at_ms: i64,
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

/// A string key in memory (tests, benches).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryString {
    pub value: Option<Vec<u8>>,
    pub expire_at_ms: Option<i64>,
}

impl MemoryString {
    /// Applies a write the way the host does (`SET key value PXAT at`).
    pub fn apply(&mut self, w: &StringWrite) {
        self.value = Some(w.value.to_string().into_bytes());
        self.expire_at_ms = Some(w.expire_at_ms);
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
