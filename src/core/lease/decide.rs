//! The decisions: acquire (admit if fewer than `limit` leases are held),
//! release and renew (change a held lease only).

use smallvec::SmallVec;

use super::request::{AcquireRequest, ReleaseRequest, RenewRequest};
use super::set::{LeaseEntry, LeaseId, LeaseView, LeaseWrite, MAX_SCORE_MS};
use super::{LeaseChange, Leased};
use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::expiry::Expiry;
use crate::core::limiter::Outcome;

/// Expired leases one admission removes at most (oldest first, by explicit
/// member). Expired leases never count, removed or not, so a backlog only
/// costs memory until later admissions (or the key's expiry) clear it.
pub const EVICT_PER_CALL: usize = 16;

/// Ids drawn before giving up when each one is already in the set (with
/// 64 random bits, a second draw is already beyond belief).
const ID_DRAWS: usize = 4;

fn until(at: i64, now: i64) -> u64 {
    u64::try_from(at.saturating_sub(now)).unwrap_or(0)
}

fn check_now(now: i64, lease_ms: u64) -> Result<i64, RlError> {
    let end = now.saturating_add(lease_ms as i64);
    if now < 0 || end > MAX_SCORE_MS {
        return Err(RlError::Internal("server clock out of range"));
    }
    Ok(end)
}

/// The key's expiry once its latest lease ends at `latest`.
fn expiry(latest: i64, lease_ms: u64) -> Expiry {
    Expiry::new(latest, lease_ms as i64)
}

/// `RL.ACQUIRE` at `now`; `writes` false for a read (`RL.PEEK ACQUIRE`):
/// then nothing is removed and no id is made.
pub fn acquire(
    view: &mut impl LeaseView,
    req: &AcquireRequest,
    now: i64,
    writes: bool,
) -> Result<Outcome<LeaseWrite, Leased>, RlError> {
    let end = check_now(now, req.lease_ms)?;
    // Every entry read is checked before anything is decided.
    let expired = if writes {
        view.expired(now, EVICT_PER_CALL)?
    } else {
        SmallVec::new()
    };
    let first = view.first_held(now, 1)?.first().copied();
    let latest = view.newest(1)?.first().map(|e| e.expiry);
    let held = view.held(now)?;
    let own = match &req.id {
        Some(id) => view.expiry_of(id)?,
        None => None,
    };
    let reset_at = latest.unwrap_or(now).max(end);
    if let (Some(id), Some(at)) = (req.id, own) {
        if at > now {
            // A retried acquire of a held id: renewed, counted once, never
            // shortened.
            let expiry_at = at.max(end);
            let decision = Decision {
                allowed: true,
                remaining: req.limit.saturating_sub(held),
                retry_after_ms: 0,
                reset_after_ms: until(reset_at.max(expiry_at), now),
                blocked: false,
            };
            return Ok(admitted(
                decision,
                id,
                expiry_at,
                Some(at),
                expired,
                reset_at,
                req,
                writes,
            ));
        }
    }
    if held >= req.limit {
        // A slot frees when `held - limit + 1` leases have ended (more than
        // one when the limit was lowered below what is held): the wait is
        // until that many-th earliest ends. `held >= limit >= 1`: `first`
        // is some.
        let k = held - req.limit + 1;
        let frees = if k == 1 {
            first
        } else {
            view.nth_held(now, held, k)?
        };
        let decision = Decision {
            allowed: false,
            remaining: 0,
            retry_after_ms: frees.map_or(0, |e| until(e.expiry, now)),
            reset_after_ms: until(latest.unwrap_or(now), now),
            blocked: false,
        };
        return Ok(Outcome {
            decision: Leased {
                decision,
                lease: None,
            },
            write: None,
        });
    }
    let decision = Decision {
        allowed: true,
        remaining: req.limit - held - 1,
        retry_after_ms: 0,
        reset_after_ms: until(reset_at, now),
        blocked: false,
    };
    if !writes {
        return Ok(Outcome {
            decision: Leased {
                decision,
                lease: None,
            },
            write: None,
        });
    }
    let id = match req.id {
        Some(id) => id,
        None => fresh_id(view, now)?,
    };
    Ok(admitted(
        decision, id, end, None, expired, reset_at, req, writes,
    ))
}

/// An id not in the set, made from the clock and a nonce.
fn fresh_id(view: &mut impl LeaseView, now: i64) -> Result<LeaseId, RlError> {
    for _ in 0..ID_DRAWS {
        let id = LeaseId::generated(now, view.nonce());
        if view.expiry_of(&id)?.is_none() {
            return Ok(id);
        }
    }
    Err(RlError::Internal("could not make a lease id"))
}

/// An admitted acquire of `id` until `expiry_at`; `stored` is the expiry
/// `id` already holds (a retried `ID`), when it is held.
#[allow(clippy::too_many_arguments)]
fn admitted(
    decision: Decision,
    id: LeaseId,
    expiry_at: i64,
    stored: Option<i64>,
    expired: SmallVec<[LeaseEntry; 4]>,
    reset_at: i64,
    req: &AcquireRequest,
    writes: bool,
) -> Outcome<LeaseWrite, Leased> {
    // A retried `ID` whose lease already lasts that long changes nothing:
    // nothing is set, so nothing is replicated, notified or `WATCH`ed.
    let set = (stored != Some(expiry_at)).then_some(LeaseEntry {
        id,
        expiry: expiry_at,
    });
    // The lease being set is never removed after it.
    let remove: SmallVec<[LeaseId; 4]> =
        expired.iter().map(|e| e.id).filter(|e| *e != id).collect();
    let write = (writes && (set.is_some() || !remove.is_empty())).then(|| LeaseWrite {
        set,
        remove,
        expiry: set.map(|_| expiry(reset_at.max(expiry_at), req.lease_ms)),
    });
    Outcome {
        decision: Leased {
            decision,
            lease: writes.then_some(id),
        },
        write,
    }
}

/// The held leases' state at `now` once `id` ends at `id_at` (`None`:
/// released).
fn state_after(
    view: &mut impl LeaseView,
    now: i64,
    id: &LeaseId,
    id_at: Option<i64>,
    changed: bool,
) -> Result<LeaseChange, RlError> {
    let held = view.held(now)? - u64::from(changed && id_at.is_none());
    let others = |v: SmallVec<[LeaseEntry; 2]>| -> Option<i64> {
        v.iter().find(|e| e.id != *id).map(|e| e.expiry)
    };
    let first = others(view.first_held(now, 2)?);
    let latest = others(view.newest(2)?);
    let (first, latest) = match id_at {
        Some(at) => (
            Some(first.map_or(at, |f| f.min(at))),
            Some(latest.map_or(at, |l| l.max(at))),
        ),
        None => (first, latest),
    };
    Ok(LeaseChange {
        changed,
        held,
        retry_after_ms: first.map_or(0, |at| until(at, now)),
        reset_after_ms: latest.map_or(0, |at| until(at, now)),
    })
}

/// `RL.RELEASE` at `now`: removes the lease if it is held.
pub fn release(
    view: &mut impl LeaseView,
    req: &ReleaseRequest,
    now: i64,
) -> Result<Outcome<LeaseWrite, LeaseChange>, RlError> {
    let held = view.expiry_of(&req.lease)?.is_some_and(|at| at > now);
    if !held {
        return Ok(Outcome {
            decision: state_after(view, now, &req.lease, None, false)?,
            write: None,
        });
    }
    let after = state_after(view, now, &req.lease, None, true)?;
    Ok(Outcome {
        decision: after,
        write: Some(LeaseWrite {
            set: None,
            remove: SmallVec::from_slice(&[req.lease]),
            expiry: None,
        }),
    })
}

/// `RL.RENEW` at `now`: extends a held lease to `now + lease_ms` (never
/// shortens it).
pub fn renew(
    view: &mut impl LeaseView,
    req: &RenewRequest,
    now: i64,
) -> Result<Outcome<LeaseWrite, LeaseChange>, RlError> {
    let end = check_now(now, req.lease_ms)?;
    let at = view.expiry_of(&req.lease)?.filter(|&at| at > now);
    let Some(at) = at else {
        return Ok(Outcome {
            decision: state_after(view, now, &req.lease, None, false)?,
            write: None,
        });
    };
    let new_at = at.max(end);
    let after = state_after(view, now, &req.lease, Some(new_at), true)?;
    if new_at == at {
        // Already lasts that long: renewed, and nothing to write.
        return Ok(Outcome {
            decision: after,
            write: None,
        });
    }
    let latest = now + after.reset_after_ms as i64;
    Ok(Outcome {
        decision: after,
        write: Some(LeaseWrite {
            set: Some(LeaseEntry {
                id: req.lease,
                expiry: new_at,
            }),
            remove: SmallVec::new(),
            expiry: Some(expiry(latest, req.lease_ms)),
        }),
    })
}
