//! `RL.THROTTLE` and `CL.THROTTLE`: GCRA over one string key holding the
//! theoretical arrival time.

pub mod gcra;
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
        let write = match out.write {
            Some(w) => Some(StringWrite {
                value: u64::try_from(w.tat_us).map_err(|_| RlError::Internal("negative TAT"))?,
                expire_at_ms: w.expire_at_ms,
            }),
            None => None,
        };
        Ok(Outcome {
            decision: out.to_decision(),
            write,
        })
    }
}
