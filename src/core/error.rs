//! Every user-facing error as a value, each with exactly one reply text.

use std::fmt;

/// An error reply. `Display` gives the exact text sent to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RlError {
    /// The argument count does not fit the command's syntax.
    WrongArity { command: &'static str },
    /// A numeric argument is not an integer in `1..=max`.
    OutOfRange { arg: &'static str, max: u64 },
    /// `COST` is larger than `limit`: such a request could never be admitted.
    CostAboveLimit,
    /// An option token the command does not know.
    UnknownOption(String),
    /// An option was given without its value.
    MissingValue { option: &'static str },
    /// The same option appeared twice.
    DuplicateOption { option: &'static str },
    /// The key holds a value of another type.
    WrongType,
    /// The key is a sorted set rl did not write (or cannot continue).
    ForeignZset,
    /// The millisecond a sliding log records new entries at numbers its
    /// members `0..1000000` and has fewer than `cost` left; the next
    /// millisecond has them all, in `retry_ms`.
    MillisecondFull {
        at: i64,
        left: i64,
        cost: u64,
        retry_ms: i64,
    },
    /// A sorted set given to a lease command without the lease header.
    NoLeaseHeader,
    /// An RL.ALL BUCKETS clause needs more than its share of the buckets
    /// one call may read.
    SharedBuckets { max: u64, total: u64 },
    /// The SLIDE clauses of one RL.ALL cost more than one call may insert.
    SlideCostTotal { max: u64 },
    /// An RL.COUNT field's total over the window would pass the largest.
    TotalTooLarge { max: u64 },
    /// A limiter's parameters after `RL.PEEK` or in an `RL.ALL` clause do
    /// not fit its syntax.
    LimiterArity {
        command: &'static str,
        usage: String,
    },
    /// `PRECISION` (given, or the key's own) is wider than the window.
    PrecisionAboveWindow,
    /// `PRECISION` so small that the window needs more than `max` buckets.
    TooManyBuckets { max: u64 },
    /// An explicit `PRECISION` differs from the bucket width the key was created with.
    PrecisionMismatch { stored: u64 },
    /// The key belongs to the other bucket command (RL.BUCKETS vs RL.COUNT).
    WrongKind {
        found: &'static str,
        wanted: &'static str,
    },
    /// The key is a hash that rl did not write (or no longer recognises).
    ForeignHash,
    /// An RL.COUNT field name that is empty, too long or has forbidden bytes.
    BadField { max_len: usize },
    /// An RL.COUNT key already counts the most distinct fields it may.
    TooManyFields { max: usize },
    /// A numeric argument is not an integer in `min..=max`.
    NotInRange {
        arg: &'static str,
        min: u64,
        max: u64,
    },
    /// `count` per `period` asks for more than one request per microsecond,
    /// the clock's resolution.
    RateTooHigh,
    /// `(max_burst + 1)` emission intervals span more than `MAX_TOLERANCE_US`.
    BurstTooLong,
    /// An `RL.THROTTLE` quantity above `max_burst + 1` could never be admitted.
    QuantityAboveBurst,
    /// The key holds a string that is not the state this command writes
    /// (for instance another limiter's state under the same key).
    ForeignString { expected: &'static str },
    /// A bug: a panic or an unexpected server answer, caught at the boundary.
    Internal(&'static str),
    /// `RL.PEEK` or an `RL.ALL` clause names no limiter we know.
    UnknownLimiter(String),
    /// The same key given to two `RL.ALL` clauses.
    DuplicateKey,
    /// `RL.ALL` names `keys` keys but gives another number of clauses.
    ClauseCount { keys: usize, clauses: usize },
    /// `RL.REFUND` names a limiter it cannot give back to.
    NotRefundable { limiter: &'static str },
    /// `RL.CHARGE` names a limiter that counts no units.
    NotChargeable { limiter: &'static str },
    /// `RL.CHARGE` without its `COST`.
    ChargeNeedsCost,
    /// `UPTO` given to a command other than the limiters' own (`command`
    /// as the error names it).
    UptoOnlyInLimiters { command: String },
    /// `BLOCK ms` given to a settling command, which never denies
    /// (`RL.REFUND`, `RL.CHARGE`; `command` as the error names it).
    BlockOnlyInLimiters { command: String },
    /// A lease id (`ID`, or `lease`) that rl could not store as one.
    BadLeaseId { arg: &'static str },
    /// `OLDEST` given to a command or limiter other than `RL.PEEK SLIDE`
    /// and `RL.PEEK BUCKETS` (`command` as the error names it).
    OldestOnlyInPeek { command: String },
    /// `RL.BLOCK` or `RL.UNBLOCK` names a limiter without blocks.
    NotBlockable {
        command: &'static str,
        limiter: &'static str,
    },
    /// An error in `RL.ALL` clause `clause` (1-based).
    InClause { clause: usize, error: Box<RlError> },
    /// A `WAIT` call refused before it waited.
    Wait(WaitError),
}

impl RlError {
    /// This error, as found in `RL.ALL` clause `clause` (1-based). A
    /// `WRONGTYPE` keeps its standard form.
    pub fn in_clause(self, clause: usize) -> RlError {
        match self {
            RlError::WrongType => RlError::WrongType,
            error => RlError::InClause {
                clause,
                error: Box::new(error),
            },
        }
    }
}

impl fmt::Display for RlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RlError::WrongArity { command } => {
                write!(f, "ERR wrong number of arguments for '{command}' command")
            }
            RlError::OutOfRange { arg, max } => {
                write!(f, "ERR {arg} must be an integer from 1 to {max}")
            }
            RlError::CostAboveLimit => write!(f, "ERR COST must not exceed limit"),
            RlError::UnknownOption(token) => write!(f, "ERR unknown option '{token}'"),
            RlError::OldestOnlyInPeek { command } => write!(
                f,
                "ERR OLDEST is an option of RL.PEEK SLIDE and RL.PEEK BUCKETS only, not of '{command}'"
            ),
            RlError::MissingValue { option } => write!(f, "ERR {option} needs a value"),
            RlError::DuplicateOption { option } => write!(f, "ERR {option} given more than once"),
            RlError::WrongType => write!(
                f,
                "WRONGTYPE Operation against a key holding the wrong kind of value"
            ),
            RlError::ForeignZset => {
                write!(f, "ERR key holds a sorted set that rl did not write")
            }
            RlError::MillisecondFull {
                at,
                left,
                cost,
                retry_ms,
            } => write!(
                f,
                "ERR the key's millisecond {at} has {left} of its 1000000 entries left, fewer than COST {cost}: nothing written, retry in {retry_ms} ms"
            ),
            RlError::NoLeaseHeader => write!(
                f,
                "ERR key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)"
            ),
            RlError::SharedBuckets { max, total } => write!(
                f,
                "ERR PRECISION too small: the window would need more than {max} buckets (RL.ALL's BUCKETS clauses share {total})"
            ),
            RlError::SlideCostTotal { max } => write!(
                f,
                "ERR the SLIDE clauses' COST must add up to at most {max}"
            ),
            RlError::TotalTooLarge { max } => write!(
                f,
                "ERR BY would take the field's total over the window past {max}"
            ),
            RlError::LimiterArity { command, usage } => write!(
                f,
                "ERR wrong number of arguments for '{command}' command (expected {usage})"
            ),
            RlError::PrecisionAboveWindow => write!(f, "ERR PRECISION must not exceed window"),
            RlError::TooManyBuckets { max } => write!(
                f,
                "ERR PRECISION too small: the window would need more than {max} buckets"
            ),
            RlError::PrecisionMismatch { stored } => write!(
                f,
                "ERR PRECISION differs from the key's bucket width ({stored} ms)"
            ),
            RlError::WrongKind { found, wanted } => {
                write!(f, "ERR key holds {found} state, not {wanted} state")
            }
            RlError::ForeignHash => write!(f, "ERR key holds a hash that rl did not write"),
            RlError::BadField { max_len } => write!(
                f,
                "ERR field must be 1 to {max_len} printable ASCII characters, without spaces or commas"
            ),
            RlError::TooManyFields { max } => {
                write!(f, "ERR key already counts {max} fields, the most it may hold")
            }
            RlError::NotInRange { arg, min, max } => {
                write!(f, "ERR {arg} must be an integer from {min} to {max}")
            }
            RlError::RateTooHigh => write!(
                f,
                "ERR count per period must not exceed 1 per microsecond (1000000 per second)"
            ),
            RlError::BurstTooLong => write!(
                f,
                "ERR max_burst too large: (max_burst + 1) * period / count must not exceed 31 years"
            ),
            RlError::QuantityAboveBurst => {
                write!(f, "ERR quantity must not exceed max_burst + 1")
            }
            RlError::ForeignString { expected } => {
                write!(f, "ERR key holds a string that is not {expected}")
            }
            RlError::Internal(what) => write!(f, "ERR rl internal error: {what}"),
            RlError::Wait(e) => e.fmt(f),
            RlError::UnknownLimiter(token) => write!(
                f,
                "ERR unknown limiter '{token}' (expected SLIDE, BUCKETS, THROTTLE, FIXED or ACQUIRE)"
            ),
            RlError::DuplicateKey => {
                write!(f, "ERR each RL.ALL clause needs its own key")
            }
            RlError::ClauseCount { keys, clauses } => {
                let given = if *clauses == 1 {
                    "1 clause was given".to_string()
                } else {
                    format!("{clauses} clauses were given")
                };
                write!(f, "ERR numkeys is {keys} but {given} (one per key)")
            }
            RlError::NotRefundable { limiter } => write!(
                f,
                "ERR RL.REFUND does not apply to {limiter} (a lease is given back with RL.RELEASE)"
            ),
            RlError::NotBlockable { command, limiter } => write!(
                f,
                "ERR {command} does not apply to {limiter} (it blocks SLIDE, BUCKETS, THROTTLE or FIXED)"
            ),
            RlError::NotChargeable { limiter } => write!(
                f,
                "ERR RL.CHARGE does not apply to {limiter} (a lease holds a slot, not units)"
            ),
            RlError::UptoOnlyInLimiters { command } => write!(
                f,
                "ERR UPTO is an option of RL.SLIDE, RL.BUCKETS, RL.THROTTLE and RL.FIXED only, not of '{command}'"
            ),
            RlError::BlockOnlyInLimiters { command } => write!(
                f,
                "ERR BLOCK is an option of the limiters' own commands and their RL.ALL clauses only, not of '{command}'"
            ),
            RlError::ChargeNeedsCost => {
                write!(f, "ERR RL.CHARGE needs COST n, the units to charge")
            }
            RlError::BadLeaseId { arg } => write!(
                f,
                "ERR {arg} must be 1 to 64 printable ASCII characters without spaces, and not an integer"
            ),
            RlError::InClause { clause, error } => {
                let text = error.to_string();
                let detail = text.strip_prefix("ERR ").unwrap_or(&text);
                write!(f, "ERR clause {clause}: {detail}")
            }
        }
    }
}

impl std::error::Error for RlError {}

/// An option token as the client sent it, made safe to echo in an error
/// line: control bytes become `?` and long tokens are cut.
pub fn token_text(bytes: &[u8]) -> String {
    const MAX_ECHO: usize = 32;
    let shown = &bytes[..bytes.len().min(MAX_ECHO)];
    let mut text: String = String::from_utf8_lossy(shown)
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if bytes.len() > MAX_ECHO {
        text.push_str("...");
    }
    text
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_text_is_safe_to_echo() {
        assert_eq!(token_text(b"COST"), "COST");
        assert_eq!(token_text(b"a\r\nb\0"), "a??b?");
        assert_eq!(token_text(&[b'x'; 40]), format!("{}...", "x".repeat(32)));
    }

    #[test]
    fn each_error_has_its_reply_text() {
        let cases: &[(RlError, &str)] = &[
            (
                RlError::WrongArity {
                    command: "rl.slide",
                },
                "ERR wrong number of arguments for 'rl.slide' command",
            ),
            (
                RlError::OutOfRange {
                    arg: "limit",
                    max: 5,
                },
                "ERR limit must be an integer from 1 to 5",
            ),
            (RlError::CostAboveLimit, "ERR COST must not exceed limit"),
            (
                RlError::UnknownOption("FOO".into()),
                "ERR unknown option 'FOO'",
            ),
            (
                RlError::MissingValue { option: "COST" },
                "ERR COST needs a value",
            ),
            (
                RlError::DuplicateOption { option: "COST" },
                "ERR COST given more than once",
            ),
            (
                RlError::WrongType,
                "WRONGTYPE Operation against a key holding the wrong kind of value",
            ),
            (
                RlError::MillisecondFull {
                    at: 1_700_000_000_000,
                    left: 0,
                    cost: 1,
                    retry_ms: 1,
                },
                "ERR the key's millisecond 1700000000000 has 0 of its 1000000 entries left, fewer than COST 1: nothing written, retry in 1 ms",
            ),
            (
                RlError::ForeignZset,
                "ERR key holds a sorted set that rl did not write",
            ),
            (
                RlError::NoLeaseHeader,
                "ERR key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)",
            ),
            (
                RlError::SharedBuckets { max: 500, total: 1000 },
                "ERR PRECISION too small: the window would need more than 500 buckets (RL.ALL's BUCKETS clauses share 1000)",
            ),
            (
                RlError::SlideCostTotal { max: 100 },
                "ERR the SLIDE clauses' COST must add up to at most 100",
            ),
            (
                RlError::TotalTooLarge { max: 9 },
                "ERR BY would take the field's total over the window past 9",
            ),
            (
                RlError::LimiterArity {
                    command: "rl.peek",
                    usage: "SLIDE key limit window [COST cost]".into(),
                },
                "ERR wrong number of arguments for 'rl.peek' command (expected SLIDE key limit window [COST cost])",
            ),
            (
                RlError::PrecisionAboveWindow,
                "ERR PRECISION must not exceed window",
            ),
            (
                RlError::TooManyBuckets { max: 1000 },
                "ERR PRECISION too small: the window would need more than 1000 buckets",
            ),
            (
                RlError::PrecisionMismatch { stored: 250 },
                "ERR PRECISION differs from the key's bucket width (250 ms)",
            ),
            (
                RlError::WrongKind {
                    found: "RL.COUNT",
                    wanted: "RL.BUCKETS",
                },
                "ERR key holds RL.COUNT state, not RL.BUCKETS state",
            ),
            (
                RlError::ForeignHash,
                "ERR key holds a hash that rl did not write",
            ),
            (
                RlError::BadField { max_len: 32 },
                "ERR field must be 1 to 32 printable ASCII characters, without spaces or commas",
            ),
            (
                RlError::TooManyFields { max: 8 },
                "ERR key already counts 8 fields, the most it may hold",
            ),
            (
                RlError::NotInRange {
                    arg: "max_burst",
                    min: 0,
                    max: 9,
                },
                "ERR max_burst must be an integer from 0 to 9",
            ),
            (
                RlError::RateTooHigh,
                "ERR count per period must not exceed 1 per microsecond (1000000 per second)",
            ),
            (
                RlError::BurstTooLong,
                "ERR max_burst too large: (max_burst + 1) * period / count must not exceed 31 years",
            ),
            (
                RlError::QuantityAboveBurst,
                "ERR quantity must not exceed max_burst + 1",
            ),
            (
                RlError::ForeignString {
                    expected: "an rl counter",
                },
                "ERR key holds a string that is not an rl counter",
            ),
            (RlError::Internal("x"), "ERR rl internal error: x"),
            (
                RlError::BadLeaseId { arg: "ID" },
                "ERR ID must be 1 to 64 printable ASCII characters without spaces, and not an integer",
            ),
            (
                RlError::WrongKind {
                    found: "RL.SLIDE",
                    wanted: "lease",
                },
                "ERR key holds RL.SLIDE state, not lease state",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.to_string(), *text);
        }
    }

    #[test]
    fn multi_limit_errors_have_their_reply_text() {
        let cases: &[(RlError, &str)] = &[
            (
                RlError::UnknownLimiter("GCRA".into()),
                "ERR unknown limiter 'GCRA' (expected SLIDE, BUCKETS, THROTTLE, FIXED or ACQUIRE)",
            ),
            (
                RlError::NotRefundable { limiter: "ACQUIRE" },
                "ERR RL.REFUND does not apply to ACQUIRE (a lease is given back with RL.RELEASE)",
            ),
            (
                RlError::NotChargeable { limiter: "ACQUIRE" },
                "ERR RL.CHARGE does not apply to ACQUIRE (a lease holds a slot, not units)",
            ),
            (
                RlError::UptoOnlyInLimiters {
                    command: "rl.peek".into(),
                },
                "ERR UPTO is an option of RL.SLIDE, RL.BUCKETS, RL.THROTTLE and RL.FIXED only, not of 'rl.peek'",
            ),
            (
                RlError::BlockOnlyInLimiters {
                    command: "rl.charge".into(),
                },
                "ERR BLOCK is an option of the limiters' own commands and their RL.ALL clauses only, not of 'rl.charge'",
            ),
            (
                RlError::ChargeNeedsCost,
                "ERR RL.CHARGE needs COST n, the units to charge",
            ),
            (
                RlError::DuplicateKey,
                "ERR each RL.ALL clause needs its own key",
            ),
            (
                RlError::ClauseCount {
                    keys: 2,
                    clauses: 3,
                },
                "ERR numkeys is 2 but 3 clauses were given (one per key)",
            ),
            (
                RlError::ClauseCount {
                    keys: 2,
                    clauses: 1,
                },
                "ERR numkeys is 2 but 1 clause was given (one per key)",
            ),
            (
                RlError::CostAboveLimit.in_clause(2),
                "ERR clause 2: COST must not exceed limit",
            ),
            (
                RlError::WrongType.in_clause(1),
                "WRONGTYPE Operation against a key holding the wrong kind of value",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.to_string(), *text);
        }
    }
}
