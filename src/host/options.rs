//! The settings the host keeps between calls: set at load (the load
//! arguments, parsed by `core::load_options`, then the server's config
//! file), and while running by `CONFIG SET rl.<name>`, as module configs
//! (Redis 7.0+, Valkey 8+). `CONFIG GET` reads them back and `CONFIG
//! REWRITE` writes the ones that differ from the load arguments.
//!
//! Configs are set and read on the server's main thread, as commands run;
//! the atomics and locks only give the statics a safe type, and never
//! contend.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering::Relaxed};
use std::sync::Mutex;

use super::ffi;
use super::ffi::{api, string_bytes};
use super::prefix_stats;
use crate::core::load_options::LoadOptions;
use crate::core::prefixes;

/// `rl.notify-denied`: whether a denial fires `rl.denied`.
static NOTIFY_DENIED: AtomicBool = AtomicBool::new(false);

/// Whether a denial fires `rl.denied`.
pub fn notify_denied() -> bool {
    NOTIFY_DENIED.load(Relaxed)
}

/// `rl.shadow`: every limiter admits what it would deny.
static SHADOW: AtomicBool = AtomicBool::new(false);

/// `rl.shadow-prefixes`, and whether it lists any: a denial outside shadow
/// mode reads the flag, not the list.
static SHADOW_PREFIXES: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
static SHADOW_PREFIXES_SET: AtomicBool = AtomicBool::new(false);

/// Whether a denial on `key` is admitted instead (shadow mode): `rl.shadow
/// yes`, or `key` starts with a prefix of `rl.shadow-prefixes`. Asked only
/// of denials, so an admission never pays for it.
pub fn shadows(key: &[u8]) -> bool {
    SHADOW.load(Relaxed)
        || (SHADOW_PREFIXES_SET.load(Relaxed)
            && SHADOW_PREFIXES
                .lock()
                .is_ok_and(|list| prefixes::any_matches(&list, key)))
}

fn set_shadow_prefixes(list: Vec<Vec<u8>>) {
    SHADOW_PREFIXES_SET.store(!list.is_empty(), Relaxed);
    if let Ok(mut held) = SHADOW_PREFIXES.lock() {
        *held = list;
    }
}

/// A boolean module config: the server names it `rl.<name>`.
struct BoolConfig {
    name: &'static CStr,
    value: &'static AtomicBool,
    /// Its value under the load arguments.
    at_load: fn(&LoadOptions) -> bool,
}

const BOOL_CONFIGS: [BoolConfig; 2] = [
    BoolConfig {
        name: c"notify-denied",
        value: &NOTIFY_DENIED,
        at_load: |o| o.notify_denied,
    },
    BoolConfig {
        name: c"shadow",
        value: &SHADOW,
        at_load: |_| false,
    },
];

/// A module config holding a list of key prefixes (`core::prefixes`),
/// empty by default. `CONFIG SET` refuses a bad list with the reason and
/// keeps the old one.
struct ListConfig {
    name: &'static CStr,
    /// What `CONFIG GET` shows: the list as parsed, one space between
    /// prefixes. A string made without a context, freed when replaced.
    shown: AtomicPtr<ffi::Str>,
    /// Takes a new list.
    apply: fn(Vec<Vec<u8>>),
}

static LIST_CONFIGS: [ListConfig; 2] = [
    ListConfig {
        name: c"shadow-prefixes",
        shown: AtomicPtr::new(std::ptr::null_mut()),
        apply: set_shadow_prefixes,
    },
    ListConfig {
        name: c"stats-prefixes",
        shown: AtomicPtr::new(std::ptr::null_mut()),
        apply: prefix_stats::replace,
    },
];

fn show(config: &ListConfig, text: &[u8]) {
    // SAFETY: a string without a context is the module's until freed.
    let fresh =
        unsafe { api!(CreateString)(std::ptr::null_mut(), text.as_ptr().cast(), text.len()) };
    let old = config.shown.swap(fresh, Relaxed);
    if !old.is_null() {
        // SAFETY: `old` was made above and nothing else holds it: the
        // server copies what `get_list` returns before the next set.
        unsafe { api!(FreeString)(std::ptr::null_mut(), old) };
    }
}

extern "C" fn get_list(_name: *const c_char, privdata: *mut c_void) -> *mut ffi::Str {
    // SAFETY: privdata is the &'static ListConfig given at registration.
    let config = unsafe { &*(privdata as *const ListConfig) };
    config.shown.load(Relaxed)
}

extern "C" fn set_list(
    _name: *const c_char,
    val: *mut ffi::Str,
    privdata: *mut c_void,
    err: *mut *mut ffi::Str,
) -> c_int {
    // SAFETY: as in get_list.
    let config = unsafe { &*(privdata as *const ListConfig) };
    match prefixes::parse(string_bytes(val)) {
        Ok(list) => {
            show(config, &prefixes::render(&list));
            (config.apply)(list);
            ffi::OK
        }
        Err(e) => {
            let text = format!("rl.{}: {e}", config.name.to_string_lossy());
            // SAFETY: the server frees the error string it is handed.
            unsafe {
                *err = api!(CreateString)(std::ptr::null_mut(), text.as_ptr().cast(), text.len());
            }
            ffi::ERR
        }
    }
}

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
    for config in &LIST_CONFIGS {
        show(config, b"");
        (config.apply)(Vec::new());
        // SAFETY: as above; the default is a static C string.
        let registered = unsafe {
            api!(RegisterStringConfig)(
                ctx,
                config.name.as_ptr(),
                c"".as_ptr(),
                ffi::CONFIG_DEFAULT,
                Some(get_list),
                Some(set_list),
                None,
                std::ptr::from_ref(config).cast_mut().cast(),
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
