//! One thin file per command: parse, open the key, decide (core), apply and
//! replicate the effects (host), reply.

pub mod all;
pub mod buckets;
pub mod cl_throttle;
pub mod count;
pub mod fixed;
pub mod limiter;
pub mod peek;
pub mod slide;
pub mod throttle;
pub mod totals;
