//! The answer every limiter gives, as plain data.

/// One admit/deny decision. Field order is the reply order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// `limit` minus what the window holds after this decision (never negative).
    pub remaining: u64,
    /// 0 when admitted; otherwise the wait after which the same request is
    /// admitted if nothing else arrives (rounded up, never down).
    pub retry_after_ms: u64,
    /// Wait until the window holds nothing (0 if it already is empty).
    pub reset_after_ms: u64,
    /// A denial because the key is blocked (`BLOCK`, `RL.BLOCK`), not
    /// because its window is full. Not part of the reply: it is told
    /// apart in `INFO rl` and the `rl.blocked` event.
    pub blocked: bool,
}

impl Decision {
    /// The four integers of the reply: `[allowed, remaining, retry_after_ms, reset_after_ms]`.
    pub fn to_reply(self) -> [i64; 4] {
        [
            i64::from(self.allowed),
            saturate(self.remaining),
            saturate(self.retry_after_ms),
            saturate(self.reset_after_ms),
        ]
    }
}

fn saturate(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_keeps_field_order() {
        let d = Decision {
            allowed: false,
            remaining: 0,
            retry_after_ms: 250,
            reset_after_ms: 1000,
            blocked: false,
        };
        assert_eq!(d.to_reply(), [0, 0, 250, 1000]);
    }
}
