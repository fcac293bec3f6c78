//! rl against real servers: one test crate, a module per concern, the
//! shared harness in `harness/`. Every test starts its own servers (Redis
//! 7.0, Redis 8.2, Valkey 9.1 with the Redis-API and the native build; see
//! `harness::server`), so tests run in parallel. `older/` runs a subset on
//! the older servers managed services run (Valkey 8.0, Valkey 8.1, Redis
//! 8.0).

mod harness;

mod acl;
mod all_of;
mod blocks;
mod blocks_buckets;
mod blocks_slide;
mod bounded_work;
mod buckets;
mod charge;
mod cluster;
mod concurrency;
mod count;
mod denials;
mod docs_claims;
mod errors;
mod expiry;
mod failover;
mod fixed;
mod foreign_keys;
mod functions;
mod fuzz_args;
mod keyspace_events;
mod leases;
mod loading;
mod memory_pressure;
mod metadata;
mod metrics;
mod metrics_exporter;
mod older;
mod panics;
mod peek;
mod perf_page;
mod persistence;
mod refund;
mod replication;
mod scripting;
mod scripts;
mod settings;
mod shadow;
mod shadow_upto;
mod slide;
mod soak;
mod source_shape;
mod throttle;
mod upgrade;
mod upto;
mod version;
mod wait;
mod wrong_types;
