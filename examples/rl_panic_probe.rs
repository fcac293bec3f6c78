//! Test fixture: rl with one more command, `RL.TEST.PANIC key`, whose body
//! panics. The real-server tests load this build to see a panic in a
//! command become an error reply while the server runs on. It links the
//! same library as `librl.so` and adds its command to the same
//! declarations, so the panic goes through rl's own callback boundary;
//! `librl.so`, the module users load, has no such command.

use rl::core::error::RlError;
use rl::core::syntax::{ArgKind, ArgSpec, Syntax};
use rl::host::context::CommandCtx;
use rl::host::registry::KeyAccess;
use rl::host::reply::Reply;

fn panics(_cmd: &CommandCtx, args: &[&[u8]]) -> Result<Reply, RlError> {
    panic!("RL.TEST.PANIC was called with {} arguments", args.len() - 1);
}

#[rustfmt::skip]
static PANIC_SYNTAX: Syntax = Syntax {
    command: c"rl.test.panic",
    args: &[ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false }],
};

rl::command!(PANIC_COMMAND = {
    syntax: &PANIC_SYNTAX,
    flags: c"readonly",
    summary: c"Test only: panics.",
    complexity: c"O(1)",
    since: c"0.1.0",
    key: KeyAccess::ReadOnly,
    handler: panics,
});
