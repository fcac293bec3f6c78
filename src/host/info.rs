//! The `rl` INFO section: `rl_version`, `rl_build` and `rl_commit` (which
//! rl this is), then `rl_<command>_<calls|admitted|denied|errors|shadow_denied>` for every
//! registered command, sorted by command name, then one `rl_prefix_<i>`
//! line per `rl.stats-prefixes` prefix, then `rl_skipped_commands`, the
//! names the load left to the server because it already had them.

use std::ffi::CString;
use std::os::raw::c_int;

use super::command::catch;
use super::ffi;
use super::ffi::api;
use super::registry::COMMANDS;
use super::version;

/// The INFO field prefix for a command: `rl.slide` -> `slide`,
/// `cl.throttle` -> `cl_throttle` (the server adds `rl_` in front).
pub fn field_prefix(name: &str) -> String {
    name.strip_prefix("rl.").unwrap_or(name).replace('.', "_")
}

const FIELDS: [&str; 5] = ["calls", "admitted", "denied", "errors", "shadow_denied"];

/// Whether a command has `rl_<command>_blocked`: those that take `BLOCK`
/// (and RL.ALL, whose clauses do).
pub(crate) fn counts_blocks(syntax: &crate::core::syntax::Syntax) -> bool {
    syntax.name() == "rl.all"
        || syntax
            .args
            .iter()
            .any(|a| a.token.is_some_and(|t| t == c"BLOCK"))
}

/// The declared commands the load skipped because their name was taken,
/// sorted, comma-separated (`cl.throttle,rl.throttle`); empty if none.
pub(crate) fn skipped_commands() -> String {
    let mut names: Vec<&str> = COMMANDS
        .iter()
        .filter(|spec| spec.counters.skipped())
        .map(|spec| spec.syntax.name())
        .collect();
    names.sort_unstable();
    names.join(",")
}

/// Registers the section's callback (a module has one).
pub(crate) fn register(ctx: *mut ffi::Ctx) -> Result<(), String> {
    // SAFETY: called from OnLoad with the load context.
    if unsafe { api!(RegisterInfoFunc)(ctx, Some(info)) } != ffi::OK {
        return Err("could not register the INFO section".into());
    }
    Ok(())
}

extern "C" fn info(ctx: *mut ffi::InfoCtx, _for_crash_report: c_int) {
    // No panic may cross into the server.
    let _ = catch(|| {
        // SAFETY: ctx is the live info context; the section (NULL: named
        // after the module) is skipped by the server when not requested.
        unsafe {
            if api!(InfoAddSection)(ctx, std::ptr::null()) != ffi::OK {
                return;
            }
        }
        // Which rl answers, first: the one thing to read before the counters.
        for (name, value) in [
            (c"version", version::VERSION),
            (c"build", version::BUILD),
            (c"commit", version::COMMIT),
        ] {
            // Cargo's version, a feature name and hex digits: no NUL.
            let value = CString::new(value).unwrap_or_default();
            // SAFETY: ctx is live; the server copies the text.
            unsafe {
                api!(InfoAddFieldCString)(ctx, name.as_ptr(), value.as_ptr());
            }
        }
        // In name order: the link order of the declarations is no order a
        // user (or a docs example) can rely on.
        let mut specs: Vec<_> = COMMANDS
            .iter()
            .filter(|spec| spec.counters.registered())
            .collect();
        specs.sort_unstable_by_key(|spec| spec.syntax.name());
        for spec in specs {
            let prefix = field_prefix(spec.syntax.name());
            let blocks = counts_blocks(spec.syntax);
            let blocked = blocks.then(|| ("blocked", spec.counters.blocked()));
            let fields = FIELDS.iter().copied().zip(spec.counters.read());
            for (field, value) in fields.chain(blocked) {
                let Ok(name) = CString::new(format!("{prefix}_{field}")) else {
                    continue;
                };
                // SAFETY: ctx is live; the server copies the field name.
                unsafe {
                    api!(InfoAddFieldULongLong)(ctx, name.as_ptr(), value);
                }
            }
        }
        for (name, value) in super::wait::info_fields() {
            // SAFETY: ctx is live; the server copies the field name.
            unsafe {
                api!(InfoAddFieldULongLong)(ctx, name.as_ptr(), value);
            }
        }
        // One dict line per configured prefix, in the configured order:
        // `rl_prefix_0:prefix=api:,admitted=3,denied=1,shadow_denied=0`. A
        // prefix is printable ASCII without `,` or `=` (checked when set).
        for (i, counts) in super::prefix_stats::read().iter().enumerate() {
            let (Ok(name), Ok(prefix)) = (
                CString::new(format!("prefix_{i}")),
                CString::new(counts.prefix.clone()),
            ) else {
                continue;
            };
            // SAFETY: ctx is live; the server copies names and values.
            unsafe {
                api!(InfoBeginDictField)(ctx, name.as_ptr());
                api!(InfoAddFieldCString)(ctx, c"prefix".as_ptr(), prefix.as_ptr());
                api!(InfoAddFieldULongLong)(ctx, c"admitted".as_ptr(), counts.admitted);
                api!(InfoAddFieldULongLong)(ctx, c"denied".as_ptr(), counts.denied);
                api!(InfoAddFieldULongLong)(ctx, c"shadow_denied".as_ptr(), counts.shadow_denied);
                api!(InfoEndDictField)(ctx);
            }
        }
        // Names are ASCII without NUL: the conversion cannot fail.
        let skipped = CString::new(skipped_commands()).unwrap_or_default();
        // SAFETY: ctx is live; the server copies the text.
        unsafe {
            api!(InfoAddFieldCString)(ctx, c"skipped_commands".as_ptr(), skipped.as_ptr());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_drop_the_module_prefix() {
        assert_eq!(field_prefix("rl.slide"), "slide");
        assert_eq!(field_prefix("rl.all"), "all");
        assert_eq!(field_prefix("cl.throttle"), "cl_throttle");
    }
}
