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

/// Resolves an exported server function by its short name (`OpenKey`).
///
/// Never panics: each use adds the name to [`REQUIRED`], and the load fails
/// (naming the function) unless the server exports every one of them, which
/// [`init`] checks before any `api!` call runs. The server never takes a
/// function back, so afterwards the pointer cannot be `None`.
macro_rules! api {
    ($name:ident) => {
        paste::paste! {{
            #[::linkme::distributed_slice($crate::host::ffi::REQUIRED)]
            static REQUIRED_API: $crate::host::ffi::Required = $crate::host::ffi::Required {
                name: stringify!($name),
                // SAFETY: a plain read of a pointer the server sets at load.
                present: || unsafe {
                    (*std::ptr::addr_of!($crate::host::ffi::binding::raw::[<RedisModule_ $name>]))
                        .is_some()
                },
            };
            match *std::ptr::addr_of!($crate::host::ffi::binding::raw::[<RedisModule_ $name>]) {
                Some(f) => f,
                // SAFETY: this name is in REQUIRED (just above), and the
                // module is not loaded unless every REQUIRED function exists.
                None => std::hint::unreachable_unchecked(),
            }
        }}
    };
}
pub(crate) use api;

/// A server function some `api!` call needs.
pub struct Required {
    /// Without the `RedisModule_` prefix.
    pub name: &'static str,
    pub present: fn() -> bool,
}

/// Every server function rl calls through `api!`, one entry per call site.
#[linkme::distributed_slice]
pub static REQUIRED: [Required];

/// The first function rl needs that this server does not export.
fn missing_api() -> Option<&'static str> {
    REQUIRED.iter().find(|r| !(r.present)()).map(|r| r.name)
}

/// An exported server function that older servers lack, as an `Option`.
macro_rules! optional_api {
    ($name:ident) => {
        paste::paste! {
            *std::ptr::addr_of!($crate::host::ffi::binding::raw::[<RedisModule_ $name>])
        }
    };
}
pub(crate) use optional_api;

#[cfg(feature = "redis")]
pub use binding::alloc::RedisAlloc as ServerAlloc;
#[cfg(feature = "valkey")]
pub use binding::alloc::ValkeyAlloc as ServerAlloc;

/// True once the server has handed us its API (never in unit tests).
pub fn server_present() -> bool {
    // SAFETY: a plain read of a pointer the server sets once at load.
    unsafe { std::ptr::addr_of!(raw::RedisModule_Alloc).read().is_some() }
}

pub const OK: c_int = raw::REDISMODULE_OK as c_int;
pub const ERR: c_int = raw::REDISMODULE_ERR as c_int;
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
pub const REPLY_ARRAY: c_int = raw::REDISMODULE_REPLY_ARRAY as c_int;
/// A module config that `CONFIG SET` may change at run time.
pub const CONFIG_DEFAULT: std::os::raw::c_uint = raw::REDISMODULE_CONFIG_DEFAULT;
pub const CMD_KEY_VARIABLE_FLAGS: u64 = raw::REDISMODULE_CMD_KEY_VARIABLE_FLAGS as u64;
/// What `WAIT` (src/host/wait/) needs: a blocked client's handle, a
/// timer's period, and the context flags under which a call may not block.
pub use binding::raw::RedisModuleBlockedClient as BlockedClient;
pub type Mstime = raw::mstime_t;
pub const CTX_FLAGS_MULTI: c_int = raw::REDISMODULE_CTX_FLAGS_MULTI as c_int;
pub const CTX_FLAGS_LUA: c_int = raw::REDISMODULE_CTX_FLAGS_LUA as c_int;
pub const CTX_FLAGS_REPLICATED: c_int = raw::REDISMODULE_CTX_FLAGS_REPLICATED as c_int;
pub const CTX_FLAGS_SLAVE: c_int = raw::REDISMODULE_CTX_FLAGS_SLAVE as c_int;
pub const CTX_FLAGS_DENY_BLOCKING: c_int = raw::REDISMODULE_CTX_FLAGS_DENY_BLOCKING as c_int;
pub const CTX_FLAGS_CLUSTER: c_int = raw::REDISMODULE_CTX_FLAGS_CLUSTER as c_int;

/// Why the module did not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitError {
    /// The server already has a module of this name (rl loaded twice).
    NameBusy,
    /// The server's init refused for another reason (none is known today).
    Refused,
    /// The server lacks a function rl calls (`RedisModule_` + this name).
    Missing(&'static str),
}

/// The log line's text for each (the server itself only says "Module not
/// loaded").
impl std::fmt::Display for InitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InitError::NameBusy => f.write_str(
                "a module named rl is already loaded; this one is not (MODULE UNLOAD rl first to replace it)",
            ),
            InitError::Refused => {
                f.write_str("the server refused to initialise the module; not loaded")
            }
            InitError::Missing(name) => write!(
                f,
                "this server lacks RedisModule_{name}, which rl needs (Redis 7.0+ or Valkey 8+); module not loaded"
            ),
        }
    }
}

/// Takes the server's API and registers the module under `name`, then
/// checks that the server exports every function rl calls. Allocates
/// nothing: before this the global allocator is the system's, after it the
/// server's.
///
/// # Safety
/// `ctx` is the context of the server's OnLoad call.
pub unsafe fn init(ctx: *mut Ctx, name: &std::ffi::CStr, version: c_int) -> Result<(), InitError> {
    // Valkey loads the native build through ValkeyModule_OnLoad: it takes
    // the ValkeyModule_* API too. Both inits fail only when the name is busy
    // (the server's header, inlined by the binding, checks nothing else).
    #[cfg(feature = "valkey")]
    let valkey_ok = raw::Export_ValkeyModule_Init(
        ctx.cast(),
        name.as_ptr(),
        version,
        raw::VALKEYMODULE_APIVER_1 as c_int,
    ) == OK;
    #[cfg(not(feature = "valkey"))]
    let valkey_ok = true;
    // Run even when the Valkey init failed: it fills the RedisModule_*
    // pointers the error path logs with.
    let redis_ok = raw::Export_RedisModule_Init(
        ctx,
        name.as_ptr(),
        version,
        raw::REDISMODULE_APIVER_1 as c_int,
    ) == OK;
    if !(valkey_ok && redis_ok) {
        return Err(
            match *std::ptr::addr_of!(raw::RedisModule_IsModuleNameBusy) {
                Some(busy) if busy(name.as_ptr()) != 0 => InitError::NameBusy,
                _ => InitError::Refused,
            },
        );
    }
    match missing_api() {
        Some(name) => Err(InitError::Missing(name)),
        None => Ok(()),
    }
}

/// Writes `text` to the server log at `level` (`notice`, `warning`, ...).
/// Works in any state of the load: without the server's `Log` it does
/// nothing. A context without a module (a failed init) logs as `<module>`.
pub(crate) fn log(ctx: *mut Ctx, level: &std::ffi::CStr, text: &str) {
    let text = std::ffi::CString::new(text.replace('\0', " ")).unwrap_or_default();
    // SAFETY: a plain read of the exported pointer; level and text are C
    // strings the server copies; "%s" keeps the text from being a format.
    unsafe {
        if let Some(log) = optional_api!(Log) {
            log(ctx, level.as_ptr(), c"%s".as_ptr(), text.as_ptr());
        }
    }
}

/// The bytes of a server string, borrowed for the command call.
pub(crate) fn string_bytes<'a>(s: *const Str) -> &'a [u8] {
    let mut len = 0;
    // SAFETY: `s` is a live server string; the buffer lives as long as it does.
    unsafe {
        let ptr = api!(StringPtrLen)(s, &mut len);
        if ptr.is_null() {
            return &[];
        }
        std::slice::from_raw_parts(ptr.cast::<u8>(), len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `api!` call sites register what they call, so the load can check it.
    #[test]
    fn every_api_call_site_is_registered() {
        let names: Vec<&str> = REQUIRED.iter().map(|r| r.name).collect();
        for name in [
            "ReplyWithError",
            "ReplyWithArray",
            "OpenKey",
            "CreateCommand",
            "Call",
        ] {
            assert!(names.contains(&name), "{name} not in {names:?}");
        }
        // No server in unit tests: every function is missing.
        assert!(missing_api().is_some());
    }

    #[test]
    fn each_init_error_has_its_log_text() {
        let cases = [
            (
                InitError::NameBusy,
                "a module named rl is already loaded; this one is not (MODULE UNLOAD rl first to replace it)",
            ),
            (
                InitError::Refused,
                "the server refused to initialise the module; not loaded",
            ),
            (
                InitError::Missing("Microseconds"),
                "this server lacks RedisModule_Microseconds, which rl needs (Redis 7.0+ or Valkey 8+); module not loaded",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.to_string(), text);
        }
    }
}
