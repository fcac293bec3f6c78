//! `WAIT timeout_ms`: the option that makes a denied call wait for its
//! admission instead of answering the denial (module only; the host holds
//! the client, `src/host/wait/`). Here: taking the option off a command
//! line before the limiter's own parser runs, its bounds and its errors.

use crate::core::args::non_negative;
use crate::core::error::RlError;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// The option's token.
pub use crate::core::syntax::WAIT_TOKEN as TOKEN;

/// The option as the waiting commands declare it, last of their arguments,
/// so `COMMAND DOCS` lists it. Their host takes it off the line before the
/// limiter's parser runs ([`split`]); a parser that meets it anyway (in
/// `RL.PEEK`, `RL.ALL`, `RL.CHARGE`, beside `UPTO`) refuses it as an
/// unknown option (`Syntax::for_each_option`).
pub const ARG: ArgSpec = ArgSpec {
    name: c"timeout_ms",
    kind: ArgKind::Integer,
    token: Some(c"WAIT"),
    optional: true,
};

/// How the option reads in a usage line, for the commands that borrow a
/// limiter's usage without it.
pub const USAGE: &str = " [WAIT timeout_ms]";

/// Longest wait, in ms (10 minutes). A waiting client holds a connection
/// and a little memory (see docs/performance.md); a longer wait is a job
/// queue's work, not a limiter's.
pub const MAX_WAIT_MS: u64 = 600_000;

/// Most clients that may wait on one key at once. Beyond it the caller is
/// refused rather than queued: the queue is served one by one, so a longer
/// one only turns into timeouts.
pub const MAX_WAITERS_PER_KEY: usize = 1_000;

/// Most clients that may wait in one server at once.
pub const MAX_WAITERS: usize = 100_000;

/// A command line with its `WAIT timeout_ms` taken off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// The line as the limiter's parser reads it, without the option.
    pub line: Vec<&'a [u8]>,
    /// The wait asked for, in ms (`None` without the option; `Some(0)`
    /// waits for nothing: a plain call).
    pub timeout_ms: Option<u64>,
}

/// Takes `WAIT timeout_ms` off `line` (the whole command line, name
/// included). The option is found where `syntax` has options: past its
/// required arguments, where a declared option token is skipped with its
/// value (so an `ID WAIT` names a lease, it asks for no wait) and anything
/// else is an optional positional argument. Given twice, without its value,
/// or with a timeout outside `0..=MAX_WAIT_MS`, the line is refused; any
/// other error is the limiter parser's to find.
///
/// `None` (nothing allocated) for a line without the word `WAIT` past its
/// required arguments: the line as it is.
pub fn split<'a>(line: &[&'a [u8]], syntax: &Syntax) -> Result<Option<Split<'a>>, RlError> {
    let required = syntax.min_args();
    let rest = line.get(required..).unwrap_or(&[]);
    if !rest
        .iter()
        .any(|w| w.eq_ignore_ascii_case(TOKEN.as_bytes()))
    {
        return Ok(None);
    }
    let tokens: Vec<&str> = syntax
        .args
        .iter()
        .filter_map(|a| a.token.and_then(|t| t.to_str().ok()))
        .collect();
    let mut timeout_ms = None;
    let mut kept = Vec::with_capacity(line.len());
    kept.extend_from_slice(&line[..required.min(line.len())]);
    let mut at = required;
    while at < line.len() {
        let word = line[at];
        if word.eq_ignore_ascii_case(TOKEN.as_bytes()) {
            let value = line
                .get(at + 1)
                .ok_or(RlError::MissingValue { option: TOKEN })?;
            if timeout_ms.is_some() {
                return Err(RlError::DuplicateOption { option: TOKEN });
            }
            timeout_ms = Some(non_negative(value, "timeout_ms", MAX_WAIT_MS)?);
            at += 2;
            continue;
        }
        let step = if tokens
            .iter()
            .any(|t| word.eq_ignore_ascii_case(t.as_bytes()))
        {
            2
        } else {
            1
        };
        let end = (at + step).min(line.len());
        kept.extend_from_slice(&line[at..end]);
        at = end;
    }
    Ok(Some(Split {
        line: kept,
        timeout_ms,
    }))
}
