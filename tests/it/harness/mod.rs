//! The shared harness: real servers (`server`), typed calls of rl's
//! commands (`calls`), reading the stored state (`state`) and the AOF
//! (`aof`), every command in one table (`all_commands`), a three-node
//! cluster, the fixture modules, a raw RESP connection and RESP reply
//! readers, and where the servers' releases differ (`versions`).

pub mod all_commands;
pub mod aof;
pub mod calls;
pub mod cluster;
pub mod exporter;
pub mod fixtures;
pub mod raw_resp;
pub mod resp;
pub mod server;
pub mod state;
pub mod versions;

pub use aof::*;
pub use calls::*;
pub use server::*;
pub use state::*;
