//! `WAIT timeout_ms` taken off the lines of the limiters' own commands,
//! as each declares it ([`crate::core::options::wait`]), and refused by
//! every parser that meets it.

use crate::core::error::{RlError, WaitError};
use crate::core::lease::request::ACQUIRE;
use crate::core::options::wait::*;
use crate::core::slide::request::SYNTAX as SLIDE;
use crate::core::syntax::Syntax;
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
    use crate::core::dispatch::peek::PEEK;
    use crate::core::dispatch::LimitRequest;
    use crate::core::lease::request::AcquireRequest;
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
