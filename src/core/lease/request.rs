//! `RL.ACQUIRE key limit lease_ms [ID id]`, `RL.RELEASE key lease` and
//! `RL.RENEW key lease lease_ms` parsed into typed requests.

use super::set::LeaseId;
use crate::core::args::{positive, set_once};
use crate::core::error::RlError;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// Most leases one key may hold at once (`limit`). Leases are counted by
/// score (O(log N)), so the bound is about memory, as RL.SLIDE's is.
pub const MAX_LIMIT: u64 = 1_000_000;

/// Longest lease, in ms (about 31.7 years, as the windows' bound): every
/// expiry `now + lease_ms` stays a whole number that a double holds exactly.
pub const MAX_LEASE_MS: u64 = crate::core::args::MAX_WINDOW_MS;

/// `RL.ACQUIRE`'s name and arguments.
#[rustfmt::skip]
pub const ACQUIRE: Syntax = Syntax {
    command: c"rl.acquire",
    args: &[
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"limit", kind: ArgKind::Integer, token: None, optional: false },
        ArgSpec { name: c"lease_ms", kind: ArgKind::Integer, token: None, optional: false },
        ArgSpec { name: c"id", kind: ArgKind::String, token: Some(c"ID"), optional: true },
        crate::core::options::wait::ARG,
    ],
};

/// `RL.RELEASE`'s name and arguments.
#[rustfmt::skip]
pub const RELEASE: Syntax = Syntax {
    command: c"rl.release",
    args: &[
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"lease", kind: ArgKind::String, token: None, optional: false },
    ],
};

/// `RL.RENEW`'s name and arguments.
#[rustfmt::skip]
pub const RENEW: Syntax = Syntax {
    command: c"rl.renew",
    args: &[
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"lease", kind: ArgKind::String, token: None, optional: false },
        ArgSpec { name: c"lease_ms", kind: ArgKind::Integer, token: None, optional: false },
    ],
};

/// One `RL.ACQUIRE`: take a slot of `limit` until `now + lease_ms`, under
/// the caller's id or one rl makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcquireRequest {
    pub limit: u64,
    pub lease_ms: u64,
    pub id: Option<LeaseId>,
}

/// One `RL.RELEASE`: free the slot held by `lease`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleaseRequest {
    pub lease: LeaseId,
}

/// One `RL.RENEW`: extend the held `lease` to `now + lease_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenewRequest {
    pub lease: LeaseId,
    pub lease_ms: u64,
}

impl AcquireRequest {
    /// `args` is the whole command line, name and key included.
    pub fn parse(args: &[&[u8]]) -> Result<Self, RlError> {
        ACQUIRE.check_count(args.len())?;
        let limit = positive(args[2], "limit", MAX_LIMIT)?;
        let lease_ms = positive(args[3], "lease_ms", MAX_LEASE_MS)?;
        let mut id = None;
        ACQUIRE.for_each_option(args, |name, value| {
            set_once(&mut id, LeaseId::named(value, name)?, name)
        })?;
        Ok(AcquireRequest {
            limit,
            lease_ms,
            id,
        })
    }
}

impl ReleaseRequest {
    pub fn parse(args: &[&[u8]]) -> Result<Self, RlError> {
        RELEASE.check_count(args.len())?;
        Ok(ReleaseRequest {
            lease: LeaseId::named(args[2], "lease")?,
        })
    }
}

impl RenewRequest {
    pub fn parse(args: &[&[u8]]) -> Result<Self, RlError> {
        RENEW.check_count(args.len())?;
        let lease = LeaseId::named(args[2], "lease")?;
        let lease_ms = positive(args[3], "lease_ms", MAX_LEASE_MS)?;
        Ok(RenewRequest { lease, lease_ms })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lease::set::MAX_ID_LEN;
    use crate::core::syntax::tests::errors_name_declared_arguments;

    fn split(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    fn id(s: &str) -> LeaseId {
        LeaseId::named(s.as_bytes(), "ID").unwrap()
    }

    #[test]
    fn valid_lines() {
        let acquire = |limit, lease_ms, id| AcquireRequest {
            limit,
            lease_ms,
            id,
        };
        let cases = [
            ("RL.ACQUIRE k 3 30000", acquire(3, 30_000, None)),
            (
                "RL.ACQUIRE k 3 30000 ID job-7",
                acquire(3, 30_000, Some(id("job-7"))),
            ),
            (
                "RL.ACQUIRE k 3 30000 id 12a",
                acquire(3, 30_000, Some(id("12a"))),
            ),
            (
                "RL.ACQUIRE k 1000000 1000000000000",
                acquire(1_000_000, 1_000_000_000_000, None),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(AcquireRequest::parse(&split(line)), Ok(want), "{line}");
        }
        assert_eq!(
            ReleaseRequest::parse(&split("RL.RELEASE k job-7")),
            Ok(ReleaseRequest { lease: id("job-7") })
        );
        assert_eq!(
            RenewRequest::parse(&split("RL.RENEW k job-7 500")),
            Ok(RenewRequest {
                lease: id("job-7"),
                lease_ms: 500
            })
        );
    }

    #[test]
    fn invalid_lines_name_the_problem() {
        let range = |arg, max| RlError::OutOfRange { arg, max };
        let long = format!("RL.ACQUIRE k 3 100 ID {}", "x".repeat(MAX_ID_LEN + 1));
        let cases: Vec<(String, RlError)> = vec![
            (
                "RL.ACQUIRE k 3".into(),
                RlError::WrongArity {
                    command: "rl.acquire",
                },
            ),
            ("RL.ACQUIRE k 0 100".into(), range("limit", MAX_LIMIT)),
            ("RL.ACQUIRE k 1000001 100".into(), range("limit", MAX_LIMIT)),
            ("RL.ACQUIRE k 3 0".into(), range("lease_ms", MAX_LEASE_MS)),
            (
                "RL.ACQUIRE k 3 1000000000001".into(),
                range("lease_ms", MAX_LEASE_MS),
            ),
            (
                "RL.ACQUIRE k 3 100 ID".into(),
                RlError::MissingValue { option: "ID" },
            ),
            (
                "RL.ACQUIRE k 3 100 ID a ID b".into(),
                RlError::DuplicateOption { option: "ID" },
            ),
            (
                "RL.ACQUIRE k 3 100 COST 2".into(),
                RlError::UnknownOption("COST".into()),
            ),
            (
                "RL.ACQUIRE k 3 100 ID 42".into(),
                RlError::BadLeaseId { arg: "ID" },
            ),
            (
                "RL.ACQUIRE k 3 100 ID -42".into(),
                RlError::BadLeaseId { arg: "ID" },
            ),
            (long, RlError::BadLeaseId { arg: "ID" }),
        ];
        for (line, want) in cases {
            assert_eq!(AcquireRequest::parse(&split(&line)), Err(want), "{line}");
        }
        assert_eq!(
            ReleaseRequest::parse(&split("RL.RELEASE k")),
            Err(RlError::WrongArity {
                command: "rl.release"
            })
        );
        assert_eq!(
            ReleaseRequest::parse(&split("RL.RELEASE k a b")),
            Err(RlError::WrongArity {
                command: "rl.release"
            })
        );
        assert_eq!(
            ReleaseRequest::parse(&[b"RL.RELEASE", b"k", b"a\x01"]),
            Err(RlError::BadLeaseId { arg: "lease" })
        );
        assert_eq!(
            RenewRequest::parse(&split("RL.RENEW k a 0")),
            Err(range("lease_ms", MAX_LEASE_MS))
        );
        assert_eq!(
            RenewRequest::parse(&split("RL.RENEW k 7 10")),
            Err(RlError::BadLeaseId { arg: "lease" })
        );
    }

    #[test]
    fn errors_name_the_declared_arguments() {
        errors_name_declared_arguments(&ACQUIRE, "RL.ACQUIRE k 3 1000", AcquireRequest::parse);
        errors_name_declared_arguments(&RENEW, "RL.RENEW k a 1000", RenewRequest::parse);
    }

    #[test]
    fn synopses() {
        assert_eq!(
            ACQUIRE.synopsis(),
            "RL.ACQUIRE key limit lease_ms [ID id] [WAIT timeout_ms]"
        );
        assert_eq!(RELEASE.synopsis(), "RL.RELEASE key lease");
        assert_eq!(RENEW.synopsis(), "RL.RENEW key lease lease_ms");
    }
}
