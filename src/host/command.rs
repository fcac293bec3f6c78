//! The boundary between the server and a command: arguments in, reply out,
//! and no panic ever crosses it.

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::ffi;

use super::context::{string_bytes, CommandCtx};
use super::ffi::OK;
use super::reply::{write, write_error, Reply};
use crate::core::error::RlError;

/// A command body: the context and the arguments as bytes (name included).
pub type Handler = fn(&CommandCtx, &[&[u8]]) -> Result<Reply, RlError>;

/// Most commands take few arguments; those fit on the stack.
const STACK_ARGS: usize = 16;

/// Runs `handler` for one call and writes its reply or error. A panic inside
/// becomes an error reply instead of aborting the server.
pub fn run(ctx: *mut ffi::Ctx, argv: *mut *mut ffi::Str, argc: c_int, handler: Handler) -> c_int {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let argc = usize::try_from(argc).unwrap_or(0);
        let cmd = CommandCtx {
            raw: ctx,
            argv,
            argc,
        };
        if argc <= STACK_ARGS {
            let mut buf: [&[u8]; STACK_ARGS] = [&[]; STACK_ARGS];
            for (i, slot) in buf.iter_mut().enumerate().take(argc) {
                *slot = string_bytes(cmd.raw_arg(i));
            }
            handler(&cmd, &buf[..argc])
        } else {
            let args: Vec<&[u8]> = (0..argc).map(|i| string_bytes(cmd.raw_arg(i))).collect();
            handler(&cmd, &args)
        }
    }));
    match outcome {
        Ok(Ok(reply)) => write(ctx, &reply),
        Ok(Err(err)) => write_error(ctx, &err),
        Err(_) => write_error(ctx, &RlError::Internal("the command panicked")),
    }
    OK
}

/// Declares the `extern "C"` callback the server calls for a command, so
/// command files never name the server binding.
#[macro_export]
macro_rules! command_callback {
    ($callback:ident => $handler:path) => {
        extern "C" fn $callback(
            ctx: *mut $crate::host::RawCtx,
            argv: *mut *mut $crate::host::RawString,
            argc: ::std::os::raw::c_int,
        ) -> ::std::os::raw::c_int {
            $crate::host::command::run(ctx, argv, argc, $handler)
        }
    };
}
