//! RL.THROTTLE, CL.THROTTLE and RL.FIXED through the library against the
//! module, with their RL.PEEK / RL.REFUND forms and RL.ALL clauses.
//!
//! On Valkey (stopped clock) every step must give the same reply and the
//! same state (value and absolute expiry) on both editions, with one
//! deliberate exception (`idle_tat`). On Redis 7.0 and 8.2 the clock runs,
//! so the streams use rates and windows so long that nothing refills while
//! they run, and compare what cannot depend on the instant: errors,
//! `allowed`, `remaining`, `refunded`, the stored counters, and the shape
//! of the stored TATs.
//!
//! The random lines are made in [`lines`] and run in [`streams`]; the
//! targeted cases are in [`maxima`] (arguments and stored TATs at their
//! largest), [`fixed`] (RL.FIXED's counters) and [`edges`] (the documented
//! examples, states ahead of the clock, a refund to now).

mod edges;
mod fixed;
mod lines;
mod maxima;
pub(crate) mod streams;

use crate::harness::run;

fn server_us(c: &mut redis::Connection) -> i64 {
    let (s, us): (i64, i64) = redis::cmd("TIME").query(c).unwrap();
    s * 1_000_000 + us
}

/// Sets `k` to `value` with expiry `at` (ms; None: no TTL) on both sides.
fn set_both(c: &mut redis::Connection, k: &str, value: &str, at: Option<i64>) {
    for p in ["m:", "f:"] {
        let key = format!("{p}{k}");
        match at {
            Some(at) => run(c, &["SET", &key, value, "PXAT", &at.to_string()]),
            None => run(c, &["SET", &key, value]),
        }
        .unwrap();
    }
}
