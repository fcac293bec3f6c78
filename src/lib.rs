//! rl: rate limiting inside Redis and Valkey.
//!
//! `core` holds the algorithms and parsing (no server types), `host` the
//! server glue, `commands` one thin file per command. This file only
//! registers the module.

pub mod commands;
pub mod core;
pub mod host;

use redis_module::{redis_module, Context, RedisString, Status};

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    let args: Vec<&[u8]> = args.iter().map(RedisString::as_slice).collect();
    let options = match core::load_options::LoadOptions::parse(&args) {
        Ok(options) => options,
        Err(e) => {
            ctx.log_warning(&format!("rl: {e}; module not loaded"));
            return Status::Err;
        }
    };
    match host::load(ctx.ctx, &options) {
        Ok(()) => Status::Ok,
        Err(e) => {
            ctx.log_warning(&format!("rl: {e}"));
            Status::Err
        }
    }
}

redis_module! {
    name: "rl",
    version: 1,
    allocator: (host::alloc::ServerOrSystem, host::alloc::ServerOrSystem),
    data_types: [],
    init: init,
}
