//! Writes replies (plain data from the core) to the client.

use std::ffi::CString;

use super::ffi;

use super::ffi::{api, optional_api};
use crate::core::decision::Decision;
use crate::core::error::RlError;

/// What a command answers; shaped by the core, written here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Decision(Decision),
    /// Name/total pairs: a map in RESP3, a flat array in RESP2.
    Totals(Vec<(Vec<u8>, u64)>),
}

pub(crate) fn write(ctx: *mut ffi::Ctx, reply: &Reply) {
    // SAFETY: ctx is the live context of the running command.
    unsafe {
        match reply {
            Reply::Decision(d) => {
                let ints = d.to_reply();
                api!(ReplyWithArray)(ctx, ints.len() as _);
                for v in ints {
                    api!(ReplyWithLongLong)(ctx, v);
                }
            }
            Reply::Totals(pairs) => {
                // The server writes a map as a flat array for RESP2 clients;
                // a server without the call gets the flat array directly.
                match optional_api!(ReplyWithMap) {
                    Some(map) => map(ctx, pairs.len() as _),
                    None => api!(ReplyWithArray)(ctx, (pairs.len() * 2) as _),
                };
                for (name, total) in pairs {
                    api!(ReplyWithStringBuffer)(ctx, name.as_ptr().cast(), name.len());
                    api!(ReplyWithLongLong)(ctx, i64::try_from(*total).unwrap_or(i64::MAX));
                }
            }
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
