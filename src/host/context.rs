//! One command invocation: the server context and the arguments.

use super::ffi;

use super::ffi::{api, optional_api, string_bytes};
use super::options;
use crate::core::limiter::Now;

/// The running command as the command files see it.
pub struct CommandCtx {
    pub(crate) raw: *mut ffi::Ctx,
    pub(crate) argv: *mut *mut ffi::Str,
    pub(crate) argc: usize,
}

impl CommandCtx {
    /// The argument at `index` as the server holds it (for keys and replication).
    pub(crate) fn raw_arg(&self, index: usize) -> *mut ffi::Str {
        assert!(index < self.argc, "argument {index} out of range");
        // SAFETY: argv holds argc valid strings for the whole command call.
        unsafe { *self.argv.add(index) }
    }

    /// The server's clock in ms. Each replica gets the resolved effects, never
    /// this reading, so replicas and AOF replays do not depend on their clocks.
    fn now_ms(&self) -> i64 {
        // SAFETY: a plain read of the server clock.
        unsafe { api!(Milliseconds)() }
    }

    /// The clock, read once per call so every limiter of the call sees the
    /// same instant: one reading, in µs where the server has that clock
    /// (Redis 7.2+, Valkey; the ms are its whole part, as the server's own
    /// ms clock gives them), else in ms (Redis 7.0: requests within one ms
    /// share a reading). Like every reading, never replicated.
    pub fn now(&self) -> Now {
        // SAFETY: a plain read of the exported function pointer, then of the
        // server clock.
        match unsafe { optional_api!(Microseconds) } {
            Some(micros) => {
                // SAFETY: a plain read of the server clock.
                let us = unsafe { micros() };
                Now {
                    ms: us.div_euclid(1000),
                    us,
                }
            }
            None => {
                let ms = self.now_ms();
                Now {
                    ms,
                    us: ms.saturating_mul(1000),
                }
            }
        }
    }

    /// Tells WATCH and client-side caching that the key changed. We opt out of
    /// the implicit signal so a denied call, which writes nothing, stays silent.
    pub fn signal_modified(&self, key_index: usize) {
        // SAFETY: ctx and the key name are valid for this call.
        unsafe {
            api!(SignalModifiedKey)(self.raw, self.raw_arg(key_index));
        }
    }
}

impl CommandCtx {
    /// Fires the keyspace event the equivalent plain command would fire
    /// (`zadd`, `expire`, ...), so subscribers see rl's writes like any other.
    /// Costs one flag test when notifications are off.
    pub fn notify(&self, class: std::os::raw::c_int, event: &std::ffi::CStr, key_index: usize) {
        // The server calls its subscribers (rl's own, `wait::subscribe`)
        // inside this call: they tell rl's events from others' by the flag.
        OWN_EVENT.with(|own| own.set(true));
        // SAFETY: ctx, the event text and the key name are valid for this call.
        unsafe {
            api!(NotifyKeyspaceEvent)(self.raw, class, event.as_ptr(), self.raw_arg(key_index));
        }
        OWN_EVENT.with(|own| own.set(false));
    }
}

thread_local! {
    // Set while rl fires a keyspace event (main thread only).
    static OWN_EVENT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the keyspace event being delivered is one rl fired.
pub(crate) fn own_event() -> bool {
    OWN_EVENT.with(|own| own.get())
}

impl CommandCtx {
    /// True when the server calls a `getkeys-api` command only to learn its
    /// keys (`COMMAND GETKEYS`, Cluster, ACL): report them, reply nothing.
    pub fn keys_position_request(&self) -> bool {
        // SAFETY: ctx is the live context of the call.
        unsafe { api!(IsKeysPositionRequest)(self.raw) != 0 }
    }

    /// Reports the argument at `index` as a key that is read and updated.
    pub fn report_key(&self, index: usize) {
        let pos = index as std::os::raw::c_int;
        let flags = (ffi::CMD_KEY_RW | ffi::CMD_KEY_UPDATE) as std::os::raw::c_int;
        // SAFETY: ctx is a keys-position request context (checked by the caller).
        unsafe {
            match optional_api!(KeyAtPosWithFlags) {
                Some(with_flags) => with_flags(self.raw, pos, flags),
                None => api!(KeyAtPos)(self.raw, pos),
            }
        }
    }

    /// Fires `rl.denied` (module event class, flag `d`) on the key at
    /// `key_index` when the load argument `NOTIFY-DENIED on` asked for it.
    /// Not a write: nothing changes, nothing is replicated. A denial by a
    /// block fires `rl.blocked` right after: a keyspace event carries only
    /// its name and the key, so the second event is the denial's "blocked"
    /// field, and subscribers of `rl.denied` still see every denial.
    pub fn notify_denied(&self, key_index: usize, blocked: bool) {
        if options::notify_denied() {
            self.notify(ffi::NOTIFY_MODULE, c"rl.denied", key_index);
            if blocked {
                self.notify(ffi::NOTIFY_MODULE, c"rl.blocked", key_index);
            }
        }
    }

    /// Whether a denial on the key at `key_index` is admitted instead
    /// (shadow mode: `rl.shadow`, `rl.shadow-prefixes`).
    pub fn shadows(&self, key_index: usize) -> bool {
        options::shadows(string_bytes(self.raw_arg(key_index)))
    }

    /// A denial on the key at `key_index` was admitted in shadow mode:
    /// counted once the call ends, and told as `rl.denied.shadow` (so a
    /// subscriber to `rl.denied` alone acts only on enforced denials, a
    /// pattern `rl.denied*` sees both) under the same config.
    pub fn shadow_denied(&self, key_index: usize) {
        self.notify_shadow(key_index);
        super::metrics::mark_shadowed();
    }

    /// The running call was admitted in shadow mode (`RL.ALL`, once per
    /// call): counted once it ends.
    pub fn mark_shadowed(&self) {
        super::metrics::mark_shadowed();
    }

    /// Fires `rl.denied.shadow` on the key at `key_index` when
    /// `rl.notify-denied` asks for denial events.
    pub fn notify_shadow(&self, key_index: usize) {
        if options::notify_denied() {
            self.notify(ffi::NOTIFY_MODULE, c"rl.denied.shadow", key_index);
        }
    }
}
