//! Any limiter, decided in two steps: read its key and decide (nothing
//! written), then, if the caller says so, record the decision's effects.
//! `RL.PEEK` stops after the first step; `RL.ALL` takes it for every clause
//! before taking the second for any. Each step is the limiter's own code:
//! the core decision, and the `read` / `record` of its command file.

use crate::commands::{buckets, fixed, slide, throttle};
use crate::core::bucket_window::{self, HashWrite};
use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::fixed_window::{self, FixedWrite};
use crate::core::gcra::{self, TatWrite};
use crate::core::limit_request::LimitRequest;
use crate::core::sliding_log::{self, Admission};
use crate::host::context::CommandCtx;
use crate::host::hash_state::HashState;
use crate::host::string_state::StringState;
use crate::host::zset_log::ZsetLog;

/// The clock, read once per command so every clause sees the same instant.
#[derive(Debug, Clone, Copy)]
pub struct Now {
    pub ms: i64,
    pub us: i64,
}

impl Now {
    pub fn read(cmd: &CommandCtx) -> Now {
        Now {
            ms: cmd.now_ms(),
            us: cmd.now_us(),
        }
    }
}

/// How the key is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read only: nothing can be written (RL.PEEK; runs on replicas).
    Read,
    /// For writing, so `record` can follow.
    Write,
}

/// An open key, in the shape its limiter reads.
pub enum State<'a> {
    Log(ZsetLog<'a>),
    Hash(HashState<'a>),
    String(StringState<'a>),
}

/// What an admission would write; `None` in [`Decided`] for a denial.
pub enum Effect {
    Slide(Admission),
    /// Boxed: a bucket write holds its fields inline (hundreds of bytes).
    Buckets(Box<HashWrite>),
    Throttle(TatWrite),
    Fixed(FixedWrite),
}

/// One limiter decided, nothing written yet.
pub struct Decided<'a> {
    pub key: usize,
    pub state: State<'a>,
    pub decision: Decision,
    pub effect: Option<Effect>,
}

/// How many limiters of a kind one call decides: they share its bounds on
/// work (removals for sliding logs, buckets read for bucket windows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shares {
    pub slides: u64,
    pub buckets: u64,
}

impl Shares {
    /// A call that decides one limiter.
    pub const ONE: Shares = Shares {
        slides: 1,
        buckets: 1,
    };
}

/// Opens the key at `key` and decides `req` at `now`. Writes nothing.
pub fn decide<'a>(
    cmd: &'a CommandCtx,
    req: &LimitRequest,
    key: usize,
    access: Access,
    now: Now,
    shares: Shares,
) -> Result<Decided<'a>, RlError> {
    let write = access == Access::Write;
    let (state, decision, effect) = match req {
        LimitRequest::Slide(r) => {
            let mut log = if write {
                ZsetLog::open(cmd, key)?
            } else {
                ZsetLog::open_read(cmd, key)?
            };
            // A read never removes anything: it reads only the oldest entry.
            let budget = if write {
                sliding_log::evict_budget(r.cost, shares.slides)
            } else {
                0
            };
            let out = sliding_log::decide_within(&mut log, r, now.ms, budget)?;
            let effect = out.admission.map(Effect::Slide);
            (State::Log(log), out.decision, effect)
        }
        LimitRequest::Buckets(r) => {
            let mut hash = HashState::open(cmd, key, write)?;
            let max_buckets = bucket_window::MAX_BUCKETS / shares.buckets.max(1);
            let out = bucket_window::decide_within(&mut hash, r, now.ms, max_buckets)?;
            let effect = out.write.map(|w| Effect::Buckets(Box::new(w)));
            (State::Hash(hash), out.decision, effect)
        }
        LimitRequest::Throttle(r) => {
            let string = open_string(cmd, key, write)?;
            let out = gcra::decide(&r.rate, throttle::read(&string)?, r.quantity, now.us);
            let effect = out.write.map(Effect::Throttle);
            (State::String(string), out.to_decision(), effect)
        }
        LimitRequest::Fixed(r) => {
            let string = open_string(cmd, key, write)?;
            let out = fixed_window::decide(r, fixed::read(&string)?, now.ms);
            let effect = out.write.map(Effect::Fixed);
            (State::String(string), out.decision, effect)
        }
    };
    Ok(Decided {
        key,
        state,
        decision,
        effect,
    })
}

fn open_string(cmd: &CommandCtx, key: usize, write: bool) -> Result<StringState<'_>, RlError> {
    if write {
        StringState::open(cmd, key)
    } else {
        StringState::open_read(cmd, key)
    }
}

impl Decided<'_> {
    /// Applies and replicates the effect, if any, through the limiter's own
    /// command code. The key must have been opened with [`Access::Write`].
    pub fn record(&mut self, cmd: &CommandCtx) -> Result<(), RlError> {
        let key = self.key;
        match (&mut self.state, &self.effect) {
            (_, None) => Ok(()),
            (State::Log(log), Some(Effect::Slide(a))) => slide::record(cmd, key, log, a),
            (State::Hash(hash), Some(Effect::Buckets(w))) => buckets::record(cmd, key, hash, w),
            (State::String(s), Some(Effect::Throttle(w))) => throttle::record(cmd, key, s, *w),
            (State::String(s), Some(Effect::Fixed(w))) => fixed::record(cmd, key, s, *w),
            _ => Err(RlError::Internal("effect does not match its key")),
        }
    }
}
