//! Per-command counters since load, shown by `INFO rl`.
//!
//! Each command callback owns one [`Counters`] (declared next to it by
//! `command_callback!`), so counting is a relaxed atomic add with no lookup,
//! lock or allocation. `INFO` walks them, which is where the names are
//! matched and the text is built.

use std::ffi::CString;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};

use linkme::distributed_slice;

use super::ffi;
use super::ffi::api;
use super::registry::{Callback, COMMANDS};
use super::reply::Reply;

/// What one call ended as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Admitted,
    Denied,
    /// A reply that is not a decision (RL.COUNT, RL.TOTALS).
    Answered,
    Error,
    /// Not a call: the server only asked for the keys.
    KeysOnly,
}

impl Outcome {
    pub fn of(reply: &Reply) -> Outcome {
        match reply {
            Reply::Decision(d) if d.allowed => Outcome::Admitted,
            Reply::Decision(_) => Outcome::Denied,
            Reply::Cell(c) if c.limited => Outcome::Denied,
            Reply::Cell(_) => Outcome::Admitted,
            Reply::All(c) if c.allowed => Outcome::Admitted,
            Reply::All(_) => Outcome::Denied,
            Reply::Totals(_) => Outcome::Answered,
            Reply::KeysReported => Outcome::KeysOnly,
        }
    }
}

/// One command's counters.
pub struct Counters {
    calls: AtomicU64,
    admitted: AtomicU64,
    denied: AtomicU64,
    errors: AtomicU64,
    /// What the load did with the command (a [`Registration`]), so INFO
    /// lists only commands that exist, and the names it skipped.
    registration: AtomicU8,
}

/// What the load did with a declared command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Registration {
    /// Not registered: the load arguments left it out (`CL.THROTTLE off`).
    Absent = 0,
    Registered = 1,
    /// Not registered: the server already had a command of that name.
    Skipped = 2,
}

impl Counters {
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Counters {
        Counters {
            calls: AtomicU64::new(0),
            admitted: AtomicU64::new(0),
            denied: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            registration: AtomicU8::new(Registration::Absent as u8),
        }
    }

    /// Counts one call. Commands run on the main thread one at a time;
    /// relaxed adds are enough and never contend.
    pub fn count(&self, outcome: Outcome) {
        if outcome == Outcome::KeysOnly {
            return;
        }
        self.calls.fetch_add(1, Relaxed);
        let slot = match outcome {
            Outcome::Admitted => &self.admitted,
            Outcome::Denied => &self.denied,
            Outcome::Error => &self.errors,
            Outcome::Answered | Outcome::KeysOnly => return,
        };
        slot.fetch_add(1, Relaxed);
    }

    /// `[calls, admitted, denied, errors]`.
    pub fn read(&self) -> [u64; 4] {
        [
            self.calls.load(Relaxed),
            self.admitted.load(Relaxed),
            self.denied.load(Relaxed),
            self.errors.load(Relaxed),
        ]
    }
}

/// A command callback and its counters.
pub struct CommandMetrics {
    pub callback: Callback,
    pub counters: Counters,
}

#[distributed_slice]
pub static METRICS: [CommandMetrics];

fn counters_of(callback: Callback) -> Option<&'static Counters> {
    METRICS
        .iter()
        .find(|m| std::ptr::fn_addr_eq(m.callback, callback))
        .map(|m| &m.counters)
}

/// Notes what the load did with the command that has this callback.
pub(crate) fn mark(callback: Callback, registration: Registration) {
    if let Some(c) = counters_of(callback) {
        c.registration.store(registration as u8, Relaxed);
    }
}

fn registration(counters: &Counters) -> u8 {
    counters.registration.load(Relaxed)
}

/// Forgets the previous load's registrations: after `MODULE UNLOAD` the
/// library may stay mapped and keep its statics.
pub(crate) fn reset_registrations() {
    for m in METRICS {
        m.counters
            .registration
            .store(Registration::Absent as u8, Relaxed);
    }
}

/// The declared commands the load skipped because their name was taken,
/// sorted, comma-separated (`cl.throttle,rl.throttle`); empty if none.
pub(crate) fn skipped_commands() -> String {
    let mut names: Vec<&str> = COMMANDS
        .iter()
        .filter(|spec| {
            counters_of(spec.callback)
                .is_some_and(|c| registration(c) == Registration::Skipped as u8)
        })
        .map(|spec| spec.syntax.name())
        .collect();
    names.sort_unstable();
    names.join(",")
}

/// Set at load from `NOTIFY-DENIED`.
static NOTIFY_DENIED: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_notify_denied(on: bool) {
    NOTIFY_DENIED.store(on, Relaxed);
}

pub fn notify_denied() -> bool {
    NOTIFY_DENIED.load(Relaxed)
}

/// The INFO field prefix for a command: `rl.slide` -> `slide`,
/// `cl.throttle` -> `cl_throttle` (the server adds `rl_` in front).
pub fn field_prefix(name: &str) -> String {
    name.strip_prefix("rl.").unwrap_or(name).replace('.', "_")
}

const FIELDS: [&str; 4] = ["calls", "admitted", "denied", "errors"];

/// Replaces the binding's info callback (registered before our init runs;
/// a module has one) with ours.
pub(crate) fn register_info(ctx: *mut ffi::Ctx) -> Result<(), String> {
    // SAFETY: called from OnLoad with the load context.
    if unsafe { api!(RegisterInfoFunc)(ctx, Some(info)) } != ffi::OK {
        return Err("could not register the INFO section".into());
    }
    Ok(())
}

/// The `rl` INFO section: `rl_<command>_<calls|admitted|denied|errors>`
/// for every registered command, sorted by command name, then `rl_skipped_commands`: the names the
/// load left to the server because it already had them.
extern "C" fn info(ctx: *mut ffi::InfoCtx, _for_crash_report: c_int) {
    // No panic may cross into the server.
    let _ = super::command::catch(|| {
        // SAFETY: ctx is the live info context; the section (NULL: named
        // after the module) is skipped by the server when not requested.
        unsafe {
            if api!(InfoAddSection)(ctx, std::ptr::null()) != ffi::OK {
                return;
            }
        }
        // In name order: the link order of the declarations is no order a
        // user (or a docs example) can rely on.
        let mut specs: Vec<_> = COMMANDS.iter().collect();
        specs.sort_unstable_by_key(|spec| spec.syntax.name());
        for spec in specs {
            let Some(counters) = counters_of(spec.callback) else {
                continue;
            };
            if registration(counters) != Registration::Registered as u8 {
                continue;
            }
            let prefix = field_prefix(spec.syntax.name());
            for (field, value) in FIELDS.iter().zip(counters.read()) {
                let Ok(name) = CString::new(format!("{prefix}_{field}")) else {
                    continue;
                };
                // SAFETY: ctx is live; the server copies the field name.
                unsafe {
                    api!(InfoAddFieldULongLong)(ctx, name.as_ptr(), value);
                }
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
    fn counters_split_calls_by_outcome() {
        let c = Counters::new();
        for o in [
            Outcome::Admitted,
            Outcome::Admitted,
            Outcome::Denied,
            Outcome::Error,
            Outcome::Answered,
        ] {
            c.count(o);
        }
        assert_eq!(c.read(), [5, 2, 1, 1]);
    }

    #[test]
    fn field_names_drop_the_module_prefix() {
        assert_eq!(field_prefix("rl.slide"), "slide");
        assert_eq!(field_prefix("rl.all"), "all");
        assert_eq!(field_prefix("cl.throttle"), "cl_throttle");
    }
}
