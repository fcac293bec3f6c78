//! `RL.FIXED`: the fixed-window counter, one string key per subject.

pub mod block;
pub mod charge;
pub mod decide;
pub mod refund;
pub mod request;

use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::limiter::{Call, Limiter, Outcome};
use crate::core::string_key::{StringView, StringWrite};
use request::FixedRequest;

impl<V: StringView> Limiter<V> for FixedRequest {
    type Write = StringWrite;
    type Answer = Decision;

    fn decide(&self, key: &mut V, call: &Call) -> Result<Outcome<StringWrite>, RlError> {
        let state = key
            .value()
            .map(|bytes| decide::stored_state(bytes, key.expire_at_ms()))
            .transpose()?;
        Ok(decide::decide(self, state, call.now.ms))
    }
}
