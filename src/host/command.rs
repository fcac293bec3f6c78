//! The boundary between the server and a command: arguments in, reply out,
//! and no panic ever crosses it.

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::ffi;

use super::context::CommandCtx;
use super::ffi::string_bytes;
use super::ffi::OK;
use super::metrics::{self, Ended};
use super::prefix_stats;
use super::registry::CommandSpec;
use super::reply::{write, write_error, Reply};
use crate::core::error::RlError;

/// Most commands take few arguments; those fit on the stack.
const STACK_ARGS: usize = 16;

/// Runs `f`, turning a panic into `Err` with the panic's message. Every
/// function the server calls runs its body through this (or `run`), so no
/// unwinding reaches C.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned())
    })
}

/// What the handler's result (or its panic) is answered with and counted
/// as. By reference: the reply is written from where the handler left it,
/// not moved again (about a hundred bytes, on every call).
fn answer(result: &Result<Result<Reply, RlError>, String>) -> (Ended, Result<&Reply, &RlError>) {
    match result {
        Ok(Ok(reply)) => (Ended::of(reply), Ok(reply)),
        Ok(Err(err)) => (Ended::Error, Err(err)),
        Err(_) => (Ended::Error, Err(&PANICKED)),
    }
}

const PANICKED: RlError = RlError::Internal("the command panicked");

/// Runs the command's handler for one call, writes its reply or error and
/// counts it in the command's counters. A panic inside becomes an error
/// reply instead of aborting the server.
///
/// The reply is written only after the handler returned, and writing calls
/// nothing that can panic (values are computed before the first server
/// call, and `api!` cannot fail after the load), so a reply is never left
/// half written: a truncated reply would break the client's connection,
/// or the server itself when a script reads it.
pub fn run(ctx: *mut ffi::Ctx, argv: *mut *mut ffi::Str, argc: c_int, spec: &CommandSpec) -> c_int {
    let handler = spec.handler;
    let result = catch(|| {
        let argc = usize::try_from(argc).unwrap_or(0);
        let cmd = CommandCtx {
            raw: ctx,
            argv,
            argc,
        };
        if argc <= STACK_ARGS {
            let mut buf: [&[u8]; STACK_ARGS] = [&[]; STACK_ARGS];
            for (i, slot) in buf[..argc].iter_mut().enumerate() {
                // SAFETY: argv holds argc live strings for the whole call
                // (`raw_arg` without its bounds check, which `i < argc` is).
                *slot = string_bytes(unsafe { *cmd.argv.add(i) });
            }
            handler(&cmd, &buf[..argc])
        } else {
            let args: Vec<&[u8]> = (0..argc).map(|i| string_bytes(cmd.raw_arg(i))).collect();
            handler(&cmd, &args)
        }
    });
    if let Err(message) = &result {
        log_panic(ctx, argv, argc, message);
    }
    let (outcome, reply) = answer(&result);
    spec.counters.count(outcome);
    if metrics::extra() != 0 {
        after_call(argv, argc, spec, outcome);
    }
    // A backstop only: nothing in here can panic.
    let _ = catch(|| match reply {
        Ok(reply) => write(ctx, reply),
        Err(err) => write_error(ctx, err),
    });
    OK
}

/// The counting only shadow mode or `rl.stats-prefixes` asks for: kept out
/// of [`run`] so a call with neither pays one load.
#[cold]
#[inline(never)]
pub(crate) fn after_call(
    argv: *mut *mut ffi::Str,
    argc: c_int,
    spec: &CommandSpec,
    outcome: Ended,
) {
    // An error after the shadow admission (a failed write) is an error.
    let shadowed = metrics::take_shadowed() && outcome == Ended::Admitted;
    if shadowed {
        spec.counters.count_shadow_denied();
    }
    if metrics::extra() & metrics::PREFIX_STATS != 0 {
        let argc = usize::try_from(argc).unwrap_or(0);
        let _ = catch(|| prefix_stats::count(argv, argc, spec.key, outcome, shadowed));
    }
}

/// A panic is a bug: the log says which command and why, once per call.
fn log_panic(ctx: *mut ffi::Ctx, argv: *mut *mut ffi::Str, argc: c_int, message: &str) {
    let _ = catch(|| {
        let name = if argc > 0 {
            // SAFETY: argv holds argc live strings for the whole call.
            String::from_utf8_lossy(string_bytes(unsafe { *argv })).into_owned()
        } else {
            String::new()
        };
        let name: String = name
            .chars()
            .filter(char::is_ascii_graphic)
            .take(64)
            .collect();
        let message: String = message.chars().take(200).collect();
        ffi::log(
            ctx,
            c"warning",
            &format!("{name} panicked ({message}); the client got an error reply. This is a bug in rl: please report it."),
        );
    });
}

/// Declares a command: `command!(NAME = { syntax, flags, summary,
/// complexity, since, key, handler })`, the [`CommandSpec`] fields but the
/// server callback and the counters, which it adds. The callback runs the
/// handler through [`run`] with this
/// declaration, so command files never name the server binding.
#[macro_export]
macro_rules! command {
    ($name:ident = { $($field:ident: $value:expr),* $(,)? }) => {
        #[::linkme::distributed_slice($crate::host::registry::COMMANDS)]
        static $name: $crate::host::registry::CommandSpec = $crate::host::registry::CommandSpec {
            $($field: $value,)*
            callback: {
                extern "C" fn callback(
                    ctx: *mut $crate::host::RawCtx,
                    argv: *mut *mut $crate::host::RawString,
                    argc: ::std::os::raw::c_int,
                ) -> ::std::os::raw::c_int {
                    $crate::host::command::run(ctx, argv, argc, &$name)
                }
                callback
            },
            counters: $crate::host::metrics::Counters::new(),
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decision::Decision;

    #[test]
    fn a_panic_is_caught_with_its_message() {
        assert_eq!(catch(|| 7), Ok(7));
        assert_eq!(catch(|| -> u8 { panic!("boom") }), Err("boom".to_owned()));
        let n = 3;
        assert_eq!(
            catch(|| -> u8 { panic!("boom {n}") }),
            Err("boom 3".to_owned())
        );
        assert_eq!(
            catch(|| std::panic::panic_any(5_u8)),
            Err("no message".to_owned())
        );
    }

    #[test]
    fn a_panicking_command_is_answered_with_an_error_and_counted_as_one() {
        let result = catch(|| -> Result<Reply, RlError> { panic!("bug") });
        let (outcome, reply) = answer(&result);
        assert_eq!(outcome, Ended::Error);
        let err = reply.unwrap_err();
        assert_eq!(
            err.to_string(),
            "ERR rl internal error: the command panicked"
        );

        let admitted = Reply::Decision(Decision {
            allowed: true,
            remaining: 1,
            retry_after_ms: 0,
            reset_after_ms: 10,
            blocked: false,
        });
        let result = Ok(Ok(admitted.clone()));
        let (outcome, reply) = answer(&result);
        assert_eq!((outcome, reply), (Ended::Admitted, Ok(&admitted)));
        let result = Ok(Err(RlError::DuplicateKey));
        let (outcome, reply) = answer(&result);
        assert_eq!(
            (outcome, reply),
            (Ended::Error, Err(&RlError::DuplicateKey))
        );
    }
}
