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
    /// A reply that is not a decision (RL.COUNT, RL.TOTALS, RL.REFUND).
    Answered,
    Error,
    /// Not a call: the server only asked for the keys.
    KeysOnly,
}

impl Ended {
    pub fn of(reply: &Reply) -> Ended {
        match reply {
            Reply::Decision(d) | Reply::DecisionOldest(d, _) if d.allowed => Ended::Admitted,
            Reply::Decision(d) | Reply::DecisionOldest(d, _) if d.blocked => Ended::Blocked,
            Reply::Decision(_) | Reply::DecisionOldest(..) => Ended::Denied,
            Reply::Cell(c) if c.limited => Ended::Denied,
            Reply::Cell(_) => Ended::Admitted,
            Reply::All(c) if c.allowed => Ended::Admitted,
            Reply::All(c) if c.clauses.iter().any(|d| d.blocked) => Ended::Blocked,
            Reply::All(_) => Ended::Denied,
            Reply::Leased(l) if l.decision.allowed => Ended::Admitted,
            Reply::Leased(_) => Ended::Denied,
            Reply::Totals(_) | Reply::Refunded(_) | Reply::LeaseChange(_) | Reply::Integer(_) => {
                Ended::Answered
            }
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

    /// `[calls, admitted, denied, errors]`.
    pub fn read(&self) -> [u64; 4] {
        [
            self.calls.load(Relaxed),
            self.admitted.load(Relaxed),
            self.denied.load(Relaxed),
            self.errors.load(Relaxed),
        ]
    }

    /// Denials by a block.
    pub fn blocked(&self) -> u64 {
        self.blocked.load(Relaxed)
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
        assert_eq!(c.read(), [6, 2, 2, 1]);
        assert_eq!(c.blocked(), 1);
    }
}
