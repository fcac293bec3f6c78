//! One short declaration per command: parse (core), run the limiter over
//! its key (`host::limit`: decide in the core, record in the host), reply.
//! Commands never call each other.

pub mod acquire;
pub mod all;
pub mod block;
pub mod buckets;
pub mod charge;
pub mod cl_throttle;
pub mod count;
pub mod fixed;
pub mod peek;
pub mod refund;
pub mod release;
pub mod renew;
pub mod slide;
pub mod throttle;
pub mod totals;
pub mod unblock;
