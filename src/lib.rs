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

/// Parses the load arguments (core) and registers the module (host). A
/// panic fails the load with a log line instead of aborting the server.
fn start(ctx: *mut host::RawCtx, args: &[&[u8]]) -> Result<(), String> {
    std::panic::catch_unwind(|| {
        let options = core::load_options::LoadOptions::parse(args)
            .map_err(|e| format!("{e}; module not loaded"))?;
        host::load(ctx, &options)
    })
    .unwrap_or_else(|_| Err("panicked while loading; module not loaded".into()))
}

#[cfg(feature = "redis")]
mod module {
    use crate::host;
    use redis_module::{redis_module, Context, RedisString, Status};

    fn deinit(_ctx: &Context) -> Status {
        host::unload();
        Status::Ok
    }

    fn init(ctx: &Context, args: &[RedisString]) -> Status {
        let args: Vec<&[u8]> = args.iter().map(RedisString::as_slice).collect();
        match crate::start(ctx.ctx, &args) {
            Ok(()) => Status::Ok,
            Err(e) => {
                ctx.log_warning(&format!("rl: {e}"));
                Status::Err
            }
        }
    }

    redis_module! {
        name: "rl",
        version: 1,
        allocator: (host::alloc::ServerOrSystem, host::alloc::ServerOrSystem),
        data_types: [],
        init: init,
        deinit: deinit,
    }
}

#[cfg(feature = "valkey")]
mod module {
    use crate::host;
    use valkey_module::{valkey_module, Context, Status, ValkeyString};

    fn deinit(_ctx: &Context) -> Status {
        host::unload();
        Status::Ok
    }

    fn init(ctx: &Context, args: &[ValkeyString]) -> Status {
        let args: Vec<&[u8]> = args.iter().map(ValkeyString::as_slice).collect();
        match crate::start(ctx.ctx, &args) {
            Ok(()) => Status::Ok,
            Err(e) => {
                ctx.log_warning(&format!("rl: {e}"));
                Status::Err
            }
        }
    }

    valkey_module! {
        name: "rl",
        version: 1,
        allocator: (host::alloc::ServerOrSystem, host::alloc::ServerOrSystem),
        data_types: [],
        init: init,
        deinit: deinit,
        commands: [],
    }

    /// Valkey looks for this symbol first; finding it, it loads rl as a
    /// native Valkey module rather than a legacy Redis one.
    ///
    /// # Safety
    /// Called by the server once, with its load context and arguments.
    #[no_mangle]
    pub unsafe extern "C" fn ValkeyModule_OnLoad(
        ctx: *mut valkey_module::raw::RedisModuleCtx,
        argv: *mut *mut valkey_module::raw::RedisModuleString,
        argc: std::os::raw::c_int,
    ) -> std::os::raw::c_int {
        RedisModule_OnLoad(ctx, argv, argc)
    }

    /// The native twin of the unload hook, for the same reason.
    #[no_mangle]
    pub extern "C" fn ValkeyModule_OnUnload(
        ctx: *mut valkey_module::raw::RedisModuleCtx,
    ) -> std::os::raw::c_int {
        RedisModule_OnUnload(ctx)
    }
}
