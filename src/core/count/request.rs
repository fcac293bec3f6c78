//! `RL.COUNT key window field [BY n] [PRECISION ms]` and
//! `RL.TOTALS key window [PRECISION ms]` parsed into typed requests.

use crate::core::args::{positive, set_once, MAX_WINDOW_MS};
use crate::core::buckets::request::precision_option_within;
use crate::core::error::RlError;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// Longest field name, in bytes.
pub const MAX_FIELD_LEN: usize = 32;

/// Most distinct field names one key counts.
pub const MAX_FIELDS: usize = 8;

/// Most buckets one RL.COUNT / RL.TOTALS window may need: fewer than
/// RL.BUCKETS' (`MAX_BUCKETS`), since each bucket holds a count per field
/// (up to [`MAX_FIELDS`]) and a call reads up to half of them. Keeps the
/// function edition under 1 ms a call.
pub const MAX_COUNT_BUCKETS: u64 = 100;

/// Largest `BY`, 10^15 (as RL.BUCKETS' `COST`: bytes, tokens).
pub const MAX_BY: u64 = 1_000_000_000_000_000;

/// Largest total a field may reach over one window (18 digits, what the
/// header reader takes); an RL.COUNT that would pass it is refused, so no
/// stored count can overflow.
pub const MAX_TOTAL: u64 = 999_999_999_999_999_999;

/// `RL.COUNT`'s name and arguments.
#[rustfmt::skip]
pub const COUNT: Syntax = Syntax {
    command: c"rl.count",
    args: &[
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"window", kind: ArgKind::Integer, token: None, optional: false },
        ArgSpec { name: c"field", kind: ArgKind::String, token: None, optional: false },
        ArgSpec { name: c"n", kind: ArgKind::Integer, token: Some(c"BY"), optional: true },
        ArgSpec { name: c"ms", kind: ArgKind::Integer, token: Some(c"PRECISION"), optional: true },
    ],
};

/// `RL.TOTALS`'s name and arguments.
#[rustfmt::skip]
pub const TOTALS: Syntax = Syntax {
    command: c"rl.totals",
    args: &[
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"window", kind: ArgKind::Integer, token: None, optional: false },
        ArgSpec { name: c"ms", kind: ArgKind::Integer, token: Some(c"PRECISION"), optional: true },
    ],
};

/// What one `RL.COUNT` call asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountRequest<'a> {
    pub window_ms: u64,
    pub field: &'a [u8],
    pub by: u64,
    /// Bucket width; `None` means the key's own, or the default for a new key.
    pub precision: Option<u64>,
}

/// What one `RL.TOTALS` call asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TotalsRequest {
    pub window_ms: u64,
    pub precision: Option<u64>,
}

/// A field name is 1 to [`MAX_FIELD_LEN`] printable ASCII bytes, no space
/// and no comma (the stored name list is comma-separated).
pub fn check_field(field: &[u8]) -> Result<(), RlError> {
    let ok = !field.is_empty()
        && field.len() <= MAX_FIELD_LEN
        && field.iter().all(|&b| b.is_ascii_graphic() && b != b',');
    if ok {
        Ok(())
    } else {
        Err(RlError::BadField {
            max_len: MAX_FIELD_LEN,
        })
    }
}

impl<'a> CountRequest<'a> {
    /// `args` is the whole command line, name and key included.
    pub fn parse(args: &[&'a [u8]]) -> Result<Self, RlError> {
        COUNT.check_count(args.len())?;
        let window_ms = positive(args[2], "window", MAX_WINDOW_MS)?;
        let field = args[3];
        check_field(field)?;
        let mut by = None;
        let mut precision = None;
        COUNT.for_each_option(args, |name, value| match name {
            "BY" => set_once(&mut by, positive(value, name, MAX_BY)?, name),
            _ => precision_option_within(value, window_ms, &mut precision, MAX_COUNT_BUCKETS),
        })?;
        Ok(CountRequest {
            window_ms,
            field,
            by: by.unwrap_or(1),
            precision,
        })
    }
}

impl TotalsRequest {
    /// `args` is the whole command line, name and key included.
    pub fn parse(args: &[&[u8]]) -> Result<Self, RlError> {
        TOTALS.check_count(args.len())?;
        let window_ms = positive(args[2], "window", MAX_WINDOW_MS)?;
        let mut precision = None;
        TOTALS.for_each_option(args, |_, value| {
            precision_option_within(value, window_ms, &mut precision, MAX_COUNT_BUCKETS)
        })?;
        Ok(TotalsRequest {
            window_ms,
            precision,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::syntax::tests::errors_name_declared_arguments;

    fn split(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    #[test]
    fn valid_count_lines() {
        // (line, (window_ms, field, by, precision))
        type Row<'a> = (&'a str, (u64, &'a [u8], u64, Option<u64>));
        let cases: [Row; 6] = [
            ("RL.COUNT k 1000 ok", (1000, b"ok", 1, None)),
            // 100 buckets, the most an RL.COUNT window may need.
            ("RL.COUNT k 100 ok PRECISION 1", (100, b"ok", 1, Some(1))),
            ("RL.COUNT k 1000 failure BY 5", (1000, b"failure", 5, None)),
            ("RL.COUNT k 1000 BY by 2", (1000, b"BY", 2, None)),
            (
                "RL.COUNT k 1000 a:b-c_d.e precision 10 by 1000000",
                (1000, b"a:b-c_d.e", 1_000_000, Some(10)),
            ),
            (
                "RL.COUNT k 1000 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                (1000, b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 1, None),
            ),
        ];
        for (line, (window_ms, field, by, precision)) in cases {
            assert_eq!(
                CountRequest::parse(&split(line)),
                Ok(CountRequest {
                    window_ms,
                    field,
                    by,
                    precision
                }),
                "{line}"
            );
        }
    }

    #[test]
    fn invalid_count_lines_name_the_problem() {
        let range = |arg, max| RlError::OutOfRange { arg, max };
        let bad_field = RlError::BadField {
            max_len: MAX_FIELD_LEN,
        };
        let cases = [
            (
                "RL.COUNT k 1000",
                RlError::WrongArity {
                    command: "rl.count",
                },
            ),
            ("RL.COUNT k 0 ok", range("window", MAX_WINDOW_MS)),
            ("RL.COUNT k 1000 a,b", bad_field.clone()),
            ("RL.COUNT k 1000 a\tb", bad_field.clone()),
            ("RL.COUNT k 1000 é", bad_field.clone()),
            (
                "RL.COUNT k 1000 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                bad_field.clone(),
            ),
            ("RL.COUNT k 1000 ok BY 0", range("BY", MAX_BY)),
            (
                "RL.COUNT k 1000 ok BY 1000000000000001",
                range("BY", MAX_BY),
            ),
            (
                "RL.COUNT k 1000 ok BY",
                RlError::MissingValue { option: "BY" },
            ),
            (
                "RL.COUNT k 1000 ok BY 1 BY 2",
                RlError::DuplicateOption { option: "BY" },
            ),
            (
                "RL.COUNT k 1000 ok PRECISION 2000",
                RlError::PrecisionAboveWindow,
            ),
            (
                "RL.COUNT k 1000000 ok PRECISION 10",
                RlError::TooManyBuckets {
                    max: MAX_COUNT_BUCKETS,
                },
            ),
            (
                "RL.COUNT k 101 ok PRECISION 1",
                RlError::TooManyBuckets {
                    max: MAX_COUNT_BUCKETS,
                },
            ),
            (
                "RL.COUNT k 1000 ok COST 1",
                RlError::UnknownOption("COST".into()),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(CountRequest::parse(&split(line)), Err(want), "{line}");
        }
        assert_eq!(
            CountRequest::parse(&[&b"RL.COUNT"[..], b"k", b"1000", b""]),
            Err(bad_field)
        );
    }

    #[test]
    fn totals_lines() {
        assert_eq!(
            TotalsRequest::parse(&split("RL.TOTALS k 1000")),
            Ok(TotalsRequest {
                window_ms: 1000,
                precision: None
            })
        );
        assert_eq!(
            TotalsRequest::parse(&split("RL.TOTALS k 1000 PRECISION 100")),
            Ok(TotalsRequest {
                window_ms: 1000,
                precision: Some(100)
            })
        );
        let cases = [
            (
                "RL.TOTALS k",
                RlError::WrongArity {
                    command: "rl.totals",
                },
            ),
            (
                "RL.TOTALS k x",
                RlError::OutOfRange {
                    arg: "window",
                    max: MAX_WINDOW_MS,
                },
            ),
            (
                "RL.TOTALS k 1000 PRECISION 0",
                RlError::OutOfRange {
                    arg: "PRECISION",
                    max: MAX_WINDOW_MS,
                },
            ),
            ("RL.TOTALS k 1000 BY 1", RlError::UnknownOption("BY".into())),
            (
                "RL.TOTALS k 101 PRECISION 1",
                RlError::TooManyBuckets {
                    max: MAX_COUNT_BUCKETS,
                },
            ),
        ];
        for (line, want) in cases {
            assert_eq!(TotalsRequest::parse(&split(line)), Err(want), "{line}");
        }
    }

    #[test]
    fn errors_name_the_declared_arguments() {
        errors_name_declared_arguments(&COUNT, "RL.COUNT k 1000 ok", |a| {
            CountRequest::parse(a).map(|_| ())
        });
        errors_name_declared_arguments(&TOTALS, "RL.TOTALS k 1000", TotalsRequest::parse);
    }
}
