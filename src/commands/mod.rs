//! One thin file per command: parse, open the key, decide (core), apply and
//! replicate the effects (host), reply.

pub mod buckets;
pub mod count;
pub mod slide;
pub mod totals;
