//! What a command does with its key: the key-spec flags and, for
//! `CreateCommand`, the legacy key range. Apart from the registry so the
//! per-prefix counters (`prefix_stats`) can read it without importing the
//! registry, which imports the command context.

use std::os::raw::c_int;

/// What the command does with its key (key-spec flags).
#[derive(Debug, Clone, Copy)]
pub enum KeyAccess {
    /// Reads, inserts and removes entries (like ZADD).
    ReadWriteUpdate,
    /// Only reads.
    ReadOnly,
    /// Only reads, one key at this argument index (`RL.PEEK limiter key`).
    ReadOnlyAt(c_int),
    /// Reads, updates and removes entries, one key at this argument index
    /// (`RL.REFUND limiter key`).
    ReadWriteUpdateAt(c_int),
    /// Reads, inserts and removes entries in several keys: the key count at
    /// this argument index, the keys right after it (`RL.ALL numkeys key ...`).
    ReadWriteUpdateKeyNum(c_int),
}

impl KeyAccess {
    /// The legacy `(first, last, step)` for `CreateCommand`. Key specs
    /// (`SetCommandInfo`) are what the server uses to find keys; a key count
    /// has no legacy form, so it gets none. Servers (7.0 to 9.1) only route
    /// such a command in Cluster if it also has the `getkeys-api` flag.
    pub(crate) fn legacy_range(self) -> (c_int, c_int, c_int) {
        match self {
            KeyAccess::ReadWriteUpdate | KeyAccess::ReadOnly => (1, 1, 1),
            KeyAccess::ReadOnlyAt(at) | KeyAccess::ReadWriteUpdateAt(at) => (at, at, 1),
            KeyAccess::ReadWriteUpdateKeyNum(_) => (0, 0, 0),
        }
    }
}
