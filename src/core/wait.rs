//! `WAIT timeout_ms`: the option that makes a denied call wait for its
//! admission instead of answering the denial (module only; the host holds
//! the client, `src/host/wait/`). Here: taking the option off a command
//! line before the limiter's own parser runs, its bounds and its errors.

use std::fmt;

use super::args::non_negative;
use super::error::RlError;
use super::syntax::{ArgKind, ArgSpec, Syntax};

/// The option's token.
pub const TOKEN: &str = "WAIT";

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

/// Why a `WAIT` call was refused before it waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitError {
    /// The key already has [`MAX_WAITERS_PER_KEY`] waiting clients.
    KeyFull { max: usize },
    /// The server already has [`MAX_WAITERS`] waiting clients.
    ServerFull { max: usize },
    /// In a cluster, the key a client waited on left this server (deleted,
    /// or migrated to another node) before its turn came.
    KeyLeft,
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitError::KeyFull { max } => write!(
                f,
                "ERR {max} clients already wait on this key, the most that may: retry later, or without WAIT"
            ),
            WaitError::ServerFull { max } => write!(
                f,
                "ERR {max} clients already wait on this server, the most that may: retry later, or without WAIT"
            ),
            WaitError::KeyLeft => write!(
                f,
                "UNBLOCKED the key left this server while the client waited (deleted, or migrated to another node): nothing recorded, retry on the key's owner"
            ),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lease::request::ACQUIRE;
    use crate::core::slide::request::SYNTAX as SLIDE;
    use crate::core::throttle::request::RL_THROTTLE;

    fn words(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    fn split_line(line: &str, syntax: &Syntax) -> Result<(String, Option<u64>), RlError> {
        let w = words(line);
        split(&w, syntax).map(|s| {
            let s = s.unwrap_or(Split {
                line: w.clone(),
                timeout_ms: None,
            });
            let kept: Vec<String> = s
                .line
                .iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect();
            (kept.join(" "), s.timeout_ms)
        })
    }

    #[test]
    fn the_option_comes_off_wherever_the_options_are() {
        let cases: [(&str, &Syntax, &str, Option<u64>); 9] = [
            ("RL.ACQUIRE k 4 1000", &ACQUIRE, "RL.ACQUIRE k 4 1000", None),
            (
                "RL.ACQUIRE k 4 1000 WAIT 500",
                &ACQUIRE,
                "RL.ACQUIRE k 4 1000",
                Some(500),
            ),
            (
                "RL.ACQUIRE k 4 1000 ID job WAIT 500",
                &ACQUIRE,
                "RL.ACQUIRE k 4 1000 ID job",
                Some(500),
            ),
            (
                "RL.ACQUIRE k 4 1000 wait 0 ID job",
                &ACQUIRE,
                "RL.ACQUIRE k 4 1000 ID job",
                Some(0),
            ),
            // A lease named WAIT is a lease id, not the option.
            (
                "RL.ACQUIRE k 4 1000 ID WAIT",
                &ACQUIRE,
                "RL.ACQUIRE k 4 1000 ID WAIT",
                None,
            ),
            (
                "RL.THROTTLE k 10 5 1000 WAIT 600000",
                &RL_THROTTLE,
                "RL.THROTTLE k 10 5 1000",
                Some(600_000),
            ),
            // The optional positional quantity stays.
            (
                "RL.THROTTLE k 10 5 1000 2 WAIT 7",
                &RL_THROTTLE,
                "RL.THROTTLE k 10 5 1000 2",
                Some(7),
            ),
            (
                "RL.SLIDE k 10 1000 COST 2 WAIT 9",
                &SLIDE,
                "RL.SLIDE k 10 1000 COST 2",
                Some(9),
            ),
            // Too short a line is the parser's to refuse.
            ("RL.SLIDE k", &SLIDE, "RL.SLIDE k", None),
        ];
        for (line, syntax, kept, timeout) in cases {
            assert_eq!(
                split_line(line, syntax),
                Ok((kept.to_string(), timeout)),
                "{line}"
            );
        }
    }

    #[test]
    fn a_bad_wait_is_refused_by_name() {
        let range = RlError::NotInRange {
            arg: "timeout_ms",
            min: 0,
            max: MAX_WAIT_MS,
        };
        let cases = [
            (
                "RL.ACQUIRE k 4 1000 WAIT",
                RlError::MissingValue { option: "WAIT" },
            ),
            ("RL.ACQUIRE k 4 1000 WAIT 600001", range.clone()),
            ("RL.ACQUIRE k 4 1000 WAIT -1", range.clone()),
            ("RL.ACQUIRE k 4 1000 WAIT 1.5", range.clone()),
            (
                "RL.ACQUIRE k 4 1000 WAIT 1 WAIT 2",
                RlError::DuplicateOption { option: "WAIT" },
            ),
        ];
        for (line, want) in cases {
            assert_eq!(split_line(line, &ACQUIRE), Err(want), "{line}");
        }
        assert_eq!(
            range.to_string(),
            "ERR timeout_ms must be an integer from 0 to 600000"
        );
    }

    #[test]
    fn a_parser_that_meets_wait_refuses_it_as_unknown() {
        use crate::core::any::LimitRequest;
        use crate::core::lease::request::AcquireRequest;
        use crate::core::peek::PEEK;
        let unknown = RlError::UnknownOption("WAIT".into());
        // Declared (for COMMAND DOCS), yet never read as an option: the
        // value after it is no lease id.
        assert_eq!(
            AcquireRequest::parse(&words("RL.ACQUIRE k 4 1000 WAIT 5")),
            Err(unknown.clone())
        );
        for line in [
            "ACQUIRE k 4 1000 WAIT 5",
            "SLIDE k 10 1000 WAIT 5",
            "BUCKETS k 10 1000 WAIT 5",
            "FIXED k 10 1000 WAIT 5",
        ] {
            assert_eq!(
                LimitRequest::parse(&words(line), &PEEK, true),
                Err(unknown.clone()),
                "{line}"
            );
        }
        assert_eq!(
            ACQUIRE.synopsis(),
            "RL.ACQUIRE key limit lease_ms [ID id] [WAIT timeout_ms]"
        );
    }

    #[test]
    fn each_refusal_has_its_text() {
        assert_eq!(
            RlError::Wait(WaitError::KeyFull { max: 1000 }).to_string(),
            "ERR 1000 clients already wait on this key, the most that may: retry later, or without WAIT"
        );
        assert_eq!(
            RlError::Wait(WaitError::ServerFull { max: 100000 }).to_string(),
            "ERR 100000 clients already wait on this server, the most that may: retry later, or without WAIT"
        );
        assert_eq!(
            RlError::Wait(WaitError::KeyLeft).to_string(),
            "UNBLOCKED the key left this server while the client waited (deleted, or migrated to another node): nothing recorded, retry on the key's owner"
        );
    }
}
