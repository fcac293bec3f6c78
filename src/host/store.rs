//! A storage kind as the host holds it: an open key that its limiters read
//! (the core's view trait for the kind) and the only way their writes reach
//! the server.

use super::context::CommandCtx;
use super::key::Access;
use crate::core::error::RlError;

/// An open key of one storage kind: a sorted-set log, a bucket hash, a
/// string.
pub trait Store<'a>: Sized {
    /// The write as the core plans it, for this kind.
    type Write;

    /// Opens and type-checks the key at argument `key_index`.
    fn open(cmd: &'a CommandCtx, key_index: usize, access: Access) -> Result<Self, RlError>;

    /// Applies `write`, replicates it as plain commands with absolute
    /// values, then moves the key's expiry (replicated after the write: a
    /// replica must have the key before it gets the expiry; a string sets
    /// its expiry in the write itself, `SET ... PXAT`). One function
    /// per kind does all three, in that order: nothing else writes a key.
    /// The key must have been opened with [`Access::Write`].
    fn record(&mut self, write: &Self::Write) -> Result<(), RlError>;
}
