//! The function edition (`functions/rl.lua`) against the module on real
//! servers. The differential tests run a command line through the module
//! (`RL.SLIDE m:k ...`) and through the library (`FCALL rl_slide 1 f:k
//! ...`) on the same server at the same instant, and require the same
//! reply (or the same error text) and the same stored state: value and
//! absolute expiry, key by key. On Valkey the clock is stopped, so the
//! instants are identical; on Redis the streams run with the real clock
//! and compare what does not depend on the instant. The runner, the
//! comparisons, the tally and the clock steps are in [`differential`];
//! each limiter's folder (`slide/`, `buckets/`, `throttle/`, `leases/`)
//! holds only its own lines, streams and cases.

use crate::harness::Server;

pub(crate) mod acl;
mod all;
mod assembly;
pub(crate) mod buckets;
mod continuity;
pub mod differential;
pub(crate) mod leases;
mod plain_buckets;
mod same_errors;
pub(crate) mod servers;
pub(crate) mod slide;
pub(crate) mod throttle;

/// The library's source, as `FUNCTION LOAD` takes it.
pub const LIBRARY: &str = include_str!("../../../functions/rl.lua");

/// Loads (or replaces) the library on the server of `c`.
pub fn load(c: &mut redis::Connection) {
    let name: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("REPLACE")
        .arg(LIBRARY)
        .query(c)
        .expect("FUNCTION LOAD functions/rl.lua");
    assert_eq!(name, "rl");
}

/// A server with the module and the library, its clock stopped where the
/// pairing allows it (Valkey).
pub fn start_both(flavor: crate::harness::Flavor) -> Server {
    let server = Server::start_clocked(flavor, &[]);
    load(&mut server.conn());
    server
}

/// A server with the library and without the module.
pub fn start_functions_only(flavor: crate::harness::Flavor, extra: &[&str]) -> Server {
    let server = Server::start_in(flavor, crate::harness::new_dir(flavor), extra, false);
    load(&mut server.conn());
    server
}
