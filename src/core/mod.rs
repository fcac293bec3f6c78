//! Host-independent core: algorithms with the time passed in, argument
//! parsing into typed requests, errors and the decision as plain data.
//! Nothing here names the server binding, so it is tested without a server.
//!
//! One folder per limiter, named as its command, holding its request, its
//! state layout and its decision: [`slide`], [`buckets`], [`count`],
//! [`throttle`], [`fixed`]. Each request implements [`limiter::Limiter`];
//! [`any`] names any limiter by its token, for [`peek`], [`all`] and
//! [`refund`] and [`charge`].

pub mod args;
pub mod buckets;
pub mod count;
pub mod decimal;
pub mod decision;
pub mod dispatch;
pub mod error;
pub mod expiry;
pub mod fixed;
pub mod lease;
pub mod limiter;
pub mod load_options;
pub mod options;
pub mod prefixes;
#[cfg(test)]
mod properties;
pub mod slide;
pub mod string_key;
pub mod syntax;
pub mod throttle;
