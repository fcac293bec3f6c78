//! Only for `benches/server.rs`, which includes this file by path for its
//! servers. The tests' harness is `tests/it/harness/`; once the bench names
//! `tests/it/harness/server.rs` itself, this file goes.
#![allow(dead_code)]

#[path = "../it/harness/server.rs"]
mod server;

pub use server::*;
