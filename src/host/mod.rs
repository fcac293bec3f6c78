//! The only place that names the server binding (through `ffi`): command
//! registration, key access, clock, replication of effects, reply writing.

pub mod alloc;
pub mod command;
pub mod context;
pub mod ffi;
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
    // SAFETY: called once from OnLoad with the load context.
    unsafe {
        // We signal modified keys ourselves, only when a call wrote something.
        api!(SetModuleOptions)(ctx, ffi::OPTION_NO_IMPLICIT_SIGNAL_MODIFIED);
    }
    registry::register_all(ctx, options)
}
