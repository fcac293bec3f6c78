//! The only place that names the server binding (through `ffi`): command
//! registration, key access, clock, replication of effects, reply writing.

pub mod alloc;
pub mod call;
pub mod command;
pub mod context;
pub mod ffi;
pub mod hash_state;
pub mod info;
pub mod kept_strings;
pub mod key;
pub mod key_access;
pub mod lease_set;
pub mod limit;
pub mod metrics;
pub mod options;
pub mod prefix_stats;
pub mod registry;
pub mod replicate;
pub mod reply;
pub mod store;
pub mod string_state;
pub mod version;
pub mod wait;
pub mod zset_log;

pub use ffi::{Ctx as RawCtx, Str as RawString};

use std::os::raw::c_int;

use ffi::api;

use crate::core::load_options::LoadOptions;

/// The module's name, as `MODULE LIST` and the INFO section show it.
const MODULE_NAME: &std::ffi::CStr = c"rl";

/// What the load does once the server's API is in place: the load
/// arguments (as bytes) in, a log line's text out if the load must fail.
pub type Start = fn(*mut RawCtx, &[&[u8]]) -> Result<(), String>;

/// The server's OnLoad: takes the API, then runs `start`. Every refusal is
/// logged with its reason (the server itself only says "Module not
/// loaded"); no panic crosses into the server.
///
/// # Safety
/// Called by the server with its load context and `argc` arguments.
pub unsafe fn on_load(
    ctx: *mut RawCtx,
    argv: *mut *mut RawString,
    argc: c_int,
    start: Start,
) -> c_int {
    // Nothing allocates before init: until then the global allocator is the
    // system's, and the server's after.
    if let Err(e) = ffi::init(ctx, MODULE_NAME, version::MODULE_VERSION as c_int) {
        // A failed init has taken the API all the same (Alloc included):
        // this text is allocated and freed by the server's allocator.
        ffi::log(ctx, c"warning", &format!("rl: {e}"));
        return ffi::ERR;
    }
    let loaded = command::catch(|| {
        let argc = usize::try_from(argc).unwrap_or(0);
        // SAFETY: argv holds argc live strings for the whole call.
        let args: Vec<&[u8]> = (0..argc)
            .map(|i| ffi::string_bytes(unsafe { *argv.add(i) }))
            .collect();
        start(ctx, &args)
    })
    .unwrap_or_else(|message| {
        Err(format!(
            "panicked while loading ({message}); module not loaded"
        ))
    });
    match loaded {
        Ok(()) => ffi::OK,
        Err(e) => {
            ffi::log(ctx, c"warning", &format!("rl: {e}"));
            ffi::ERR
        }
    }
}

/// The server's OnUnload: frees what the module keeps between calls.
pub fn on_unload(_ctx: *mut RawCtx) -> c_int {
    let _ = command::catch(kept_strings::release_all);
    ffi::OK
}

/// Module load: options, then every declared command the load arguments keep.
pub(crate) fn load(ctx: *mut RawCtx, options: &LoadOptions) -> Result<(), String> {
    set_options(ctx);
    self::options::register(ctx, options)?;
    let registered = registry::register_all(ctx, options)?;
    info::register(ctx)?;
    let mut note = if registered.category {
        "commands registered, ACL category @ratelimit added".to_owned()
    } else {
        "commands registered (this server has no module ACL categories: @ratelimit unavailable)"
            .to_owned()
    };
    if !registered.skipped.is_empty() {
        note.push_str(&format!(
            "; skipped, the server already has them: {}",
            registered.skipped.join(", ")
        ));
    }
    ffi::log(ctx, c"notice", &note);
    Ok(())
}

fn set_options(ctx: *mut RawCtx) {
    // SAFETY: called once from OnLoad with the load context.
    unsafe {
        // We signal modified keys ourselves, only when a call wrote something.
        api!(SetModuleOptions)(ctx, ffi::OPTION_NO_IMPLICIT_SIGNAL_MODIFIED);
    }
}
