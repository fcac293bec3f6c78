//! `RL.BLOCK SLIDE` and `RL.UNBLOCK SLIDE`: the block's member
//! ([`super::block_member`]) set or removed, the log read and checked first
//! as every call on it reads it.

use super::block_member::{block_write, write_until, SkipBlock};
use super::decide::read_ends;
use super::log::{LogView, LogWrite};
use crate::core::error::RlError;
use crate::core::options::block;

/// `RL.BLOCK SLIDE`: the log read and checked as RL.SLIDE reads it (a
/// sorted set rl did not write is refused untouched), blocked `ms` from
/// `now`; the write and the block's end.
pub fn block(log: &mut impl LogView, now: i64, ms: u64) -> Result<(LogWrite, i64), RlError> {
    let mut log = SkipBlock::new(log);
    let ends = read_ends(&mut log, now, now, 0)?;
    let write = block_write(ends.newest, now, ms);
    let until = write_until(&write);
    Ok((write, until))
}

/// `RL.UNBLOCK SLIDE`: the removal of a block that holds at `now`; `None`
/// when none holds (nothing to write: an ended block goes with the next
/// admission).
pub fn unblock(log: &mut impl LogView, now: i64) -> Result<Option<LogWrite>, RlError> {
    let mut log = SkipBlock::new(log);
    read_ends(&mut log, now, now, 0)?;
    Ok(block::in_force(log.block, now).map(|_| LogWrite::Unblock))
}
