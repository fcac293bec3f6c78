//! The load options the host keeps between calls (parsed by
//! `core::load_options`).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Set at load from `NOTIFY-DENIED`.
static NOTIFY_DENIED: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_notify_denied(on: bool) {
    NOTIFY_DENIED.store(on, Relaxed);
}

/// Whether a denial fires `rl.denied`.
pub fn notify_denied() -> bool {
    NOTIFY_DENIED.load(Relaxed)
}
