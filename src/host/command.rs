//! The boundary between the server and a command: arguments in, reply out,
//! and no panic ever crosses it.

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::ffi;

use super::context::{string_bytes, CommandCtx};
use super::ffi::OK;
use super::metrics::{Counters, Outcome};
use super::reply::{write, write_error, Reply};
use crate::core::error::RlError;

/// A command body: the context and the arguments as bytes (name included).
pub type Handler = fn(&CommandCtx, &[&[u8]]) -> Result<Reply, RlError>;

/// Most commands take few arguments; those fit on the stack.
const STACK_ARGS: usize = 16;

/// Runs `handler` for one call, writes its reply or error and counts it in
/// `counters`. A panic inside becomes an error reply instead of aborting the
/// server.
pub fn run(
    ctx: *mut ffi::Ctx,
    argv: *mut *mut ffi::Str,
    argc: c_int,
    handler: Handler,
    counters: &Counters,
) -> c_int {
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
        Ok(Ok(reply)) => {
            counters.count(Outcome::of(&reply));
            write(ctx, &reply)
        }
        Ok(Err(err)) => {
            counters.count(Outcome::Error);
            write_error(ctx, &err)
        }
        Err(_) => {
            counters.count(Outcome::Error);
            write_error(ctx, &RlError::Internal("the command panicked"))
        }
    }
    OK
}

/// Declares the `extern "C"` callback the server calls for a command, so
/// command files never name the server binding, and the command's INFO
/// counters next to it (found by the callback at INFO time).
#[macro_export]
macro_rules! command_callback {
    ($callback:ident => $handler:path) => {
        ::paste::paste! {
            extern "C" fn $callback(
                ctx: *mut $crate::host::RawCtx,
                argv: *mut *mut $crate::host::RawString,
                argc: ::std::os::raw::c_int,
            ) -> ::std::os::raw::c_int {
                $crate::host::command::run(
                    ctx,
                    argv,
                    argc,
                    $handler,
                    &[<$callback:upper _METRICS>].counters,
                )
            }

            #[::linkme::distributed_slice($crate::host::metrics::METRICS)]
            static [<$callback:upper _METRICS>]: $crate::host::metrics::CommandMetrics =
                $crate::host::metrics::CommandMetrics {
                    callback: $callback,
                    counters: $crate::host::metrics::Counters::new(),
                };
        }
    };
}
