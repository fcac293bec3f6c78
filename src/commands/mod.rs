//! One thin file per command: parse, open the key, decide (core), apply and
//! replicate the effects (host), reply.

pub mod buckets;
pub mod cl_throttle;
pub mod count;
pub mod fixed;
pub mod slide;
pub mod throttle;
pub mod totals;
