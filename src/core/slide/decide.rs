//! The decision: count the entries still in the window, admit if the cost
//! fits, and name the stale entries an admission removes.

use super::block_member::{block_write, write_until, SkipBlock};
use super::log::{member, Admission, Entry, LogView, LogWrite, MAX_NOW_MS, MEMBERS_PER_MS};
use super::request::SlideRequest;
use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::expiry::Expiry;
use crate::core::limiter::{Outcome, Shares};
use crate::core::options::block;

/// Entries that left the window one call may remove, all its sliding logs
/// together (each about 1 µs at 10^6 entries in the module, 3 µs in the
/// function edition, which reads and checks each as the module does). It
/// is more than the costs of one call together (at most `MAX_COST` + one
/// per RL.ALL clause), so every log removes more than it inserts and a
/// backlog drains.
///
/// `RL_EVICT_PER_CALL=n` at build time replaces it, for measuring other
/// bounds only (`scripts/bench-bound.sh`); what ships is built without it.
pub const EVICT_PER_CALL: u64 = match option_env!("RL_EVICT_PER_CALL") {
    Some(n) => decimal(n),
    None => 128,
};

/// `text` as a decimal number, at build time (a bad one fails the build).
const fn decimal(text: &str) -> u64 {
    let bytes = text.as_bytes();
    assert!(!bytes.is_empty(), "RL_EVICT_PER_CALL: a number");
    let (mut n, mut i) = (0u64, 0);
    while i < bytes.len() {
        assert!(bytes[i].is_ascii_digit(), "RL_EVICT_PER_CALL: a number");
        n = n * 10 + (bytes[i] - b'0') as u64;
        i += 1;
    }
    assert!(n > 0, "RL_EVICT_PER_CALL: at least 1");
    n
}

/// How many stale entries an admission of `cost` may remove, when the call
/// decides `shares.slides` sliding logs costing `shares.slide_cost`
/// together (RL.ALL): `cost + 1`, so removal outpaces insertion, and an
/// equal part of what the call's [`EVICT_PER_CALL`] leaves beyond that.
/// One log alone: [`EVICT_PER_CALL`].
pub fn evict_budget(cost: u64, shares: Shares) -> u64 {
    budget_under(EVICT_PER_CALL, cost, shares)
}

/// [`evict_budget`] under a bound of `bound` per call: below a call's
/// cost + 1, the cost + 1 still.
fn budget_under(bound: u64, cost: u64, shares: Shares) -> u64 {
    let slides = shares.slides.max(1);
    let owed = shares.slide_cost.max(cost) + slides;
    cost + 1 + bound.saturating_sub(owed) / slides
}

/// Decides `req` at `now` against the log, as one RL.SLIDE call.
/// Its write is the admission, if any: a block a denial sets (`BLOCK ms`)
/// or the log holds is [`decide_within`]'s to tell (tests and benches
/// record admissions).
pub fn decide(
    log: &mut impl LogView,
    req: &SlideRequest,
    now: i64,
) -> Result<Outcome<Admission>, RlError> {
    let out = decide_within(log, req, now, evict_budget(req.cost, Shares::ONE))?;
    Ok(Outcome {
        decision: out.decision,
        write: match out.write {
            Some(LogWrite::Admit(a)) => Some(a),
            _ => None,
        },
    })
}

/// What every call on a log reads first, each entry read checked to be
/// rl's: the newest entry, and the entries that left the window (score
/// `<= cutoff`) and those that still count.
pub(super) struct Ends {
    pub newest: Option<Entry>,
    pub stale: u64,
    pub held: u64,
}

/// Reads the log's ends at `now`: the newest entry and the oldest ones (up
/// to `max_read` of those that left the window, at least the oldest). The
/// clock, and every entry read, are checked here; a log holding one rl
/// could not have written is refused.
/// The wait at `now` until the `n`-th oldest entry in the window (after
/// `stale` entries at or before `cutoff`) leaves it, at least 1 ms; `None`
/// when the server's rank lookup gave no answer. A score rl could not have
/// written is refused.
pub(super) fn nth_leaves(
    log: &mut impl LogView,
    cutoff: i64,
    stale: u64,
    n: u64,
    window: i64,
    now: i64,
) -> Result<Option<u64>, RlError> {
    match log.nth_after(cutoff, stale, n) {
        Some(s) if !(0..=MAX_NOW_MS).contains(&s) => Err(RlError::ForeignZset),
        Some(s) => Ok(Some((s + window - now).max(1) as u64)),
        None => Ok(None),
    }
}

pub(super) fn read_ends(
    log: &mut impl LogView,
    now: i64,
    cutoff: i64,
    max_read: u64,
) -> Result<Ends, RlError> {
    if !(0..=MAX_NOW_MS).contains(&now) {
        return Err(RlError::Internal("server clock out of range"));
    }
    let (newest, oldest) = log.ends(cutoff, max_read);
    if newest.is_some_and(|e| !e.is_rl()) || !oldest.entries.iter().all(Entry::is_rl) {
        return Err(RlError::ForeignZset);
    }
    let (stale, held) = match newest {
        None => (0, 0),
        // Entries newer than `now` (the clock stepped back) still count:
        // never over-admit.
        Some(_) => (oldest.stale, log.entry_count() - oldest.stale),
    };
    Ok(Ends {
        newest,
        stale,
        held,
    })
}

/// The write that records `count` entries at `now` over a log whose newest
/// entry is `newest`, removing `evict` of those that left the window.
#[inline(always)]
pub(super) fn admission(
    newest: Option<Entry>,
    now: i64,
    window: i64,
    evict: u64,
    count: u64,
) -> Result<Admission, RlError> {
    // Recorded at `now`, or at the newest entry's time if the clock
    // stepped back: an entry is never older than one admitted before
    // it, so a clock stepping back and then forward again cannot make
    // it leave the window early.
    let at = newest.map_or(now, |e| e.score.max(now));
    // The newest entry is the last member of `at` (same-ms members sort
    // by their number), so it tells which numbers are taken.
    let taken = match newest {
        Some(Entry {
            score,
            member: Some(m),
        }) if score == at => m.rem_euclid(MEMBERS_PER_MS) + 1,
        _ => 0,
    };
    if taken + count as i64 > MEMBERS_PER_MS {
        // Reachable by rl's own writes (charges, or a clock that stepped
        // back and keeps recording at the newest entry's time): the next
        // millisecond numbers from 0 again.
        return Err(RlError::MillisecondFull {
            at,
            left: MEMBERS_PER_MS - taken,
            cost: count,
            retry_ms: at + 1 - now,
        });
    }
    Ok(Admission {
        evict,
        at,
        first_member: member(at, taken),
        count,
        expiry: Expiry::new(at + window, window),
        unblock: false,
    })
}

/// Decides `req` at `now`, removing at most `max_evict` stale entries if
/// admitted. Pure: the log is only read, and every check that can fail
/// happens here, before anything is written. A log holding an entry rl
/// could not have written among those it reads (the newest, the oldest,
/// every one it would remove) is refused.
///
/// A block the log holds denies before the log is counted; a denial of a
/// request with `BLOCK ms` writes the block (the entries as they are) and
/// answers as the block does.
pub fn decide_within(
    log: &mut impl LogView,
    req: &SlideRequest,
    now: i64,
    max_evict: u64,
) -> Result<Outcome<LogWrite>, RlError> {
    let mut log = SkipBlock::new(log);
    let ends = read_ends(
        &mut log,
        now,
        now.saturating_sub(req.window_ms as i64),
        max_evict,
    )?;
    if let Some(decision) = block::holds(log.block, now) {
        return Ok(Outcome {
            decision,
            write: None,
        });
    }
    let newest = ends.newest;
    let ended = log.block.is_some();
    let out = decide_counted(&mut log, req, now, max_evict, ends)?;
    let write = match (out.write, req.block_ms) {
        (Some(mut a), _) => {
            a.unblock = ended;
            Some(LogWrite::Admit(a))
        }
        (None, Some(ms)) => {
            let write = block_write(newest, now, ms);
            let until = write_until(&write);
            return Ok(Outcome {
                decision: block::breached((until - now) as u64),
                write: Some(write),
            });
        }
        (None, None) => None,
    };
    Ok(Outcome {
        decision: out.decision,
        write,
    })
}

/// The decision over a log's ends read at `now`, no block holding: the
/// admission if the cost fits, else the denial's waits.
#[inline(always)]
fn decide_counted(
    log: &mut impl LogView,
    req: &SlideRequest,
    now: i64,
    max_evict: u64,
    ends: Ends,
) -> Result<Outcome<Admission>, RlError> {
    let window = req.window_ms as i64;
    let cutoff = now - window;
    let Ends {
        newest,
        stale,
        held,
    } = ends;

    if held + req.cost <= req.limit {
        let admission = admission(newest, now, window, stale.min(max_evict), req.cost)?;
        return Ok(Outcome {
            decision: Decision {
                allowed: true,
                remaining: req.limit - held - req.cost,
                retry_after_ms: 0,
                reset_after_ms: (admission.at + window - now) as u64,
                blocked: false,
            },
            write: Some(admission),
        });
    }

    // Denied: the request fits once the `need` oldest in-window entries have
    // left, i.e. when the `need`-th of them reaches `score + window`. Waiting
    // exactly that long is enough and one ms less is not.
    let need = held + req.cost - req.limit;
    let reset_after_ms = newest.map_or(0, |e| (e.score + window - now).max(0) as u64);
    // Without an answer (the server's rank lookup failed), the newest
    // entry's leaving is a wait that is surely enough. The entry read is
    // checked like every other: a score rl could not have written (a
    // fraction, `+inf`) is refused, not turned into a wait.
    let retry_after_ms = nth_leaves(log, cutoff, stale, need, window, now)?
        .unwrap_or(reset_after_ms)
        .max(1);
    Ok(Outcome {
        decision: Decision {
            allowed: false,
            remaining: req.limit.saturating_sub(held),
            retry_after_ms,
            reset_after_ms,
            blocked: false,
        },
        write: None,
    })
}

// The tests are a file of their own (a child module: they see this file's
// private items).
#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
