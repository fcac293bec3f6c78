//! Host-independent core: algorithms with the time passed in, argument
//! parsing into typed requests, errors and the decision as plain data.
//! Nothing here names the server binding, so it is tested without a server.

pub mod all_of;
pub mod args;
pub mod bucket_window;
pub mod buckets_request;
pub mod count_request;
pub mod decimal;
pub mod decision;
pub mod error;
pub mod event_counter;
pub mod expiry;
pub mod fixed_request;
pub mod fixed_window;
pub mod gcra;
pub mod held_buckets;
pub mod limit_request;
pub mod load_options;
pub mod slide_request;
pub mod sliding_log;
pub mod syntax;
pub mod throttle_request;
