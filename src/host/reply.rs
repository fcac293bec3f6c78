//! Writes replies (plain data from the core) to the client.

use std::ffi::CString;

use super::ffi;

use super::ffi::api;
use crate::core::decision::Decision;
use crate::core::error::RlError;
use crate::core::gcra::CellReply;

/// What a command answers; shaped by the core, written here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Decision(Decision),
    /// redis-cell's five integers (CL.THROTTLE).
    Cell(CellReply),
}

pub(crate) fn write(ctx: *mut ffi::Ctx, reply: &Reply) {
    match reply {
        Reply::Decision(d) => write_integers(ctx, &d.to_reply()),
        Reply::Cell(c) => write_integers(ctx, &c.to_reply()),
    }
}

/// An array of integers.
fn write_integers(ctx: *mut ffi::Ctx, ints: &[i64]) {
    // SAFETY: ctx is the live context of the running command.
    unsafe {
        api!(ReplyWithArray)(ctx, ints.len() as _);
        for &v in ints {
            api!(ReplyWithLongLong)(ctx, v);
        }
    }
}

pub(crate) fn write_error(ctx: *mut ffi::Ctx, err: &RlError) {
    // Client tokens in error texts are already stripped of control bytes.
    let text = CString::new(err.to_string()).unwrap_or_else(|_| c"ERR rl error".to_owned());
    // SAFETY: ctx is live; the server copies the text.
    unsafe {
        api!(ReplyWithError)(ctx, text.as_ptr());
    }
}
