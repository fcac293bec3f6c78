//! Per-command counters since load, shown by `INFO rl`.
//!
//! Each command's declaration holds its [`Counters`], so counting is a
//! relaxed atomic add with no lookup, lock or allocation.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

use super::reply::Reply;

/// What one call ended as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Admitted,
    Denied,
    /// Denied by a block (`BLOCK`, `RL.BLOCK`): counted as denied and as
    /// blocked.
    Blocked,
    /// A reply that is not a decision (RL.COUNT, RL.TOTALS, RL.REFUND,
    /// RL.CHARGE).
    Answered,
    Error,
    /// Not a call: the server only asked for the keys.
    KeysOnly,
}

impl Ended {
    pub fn of(reply: &Reply) -> Ended {
        match reply {
            Reply::Decision(d) | Reply::DecisionOldest(d, _) if d.allowed => Ended::Admitted,
            Reply::Granted(g) if g.decision.allowed => Ended::Admitted,
            Reply::Decision(d) | Reply::DecisionOldest(d, _) if d.blocked => Ended::Blocked,
            Reply::Granted(g) if g.decision.blocked => Ended::Blocked,
            Reply::Decision(_) | Reply::DecisionOldest(..) | Reply::Granted(_) => Ended::Denied,
            Reply::Cell(c) if c.limited => Ended::Denied,
            Reply::Cell(_) => Ended::Admitted,
            Reply::All(c) if c.allowed => Ended::Admitted,
            Reply::All(c) if c.clauses.iter().any(|d| d.blocked) => Ended::Blocked,
            Reply::All(_) => Ended::Denied,
            Reply::Leased(l) if l.decision.allowed => Ended::Admitted,
            Reply::Leased(_) => Ended::Denied,
            Reply::Totals(_)
            | Reply::Refunded(_)
            | Reply::Charged(_)
            | Reply::LeaseChange(_)
            | Reply::Integer(_) => Ended::Answered,
            // Counted as a call now, its outcome when the wait ends.
            Reply::Held => Ended::Answered,
            Reply::KeysReported => Ended::KeysOnly,
        }
    }
}

/// One command's counters.
pub struct Counters {
    calls: AtomicU64,
    admitted: AtomicU64,
    denied: AtomicU64,
    errors: AtomicU64,
    /// Admitted in shadow mode though the limiter denied (a subset of
    /// `admitted`).
    shadow_denied: AtomicU64,
    /// Denials by a block (also counted in `denied`).
    blocked: AtomicU64,
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
            shadow_denied: AtomicU64::new(0),
            blocked: AtomicU64::new(0),
            registration: AtomicU8::new(Registration::Absent as u8),
        }
    }

    /// Counts one call. Commands run on the main thread one at a time;
    /// relaxed adds are enough and never contend.
    pub fn count(&self, outcome: Ended) {
        if outcome == Ended::KeysOnly {
            return;
        }
        self.calls.fetch_add(1, Relaxed);
        self.settle(outcome);
    }

    /// Counts one call admitted in shadow mode (already counted admitted).
    pub fn count_shadow_denied(&self) {
        self.shadow_denied.fetch_add(1, Relaxed);
    }

    /// Counts how a call already counted ended: a `WAIT` call's outcome,
    /// when its wait ends.
    pub fn settle(&self, outcome: Ended) {
        let slot = match outcome {
            Ended::Admitted => &self.admitted,
            Ended::Denied => &self.denied,
            Ended::Blocked => {
                self.blocked.fetch_add(1, Relaxed);
                &self.denied
            }
            Ended::Error => &self.errors,
            Ended::Answered | Ended::KeysOnly => return,
        };
        slot.fetch_add(1, Relaxed);
    }

    /// Notes what the load did with the command.
    pub(crate) fn mark(&self, registration: Registration) {
        self.registration.store(registration as u8, Relaxed);
    }

    /// Whether the load registered the command (INFO lists only those).
    pub fn registered(&self) -> bool {
        self.registration.load(Relaxed) == Registration::Registered as u8
    }

    /// Whether the load left the command to the server, which had the name.
    pub fn skipped(&self) -> bool {
        self.registration.load(Relaxed) == Registration::Skipped as u8
    }

    /// `[calls, admitted, denied, errors, shadow_denied]`.
    pub fn read(&self) -> [u64; 5] {
        [
            self.calls.load(Relaxed),
            self.admitted.load(Relaxed),
            self.denied.load(Relaxed),
            self.errors.load(Relaxed),
            self.shadow_denied.load(Relaxed),
        ]
    }

    /// Denials by a block.
    pub fn blocked(&self) -> u64 {
        self.blocked.load(Relaxed)
    }
}

/// What a call's end must count beyond its command's counters, as bits, so
/// the usual call (none) pays one load: [`PREFIX_STATS`] while
/// `rl.stats-prefixes` is set, [`SHADOWED`] when the running call was
/// admitted in shadow mode (cleared once counted).
static EXTRA: AtomicU8 = AtomicU8::new(0);
pub const PREFIX_STATS: u8 = 1;
pub const SHADOWED: u8 = 2;

#[inline]
pub fn extra() -> u8 {
    EXTRA.load(Relaxed)
}

/// The running call was admitted in shadow mode.
pub fn mark_shadowed() {
    EXTRA.fetch_or(SHADOWED, Relaxed);
}

/// Whether the running call was admitted in shadow mode; clears it.
pub fn take_shadowed() -> bool {
    EXTRA.fetch_and(!SHADOWED, Relaxed) & SHADOWED != 0
}

pub fn set_prefix_stats(on: bool) {
    if on {
        EXTRA.fetch_or(PREFIX_STATS, Relaxed);
    } else {
        EXTRA.fetch_and(!PREFIX_STATS, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_split_calls_by_outcome() {
        let c = Counters::new();
        for o in [
            Ended::Admitted,
            Ended::Admitted,
            Ended::Denied,
            Ended::Error,
            Ended::Answered,
            Ended::Blocked,
        ] {
            c.count(o);
        }
        c.count_shadow_denied();
        assert_eq!(c.read(), [6, 2, 2, 1, 1]);
        assert_eq!(c.blocked(), 1);
    }
}
