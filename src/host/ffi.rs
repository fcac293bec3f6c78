//! The server binding, under neutral names. Every other host file goes
//! through this one, so a second binding (Valkey's) only adds a twin of it.

use std::os::raw::c_int;

pub use redis_module as binding;
use redis_module::raw;
pub use redis_module::raw::{
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

/// Like `api!`, but yields the `Option` itself, for functions some supported
/// servers lack (e.g. `Microseconds`, absent from Redis 7.0).
macro_rules! api_opt {
    ($name:ident) => {
        paste::paste! {
            *std::ptr::addr_of!($crate::host::ffi::binding::raw::[<RedisModule_ $name>])
        }
    };
}
pub(crate) use api_opt;

/// True once the server has handed us its API (never in unit tests).
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
/// `GetAbsExpire`'s answer for a key without a TTL.
pub const NO_EXPIRE: i64 = raw::REDISMODULE_NO_EXPIRE as i64;
