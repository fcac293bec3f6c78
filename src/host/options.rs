//! The settings the host keeps between calls: set at load (the load
//! arguments, parsed by `core::load_options`, then the server's config
//! file), and while running by `CONFIG SET rl.<name>`, as module configs
//! (Redis 7.0+, Valkey 8+). `CONFIG GET` reads them back and `CONFIG
//! REWRITE` writes the ones that differ from the load arguments.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::ffi;
use super::ffi::api;
use crate::core::load_options::LoadOptions;

/// `rl.notify-denied`: whether a denial fires `rl.denied`.
static NOTIFY_DENIED: AtomicBool = AtomicBool::new(false);

/// Whether a denial fires `rl.denied`.
pub fn notify_denied() -> bool {
    NOTIFY_DENIED.load(Relaxed)
}

/// A boolean module config: the server names it `rl.<name>`.
struct BoolConfig {
    name: &'static CStr,
    value: &'static AtomicBool,
    /// Its value under the load arguments.
    at_load: fn(&LoadOptions) -> bool,
}

const BOOL_CONFIGS: [BoolConfig; 1] = [BoolConfig {
    name: c"notify-denied",
    value: &NOTIFY_DENIED,
    at_load: |o| o.notify_denied,
}];

extern "C" fn get_bool(_name: *const c_char, privdata: *mut c_void) -> c_int {
    // SAFETY: privdata is the &'static AtomicBool given at registration.
    let value = unsafe { &*(privdata as *const AtomicBool) };
    c_int::from(value.load(Relaxed))
}

extern "C" fn set_bool(
    _name: *const c_char,
    val: c_int,
    privdata: *mut c_void,
    _err: *mut *mut ffi::Str,
) -> c_int {
    // SAFETY: as in get_bool.
    let value = unsafe { &*(privdata as *const AtomicBool) };
    value.store(val != 0, Relaxed);
    ffi::OK
}

/// Registers every config with the load arguments' value as its default,
/// then applies the server's config-file (and command-line) lines. So the
/// load arguments set the same configs, a config line wins over them, and
/// `CONFIG REWRITE` writes a line only for a value that differs from what
/// the load arguments give, which is exactly what a restart needs.
pub(crate) fn register(ctx: *mut ffi::Ctx, options: &LoadOptions) -> Result<(), String> {
    for config in &BOOL_CONFIGS {
        let at_load = (config.at_load)(options);
        config.value.store(at_load, Relaxed);
        // SAFETY: called from OnLoad with the load context; the name is
        // static and the server copies it; privdata outlives the module.
        let registered = unsafe {
            api!(RegisterBoolConfig)(
                ctx,
                config.name.as_ptr(),
                c_int::from(at_load),
                ffi::CONFIG_DEFAULT,
                Some(get_bool),
                Some(set_bool),
                None,
                std::ptr::from_ref(config.value).cast_mut().cast(),
            )
        };
        if registered != ffi::OK {
            return Err(format!(
                "could not register the config rl.{}",
                config.name.to_string_lossy()
            ));
        }
    }
    // SAFETY: called from OnLoad, after every config is registered.
    if unsafe { api!(LoadConfigs)(ctx) } != ffi::OK {
        return Err("the server refused a config line for rl (see the line above)".into());
    }
    Ok(())
}
