//! `RL.THROTTLE` and `CL.THROTTLE`: GCRA over one string key holding the
//! theoretical arrival time.

pub mod block;
pub mod charge;
pub mod gcra;
pub mod refund;
pub mod request;
#[cfg(test)]
mod time_anomalies;

use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::options::block::{breached, end, holds};
use crate::core::string_key::{StringView, StringWrite};
use request::ThrottleRequest;

impl<V: StringView> Limiter<V> for ThrottleRequest {
    type Write = StringWrite;
    type Answer = Decision;

    /// At the server's µs clock; a quantity of 0 peeks (writes nothing).
    /// A block that holds denies before the TAT is read (by its ms); a
    /// denial of a request with `BLOCK ms` writes the block, the TAT as it
    /// was, and answers as the block does.
    fn decide(&self, key: &mut V, call: &Call) -> Result<Outcome<StringWrite>, RlError> {
        let stored = key
            .value()
            .map(|bytes| gcra::stored_with_block(bytes, key.expire_at_ms()))
            .transpose()?;
        if let Some(decision) = holds(stored.and_then(|s| s.1), call.now.ms) {
            return Ok(Outcome {
                decision,
                write: None,
            });
        }
        let tat = stored.map(|s| s.0);
        let out = gcra::decide(&self.rate, tat, self.quantity, call.now.us);
        let (decision, write) = match (out.write, self.block_ms) {
            (Some(w), _) => (out.to_decision(), Some(string_write(w, None)?)),
            (None, Some(ms)) if !out.allowed => {
                let tat = tat.unwrap_or(call.now.us);
                let until = end(call.now.ms, ms);
                let write = string_write(gcra::TatWrite::at(tat.into()), Some(until))?;
                (breached(ms), Some(write))
            }
            (None, _) => (out.to_decision(), None),
        };
        Ok(Outcome { decision, write })
    }
}

/// A TAT as the string key stores it, with the end of a block kept with it.
fn string_write(w: gcra::TatWrite, blocked_until: Option<i64>) -> Result<StringWrite, RlError> {
    let tat = u64::try_from(w.tat_us).map_err(|_| RlError::Internal("negative TAT"))?;
    Ok(StringWrite {
        blocked_until,
        ..StringWrite::plain(tat, w.expire_at_ms)
    })
}
