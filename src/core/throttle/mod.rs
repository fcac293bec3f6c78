//! `RL.THROTTLE` and `CL.THROTTLE`: GCRA over one string key holding the
//! theoretical arrival time.

pub mod charge;
pub mod gcra;
pub mod refund;
pub mod request;

use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::string_key::{StringView, StringWrite};
use request::ThrottleRequest;

impl<V: StringView> Limiter<V> for ThrottleRequest {
    type Write = StringWrite;
    type Answer = Decision;

    /// At the server's µs clock; a quantity of 0 peeks (writes nothing).
    fn decide(&self, key: &mut V, call: &Call) -> Result<Outcome<StringWrite>, RlError> {
        let tat = key
            .value()
            .map(|bytes| gcra::stored_state(bytes, key.expire_at_ms()))
            .transpose()?;
        let out = gcra::decide(&self.rate, tat, self.quantity, call.now.us);
        Ok(Outcome {
            decision: out.to_decision(),
            write: out.write.map(string_write).transpose()?,
        })
    }
}

/// A TAT as the string key stores it.
fn string_write(w: gcra::TatWrite) -> Result<StringWrite, RlError> {
    Ok(StringWrite {
        value: u64::try_from(w.tat_us).map_err(|_| RlError::Internal("negative TAT"))?,
        expire_at_ms: w.expire_at_ms,
    })
}
