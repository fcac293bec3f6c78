//! The server binding, under neutral names. Every other host file goes
//! through this one; the build's feature picks `redis-module` or
//! `valkey-module`, and nothing else changes.

use std::os::raw::c_int;

#[cfg(feature = "redis")]
pub use redis_module as binding;
#[cfg(feature = "valkey")]
pub use valkey_module as binding;

// Both bindings expose the server API under the RedisModule_* names (Valkey
// also fills them when it loads a module natively).
use binding::raw;
pub use binding::raw::{
    RedisModuleCommandArg as CommandArg, RedisModuleCommandHistoryEntry as CommandHistoryEntry,
    RedisModuleCommandInfo as CommandInfo, RedisModuleCommandInfoVersion as CommandInfoVersion,
    RedisModuleCommandKeySpec as CommandKeySpec, RedisModuleCtx as Ctx, RedisModuleKey as Key,
    RedisModuleString as Str,
};

/// Resolves an exported server function by its short name (`OpenKey`). A
/// missing one panics, which the command boundary turns into an error reply.
macro_rules! api {
    ($name:ident) => {
        paste::paste! {
            (*std::ptr::addr_of!($crate::host::ffi::binding::raw::[<RedisModule_ $name>]))
                .expect(concat!(stringify!($name), " is not available on this server"))
        }
    };
}
pub(crate) use api;

/// An exported server function that older servers lack, as an `Option`.
macro_rules! optional_api {
    ($name:ident) => {
        paste::paste! {
            *std::ptr::addr_of!($crate::host::ffi::binding::raw::[<RedisModule_ $name>])
        }
    };
}
pub(crate) use optional_api;

/// True once the server has handed us its API (never in unit tests).
#[cfg(feature = "redis")]
pub use binding::alloc::RedisAlloc as ServerAlloc;
#[cfg(feature = "valkey")]
pub use binding::alloc::ValkeyAlloc as ServerAlloc;

pub fn server_present() -> bool {
    // SAFETY: a plain read of a pointer the server sets once at load.
    unsafe { std::ptr::addr_of!(raw::RedisModule_Alloc).read().is_some() }
}

pub const OK: c_int = raw::REDISMODULE_OK as c_int;
pub const READ: c_int = raw::REDISMODULE_READ as c_int;
pub const WRITE: c_int = raw::REDISMODULE_WRITE as c_int;
pub const KEYTYPE_EMPTY: c_int = raw::REDISMODULE_KEYTYPE_EMPTY as c_int;
pub const KEYTYPE_STRING: c_int = raw::REDISMODULE_KEYTYPE_STRING as c_int;
pub const KEYTYPE_HASH: c_int = raw::REDISMODULE_KEYTYPE_HASH as c_int;
pub const KEYTYPE_ZSET: c_int = raw::REDISMODULE_KEYTYPE_ZSET as c_int;
pub const ZADD_NX: c_int = raw::REDISMODULE_ZADD_NX as c_int;
pub const ZADD_ADDED: c_int = raw::REDISMODULE_ZADD_ADDED as c_int;
pub const OPTION_NO_IMPLICIT_SIGNAL_MODIFIED: c_int =
    raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int;
pub const NOTIFY_GENERIC: c_int = raw::REDISMODULE_NOTIFY_GENERIC as c_int;
pub const NOTIFY_STRING: c_int = raw::REDISMODULE_NOTIFY_STRING as c_int;
pub const NOTIFY_HASH: c_int = raw::REDISMODULE_NOTIFY_HASH as c_int;
pub const NOTIFY_ZSET: c_int = raw::REDISMODULE_NOTIFY_ZSET as c_int;
pub const CMD_KEY_RO: u64 = raw::REDISMODULE_CMD_KEY_RO as u64;
pub const CMD_KEY_RW: u64 = raw::REDISMODULE_CMD_KEY_RW as u64;
pub const CMD_KEY_ACCESS: u64 = raw::REDISMODULE_CMD_KEY_ACCESS as u64;
pub const CMD_KEY_UPDATE: u64 = raw::REDISMODULE_CMD_KEY_UPDATE as u64;
pub const CMD_ARG_OPTIONAL: c_int = raw::REDISMODULE_CMD_ARG_OPTIONAL as c_int;
pub const ARG_TYPE_STRING: u32 = raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING;
pub const ARG_TYPE_INTEGER: u32 = raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER;
pub const ARG_TYPE_KEY: u32 = raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY;
pub const ARG_TYPE_PURE_TOKEN: u32 = raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN;
pub const KSPEC_BS_INDEX: u32 = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
pub const KSPEC_FK_RANGE: u32 = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
pub const HASH_CFIELDS: c_int = raw::REDISMODULE_HASH_CFIELDS as c_int;
pub const HASH_NONE: c_int = raw::REDISMODULE_HASH_NONE as c_int;
/// The value that makes `HashSet` delete a field (`REDISMODULE_HASH_DELETE`).
pub const HASH_DELETE: *mut Str = std::ptr::without_provenance_mut(1);
/// `GetAbsExpire`'s answer for a key without a TTL.
pub const NO_EXPIRE: i64 = raw::REDISMODULE_NO_EXPIRE as i64;
pub use binding::raw::RedisModuleInfoCtx as InfoCtx;
/// Module keyspace events (`notify-keyspace-events` flag `d`).
pub const NOTIFY_MODULE: c_int = raw::REDISMODULE_NOTIFY_MODULE as c_int;
pub const KSPEC_FK_KEYNUM: u32 = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_KEYNUM;
pub const CMD_ARG_MULTIPLE: c_int = raw::REDISMODULE_CMD_ARG_MULTIPLE as c_int;
pub const CMD_KEY_VARIABLE_FLAGS: u64 = raw::REDISMODULE_CMD_KEY_VARIABLE_FLAGS as u64;
