//! Switching editions needs no migration: a key written by the module is
//! continued by the functions and the other way round, with the answers
//! and the state the module alone would give; an RDB written with the
//! module loads into a server that has only the functions, which go on
//! from it.

use redis::Value;

use super::differential::{fcall_line, pairs_sorted, ClockSteps, StepMs};
use super::{start_both, start_functions_only};
use crate::harness::all_commands::{mixed_lines, words};
use crate::harness::raw_resp::XorShift;
use crate::harness::*;

/// One call of each limiter on key `K`, with parameters that admit some
/// and deny some within a few steps of the clock.
fn stream_lines(rng: &mut XorShift) -> Vec<Vec<String>> {
    let cost = (1 + rng.below(3)).to_string();
    let lease = format!("job{}", rng.below(6));
    let lines: Vec<Vec<&str>> = vec![
        vec!["RL.SLIDE", "K:slide", "6", "900", "COST", &cost],
        vec![
            "RL.BUCKETS",
            "K:buckets",
            "7",
            "1000",
            "PRECISION",
            "100",
            "COST",
            &cost,
        ],
        vec![
            "RL.COUNT",
            "K:count",
            "1000",
            ["ok", "fail"][rng.below(2) as usize],
            "BY",
            &cost,
        ],
        vec!["RL.TOTALS", "K:count", "1000"],
        vec!["RL.THROTTLE", "K:throttle", "3", "4", "1000", &cost],
        vec!["CL.THROTTLE", "K:cell", "3", "4", "1", &cost],
        vec!["RL.FIXED", "K:fixed", "5", "700", "COST", &cost],
        vec!["RL.PEEK", "SLIDE", "K:slide", "6", "900"],
        vec!["RL.REFUND", "FIXED", "K:fixed", "5", "700"],
        vec!["RL.REFUND", "SLIDE", "K:slide", "6", "900"],
        vec!["RL.ACQUIRE", "K:jobs", "3", "800", "ID", &lease],
        vec!["RL.RENEW", "K:jobs", &lease, "800"],
        vec!["RL.RELEASE", "K:jobs", &lease],
    ];
    let pick = rng.below(lines.len() as u64) as usize;
    vec![lines[pick].iter().map(|a| a.to_string()).collect()]
}

/// `line` with `K` replaced by `key`.
fn on(line: &[String], key: &str) -> Vec<String> {
    line.iter()
        .map(|a| a.replace("K:", &format!("{key}:")))
        .collect()
}

/// The reply, or the error text, of a line run by the module or, `fcall`
/// true, by the functions.
/// (RL.COUNT / RL.TOTALS pairs sorted, their order being unspecified.)
fn answer(c: &mut redis::Connection, line: &[String], fcall: bool) -> Result<Value, String> {
    let sent = if fcall {
        fcall_line(&words(line))
    } else {
        line.to_vec()
    };
    pairs_sorted(&line[0], run(c, &words(&sent)).map_err(|e| error_text(&e)))
}

/// The state of every key of a line's limiter under `key`.
fn state_of(c: &mut redis::Connection, key: &str) -> Vec<(Plain, i64)> {
    [
        "slide", "buckets", "count", "throttle", "cell", "fixed", "jobs",
    ]
    .iter()
    .map(|k| plain_key(c, format!("{key}:{k}").as_bytes()))
    .collect()
}

#[test]
fn keys_passed_between_editions_answer_as_the_module_alone() {
    // The same instants for all three subjects: Valkey's stopped clock.
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let mut rng = XorShift(0x5eed_1234_abcd);
    let mut switched = 0;
    for step in 0..600 {
        ClockSteps {
            one_in: 4,
            ms: StepMs::Below(400),
        }
        .maybe_step(&server, &mut rng);
        for line in stream_lines(&mut rng) {
            // `module`: the module alone; `mixed`: whichever edition the
            // coin says, so every key passes between them many times.
            let alone = answer(&mut c, &on(&line, "module"), false);
            let by_functions = rng.below(2) == 0;
            switched += usize::from(by_functions);
            let mixed = answer(&mut c, &on(&line, "mixed"), by_functions);
            let functions = answer(&mut c, &on(&line, "functions"), true);
            assert_eq!(
                alone, mixed,
                "step {step}: {line:?} (mixed by functions: {by_functions})"
            );
            assert_eq!(alone, functions, "step {step}: {line:?} (functions alone)");
            let want = state_of(&mut c, "module");
            assert_eq!(want, state_of(&mut c, "mixed"), "step {step}: {line:?}");
            assert_eq!(want, state_of(&mut c, "functions"), "step {step}: {line:?}");
        }
    }
    assert!(
        (200..400).contains(&switched),
        "{switched} of 600 calls by the functions"
    );
}

/// The first two integers of a decision (allowed, remaining), or the whole
/// reply when it is not one: what does not depend on the instant.
fn timeless(v: &Result<Value, String>) -> String {
    match v {
        // A decision (a lease's has the id, or nil, fifth).
        Ok(Value::Array(p))
            if p.len() >= 4 && p[..4].iter().all(|x| matches!(x, Value::Int(_))) =>
        {
            format!("{:?}", &p[..2])
        }
        // RL.ALL: allowed, retry_after_ms, then each clause's decision.
        Ok(Value::Array(p)) if p.len() >= 3 && matches!(p[2], Value::Array(_)) => {
            let clauses: Vec<String> = p[2..].iter().map(|c| timeless(&Ok(c.clone()))).collect();
            format!("{:?} {clauses:?}", p[0])
        }
        other => format!("{other:?}"),
    }
}

/// The state of half a mixed workload, written by one edition (`by_module`)
/// and saved in an RDB, loaded by two servers: one with the module, one
/// with only the functions. Both go on with the other half and must give
/// the same decisions (allowed, remaining: the windows are ten minutes, so
/// the instants do not change them) and hold the same leases.
fn rdb_goes_on_in_either_edition(flavor: Flavor, by_module: bool) {
    let writer = if by_module {
        Server::start(flavor)
    } else {
        start_functions_only(flavor, &[])
    };
    let mut c = writer.conn();
    let mut lines: Vec<Vec<String>> = mixed_lines("rdb", 3)
        .into_iter()
        .map(|l| {
            l.into_iter()
                .map(|a| String::from_utf8(a).unwrap())
                .collect()
        })
        .collect();
    for id in ["a", "b", "c", "d"] {
        lines.push(words_owned(&[
            "RL.ACQUIRE",
            "rdb:jobs",
            "3",
            "600000",
            "ID",
            id,
        ]));
    }
    lines.push(words_owned(&["RL.RELEASE", "rdb:jobs", "a"]));
    lines.push(words_owned(&[
        "RL.ACQUIRE",
        "rdb:jobs",
        "3",
        "600000",
        "ID",
        "e",
    ]));
    let (first, second) = lines.split_at(lines.len() / 2);
    for line in first {
        answer(&mut c, line, !by_module).unwrap();
    }
    let saved = keyspace(&mut c);
    assert_covers_every_layout(&saved);
    let dir = writer.stop(true);
    let copy = new_dir(flavor);
    std::fs::copy(dir.join("dump.rdb"), copy.join("dump.rdb")).unwrap();
    let with_module = Server::start_in(flavor, copy, &[], true);
    let functions = Server::start_in(flavor, dir, &[], false);
    if by_module {
        // An RDB the module wrote holds no functions.
        super::load(&mut functions.conn());
    }
    let (mut m, mut f) = (with_module.conn(), functions.conn());
    assert_eq!(
        keyspace(&mut m),
        saved,
        "{flavor:?}: the RDB loads as saved"
    );
    assert_eq!(
        keyspace(&mut f),
        saved,
        "{flavor:?}: the RDB loads as saved"
    );
    for line in second {
        let want = answer(&mut m, line, false);
        let got = answer(&mut f, line, true);
        assert!(
            want.is_ok(),
            "{flavor:?}: the module refused {line:?}: {want:?}"
        );
        assert_eq!(timeless(&want), timeless(&got), "{flavor:?}: {line:?}");
    }
    let keys = |c: &mut redis::Connection| -> Vec<(Vec<u8>, &'static str)> {
        keyspace(c)
            .into_iter()
            .map(|(k, (v, _))| (k, kind(&v)))
            .collect()
    };
    assert_eq!(keys(&mut m), keys(&mut f), "{flavor:?}: the same keys");
    let leases = |c: &mut redis::Connection| -> Vec<String> {
        redis::cmd("ZRANGE")
            .arg("rdb:jobs")
            .arg(0)
            .arg(-1)
            .query(c)
            .unwrap()
    };
    assert_eq!(
        leases(&mut m),
        ["rl leases", "b", "c", "e"].map(String::from),
        "{flavor:?}"
    );
    assert_eq!(
        leases(&mut f),
        leases(&mut m),
        "{flavor:?}: the same leases held"
    );
}

#[test]
fn an_rdb_written_with_the_module_goes_on_with_only_the_functions() {
    for flavor in [Flavor::Redis7, Flavor::Redis8, Flavor::Valkey9] {
        rdb_goes_on_in_either_edition(flavor, true);
    }
}

#[test]
fn an_rdb_written_by_the_functions_goes_on_with_the_module() {
    // A managed service's data moved to a server with the module.
    for flavor in [Flavor::Redis7, Flavor::Valkey9] {
        rdb_goes_on_in_either_edition(flavor, false);
    }
}

fn kind(p: &Plain) -> &'static str {
    match p {
        Plain::String(_) => "string",
        Plain::Zset(_) => "zset",
        Plain::Hash(_) => "hash",
        Plain::Other(_) => "other",
    }
}

fn words_owned(line: &[&str]) -> Vec<String> {
    line.iter().map(|a| a.to_string()).collect()
}
