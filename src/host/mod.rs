//! The only place that names the server binding (through `ffi`): command
//! registration, key access, clock, replication of effects, reply writing.

pub mod alloc;
pub mod call;
pub mod command;
pub mod context;
pub mod ffi;
pub mod hash_state;
pub mod kept_strings;
pub mod key_expiry;
pub mod registry;
pub mod replicate;
pub mod reply;
pub mod string_state;
pub mod zset_log;

pub use ffi::{Ctx as RawCtx, Str as RawString};

use ffi::api;

use crate::core::load_options::LoadOptions;

/// Module load: options, then every declared command the load arguments keep.
pub(crate) fn load(ctx: *mut RawCtx, options: &LoadOptions) -> Result<(), String> {
    set_options(ctx);
    metrics::set_notify_denied(options.notify_denied);
    let category = registry::register_all(ctx, options)?;
    metrics::register_info(ctx)?;
    let note = if category {
        c"commands registered, ACL category @ratelimit added"
    } else {
        c"commands registered (this server has no module ACL categories: @ratelimit unavailable)"
    };
    // SAFETY: ctx is the load context; level and text are C strings.
    unsafe { api!(Log)(ctx, c"notice".as_ptr(), c"%s".as_ptr(), note.as_ptr()) };
    Ok(())
}

/// Module unload: frees what the module keeps between calls.
pub(crate) fn unload() {
    kept_strings::release_all();
}

fn set_options(ctx: *mut RawCtx) {
    // SAFETY: called once from OnLoad with the load context.
    unsafe {
        // We signal modified keys ourselves, only when a call wrote something.
        api!(SetModuleOptions)(ctx, ffi::OPTION_NO_IMPLICIT_SIGNAL_MODIFIED);
    }
}
pub mod metrics;
