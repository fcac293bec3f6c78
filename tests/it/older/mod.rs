//! The older servers that managed services and distributions run: Valkey
//! 8.0 (Debian 12's backports), Valkey 8.1 and Redis 8.0 (built from Debian
//! 13's sources), each with every build that loads there (the Redis module
//! API build on all three, the native Valkey build on both Valkeys:
//! `harness::OLDER`) and with the function library alone. Not the whole
//! suite, which runs on Redis 7.0, Redis 8.2 and Valkey 9.1: the subset
//! that runs every command on each edition, replication, and the places
//! where these releases differ (`harness::versions`), chosen to add well
//! under two minutes to `make test`:
//! - every command through the module and through the library on one
//!   server, each answer as written here (`every_command`);
//! - each limiter's random differential stream, module against library:
//!   compared whole where the clock can stop (Valkey 8.1, Redis 8.0), what
//!   does not depend on the instant on Valkey 8.0's running clock;
//! - replicas with and without rl hold the primary's state after mixed
//!   traffic on every command, and a replica holds what the library wrote;
//!   a fixed window's counter stepped in place keeps its expiry;
//! - ACL key patterns on every command, and `+@ratelimit` granting every
//!   command (`ACL CAT` lists none of them on Valkey 8.0); the library's ACL
//!   recipe (docs/operations.md) running every function.

mod every_command;

use crate::harness::versions::Release;
use crate::harness::*;

/// The servers the library runs on alone: each older server once.
const LIBRARY_ONLY: [Flavor; 3] = [Flavor::Valkey80, Flavor::Valkey81, Flavor::Redis80];

#[test]
fn each_older_pairing_runs_the_release_and_build_it_names() {
    let want = |valkey, major, minor| Release {
        valkey,
        major,
        minor,
    };
    for flavor in OLDER {
        let release = match flavor {
            Flavor::Valkey80 | Flavor::Valkey80Native => want(true, 8, 0),
            Flavor::Valkey81 | Flavor::Valkey81Native => want(true, 8, 1),
            Flavor::Redis80 => want(false, 8, 0),
            other => panic!("{other:?} is not an older pairing"),
        };
        assert_eq!(
            flavor.release(),
            release,
            "{flavor:?}: {:?}",
            flavor.binary()
        );
        // Both builds load on Valkey 8.0 and 8.1, not only on Valkey 9.
        let server = Server::start(flavor);
        let info: String = redis::cmd("INFO")
            .arg("rl")
            .query(&mut server.conn())
            .unwrap();
        let build = if flavor.native_build() {
            "valkey"
        } else {
            "redis"
        };
        assert!(
            info.contains(&format!("rl_build:{build}\r\n")),
            "{flavor:?}: {info}"
        );
    }
}

#[test]
fn every_command_answers_as_written_in_both_editions() {
    for flavor in OLDER {
        every_command::in_both_editions(flavor);
    }
}

#[test]
fn slide_streams_answer_alike() {
    for flavor in OLDER {
        crate::functions::slide::streams::streams_on(flavor);
    }
}

#[test]
fn buckets_streams_answer_alike() {
    for flavor in OLDER {
        crate::functions::buckets::streams::streams_on(flavor);
    }
}

#[test]
fn throttle_streams_answer_alike() {
    for flavor in OLDER {
        crate::functions::throttle::streams::streams_on(flavor);
    }
}

#[test]
fn lease_streams_answer_alike() {
    for flavor in OLDER {
        crate::functions::leases::streams::streams_on(flavor);
    }
}

#[test]
fn replicas_hold_the_primary_state_after_mixed_traffic() {
    for flavor in OLDER {
        crate::replication::replicas_hold_the_primary_state_on(flavor);
    }
}

#[test]
fn stepped_fixed_counters_keep_their_expiry_and_replicate() {
    for flavor in OLDER {
        crate::fixed::stepped_counters_keep_their_expiry_and_replicate_on(flavor);
    }
}

#[test]
fn acl_patterns_and_the_ratelimit_category_cover_every_command() {
    for flavor in OLDER {
        let mut server = Server::start(flavor);
        crate::acl::key_patterns_restrict_every_command(&server);
        crate::acl::ratelimit_category_grants_every_command(&server);
        server.assert_alive();
    }
}

#[test]
fn the_library_alone_answers_and_replicates() {
    for flavor in LIBRARY_ONLY {
        crate::functions::servers::every_function_answers_as_its_command_on(flavor);
        crate::functions::servers::a_replica_holds_the_library_state_on(flavor);
    }
}

#[test]
fn the_library_acl_recipe_runs_every_function_and_needs_each_command() {
    for flavor in LIBRARY_ONLY {
        crate::functions::acl::the_library_recipe_runs_on(flavor);
    }
}
