//! rl: rate limiting inside Redis and Valkey.
//!
//! `core` holds the algorithms and parsing (no server types), `host` the
//! server glue, `commands` one thin file per command. This file only
//! registers the module, with the binding the build selected.

#[cfg(all(feature = "redis", feature = "valkey"))]
compile_error!("features `redis` and `valkey` are mutually exclusive: pick one host binding");
#[cfg(not(any(feature = "redis", feature = "valkey")))]
compile_error!("select a host binding: feature `redis` (default) or `valkey`");

pub mod commands;
pub mod core;
pub mod host;

/// The server's allocator once the module is loaded, the system's before
/// (and in unit tests and benches, which have no server).
#[global_allocator]
static ALLOCATOR: host::alloc::ServerOrSystem = host::alloc::ServerOrSystem;

/// Parses the load arguments (core) and registers the module (host).
fn start(ctx: *mut host::RawCtx, args: &[&[u8]]) -> Result<(), String> {
    let options = core::load_options::LoadOptions::parse(args)
        .map_err(|e| format!("{e}; module not loaded"))?;
    host::load(ctx, &options)
}

// The entry points are ours rather than the binding's `redis_module!`
// macro: that one calls the server's init before any of our code, so a
// second load of rl failed with no reason logged, and it registers defrag
// callbacks rl does not have, logging a warning at every load on servers
// without them.

/// The server calls this once when it loads the module.
///
/// # Safety
/// Called by the server with its load context and `argc` arguments.
#[cfg(feature = "redis")]
#[no_mangle]
pub unsafe extern "C" fn RedisModule_OnLoad(
    ctx: *mut host::RawCtx,
    argv: *mut *mut host::RawString,
    argc: std::os::raw::c_int,
) -> std::os::raw::c_int {
    host::on_load(ctx, argv, argc, start)
}

/// The server calls this on `MODULE UNLOAD`.
#[cfg(feature = "redis")]
#[no_mangle]
pub extern "C" fn RedisModule_OnUnload(ctx: *mut host::RawCtx) -> std::os::raw::c_int {
    host::on_unload(ctx)
}

/// Valkey looks for this symbol first; finding it, it loads rl as a native
/// Valkey module rather than a legacy Redis one. The native build exports
/// no `RedisModule_OnLoad`: it needs the `ValkeyModule_*` API, so Redis (and
/// Valkey before 8) refuse it with "does not export RedisModule_OnLoad"
/// instead of crashing on the missing API.
///
/// # Safety
/// Called by the server with its load context and `argc` arguments.
#[cfg(feature = "valkey")]
#[no_mangle]
pub unsafe extern "C" fn ValkeyModule_OnLoad(
    ctx: *mut host::RawCtx,
    argv: *mut *mut host::RawString,
    argc: std::os::raw::c_int,
) -> std::os::raw::c_int {
    host::on_load(ctx, argv, argc, start)
}

/// The native twin of the unload hook, for the same reason.
#[cfg(feature = "valkey")]
#[no_mangle]
pub extern "C" fn ValkeyModule_OnUnload(ctx: *mut host::RawCtx) -> std::os::raw::c_int {
    host::on_unload(ctx)
}
