//! The options every limiter shares, parsed here for all of them:
//! `COST cost` and `BLOCK ms` ([`cost_block_options`], a block's meaning in
//! [`block`]), `WAIT timeout_ms` ([`wait`]), `UPTO` ([`upto`]). Nothing
//! here names a limiter: the limiters' folders import it.

pub mod block;
pub mod upto;
pub mod wait;

use crate::core::args::{positive, set_once, MAX_WINDOW_MS};
use crate::core::error::RlError;
use crate::core::syntax::Syntax;

/// The options `[COST cost] [BLOCK ms]` of a command declared by `syntax`
/// (whose options are among these): `cost` in `1..=max_cost`, default 1;
/// the block's length in ms, if given. Inlined, so the option scan runs
/// over the caller's constant declaration.
#[inline(always)]
pub fn cost_block_options(
    syntax: &Syntax,
    args: &[&[u8]],
    max_cost: u64,
) -> Result<(u64, Option<u64>), RlError> {
    let (mut cost, mut block) = (None, None);
    syntax.for_each_option(args, |name, value| {
        if name == "BLOCK" {
            set_once(&mut block, block::block_option(name, value)?, name)
        } else {
            set_once(&mut cost, positive(value, name, max_cost)?, name)
        }
    })?;
    Ok((cost.unwrap_or(1), block))
}

/// `limit window [COST cost] [BLOCK ms]` at arguments 2 and on, as RL.SLIDE
/// and RL.FIXED take them: `(limit, window_ms, cost, block_ms)`, the cost
/// at most `limit` unless `up_to` (an `UPTO` request takes what fits of any
/// cost). Inlined, so each command's parser is specialised to its
/// declaration.
#[inline(always)]
pub fn limit_window_cost(
    syntax: &Syntax,
    args: &[&[u8]],
    max_limit: u64,
    max_cost: u64,
    up_to: bool,
) -> Result<(u64, u64, u64, Option<u64>), RlError> {
    syntax.check_count(args.len())?;
    let limit = positive(args[2], "limit", max_limit)?;
    let window_ms = positive(args[3], "window", MAX_WINDOW_MS)?;
    let (cost, block_ms) = cost_block_options(syntax, args, max_cost)?;
    if cost > limit && !up_to {
        return Err(RlError::CostAboveLimit);
    }
    Ok((limit, window_ms, cost, block_ms))
}
