//! Keys rl did not write (sorted sets of the shape of leases, RL.SLIDE logs)
//! refused by every lease command of both editions and left as they were;
//! the foreign keys the streams also run on.

use crate::functions::start_both;
use crate::harness::Flavor;

use super::{ints, on_both, same};

/// Foreign keys, the same under `m:` and `f:`: a string, a hash, a list,
/// sorted sets rl could not have written, an RL.SLIDE log. `at` is a
/// far-away absolute expiry.
pub(super) fn make_foreign(c: &mut redis::Connection, at: i64) {
    let at = at.to_string();
    on_both(c, &["SET", "str", "v"]);
    on_both(c, &["HSET", "hash", "h", "x"]);
    on_both(c, &["RPUSH", "list", "x"]);
    // No TTL.
    on_both(c, &["ZADD", "nottl", "5000", "w1"]);
    // An RL.SLIDE log: integer members numbered from their score.
    on_both(
        c,
        &["ZADD", "slog", "1000", "1000000000", "2000", "2000000003"],
    );
    on_both(c, &["PEXPIREAT", "slog", &at]);
    let bad: [(&str, &[&str]); 8] = [
        ("fint", &["ZADD", "fint", "99999999999999", "17"]),
        ("ffrac", &["ZADD", "ffrac", "99999999999999.5", "w1"]),
        (
            "fzero",
            &["ZADD", "fzero", "0", "w1", "99999999999999", "w2"],
        ),
        ("fneg", &["ZADD", "fneg", "-5", "w9"]),
        ("fbig", &["ZADD", "fbig", "9007199254740994", "w1"]),
        ("finf", &["ZADD", "finf", "+inf", "w1"]),
        ("fspace", &["ZADD", "fspace", "99999999999999", "a b"]),
        (
            "fslide2",
            &["ZADD", "fslide2", "99999999999999", "w1", "1", "1000005"],
        ),
    ];
    // Each without the lease header (refused for that), and with it as
    // `h<key>`, where its entries are checked as a call reads them.
    for (key, line) in bad {
        let with = format!("h{key}");
        let mut headed: Vec<&str> = line.to_vec();
        headed[1] = &with;
        headed.extend(["0", "rl leases"]);
        on_both(c, line);
        on_both(c, &headed);
        on_both(c, &["PEXPIREAT", key, &at]);
        on_both(c, &["PEXPIREAT", &with, &at]);
    }
    // The earliest held entry foreign, the latest an RL.SLIDE entry: the
    // order of the reads names the error (the earliest is read first).
    let late: i64 = at.parse::<i64>().unwrap() + 5;
    let slide_member = (late * 1_000_000 + 3).to_string();
    on_both(c, &["ZADD", "forder", "0", "rl leases"]);
    on_both(c, &["ZADD", "forder", &(late - 1).to_string(), "17"]);
    on_both(c, &["ZADD", "forder", &late.to_string(), &slide_member]);
    on_both(c, &["PEXPIREAT", "forder", &at]);
    // The header at another score is no header.
    on_both(
        c,
        &["ZADD", "fhead", "5", "rl leases", "99999999999999", "w1"],
    );
    on_both(c, &["PEXPIREAT", "fhead", &at]);
}

pub(super) const FOREIGN: &[&str] = &[
    "forder", "str", "hash", "list", "nottl", "slog", "fint", "ffrac", "fzero", "fneg", "fbig",
    "finf", "fspace", "fslide2", "hfint", "hffrac", "hfzero", "hfneg", "hfbig", "hfinf", "hfspace",
    "hfslide2", "fhead",
];

#[test]
fn foreign_keys_and_slide_logs_are_refused_and_left_untouched() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    make_foreign(c, server.clock_ms() + 1_000_000);
    // fslide2: a lease first (read first by the earliest-held read), then
    // a slide entry: the order of reads decides the error.
    let foreign = "ERR key holds a sorted set that rl did not write";
    let no_header = "ERR key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)";
    let slide = "ERR key holds RL.SLIDE state, not lease state";
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    // (With the header, `hfzero`'s and `hfneg`'s entries at or below 0
    // are never read: they are not leases, nor counted, nor removed.)
    let want = [
        ("str", wrongtype),
        ("hash", wrongtype),
        ("list", wrongtype),
        ("nottl", foreign),
        ("slog", slide),
        ("fint", no_header),
        ("ffrac", no_header),
        ("fzero", no_header),
        ("fneg", no_header),
        ("fbig", no_header),
        ("finf", no_header),
        ("fspace", no_header),
        ("fslide2", slide),
        ("fhead", no_header),
        ("hfint", foreign),
        ("hffrac", foreign),
        ("hfbig", foreign),
        ("hfinf", foreign),
        ("hfspace", foreign),
        ("hfslide2", slide),
        ("forder", foreign),
    ];
    for (key, text) in want {
        for line in [
            vec!["RL.ACQUIRE", key, "3", "1000"],
            vec!["RL.ACQUIRE", key, "3", "1000", "ID", "w1"],
            vec!["RL.ALL", "1", key, "ACQUIRE", "3", "1000"],
        ] {
            let e = same(c, &line).unwrap_err();
            let want = match line[0] {
                "RL.ALL" if text != wrongtype => text.replacen("ERR ", "ERR clause 1: ", 1),
                _ => text.to_string(),
            };
            assert_eq!(e, want, "{line:?}");
        }
        // A peek, a release, a renewal read less (no expired entry): compared,
        // not required to fail.
        let _ = same(c, &["RL.PEEK", "ACQUIRE", key, "3", "1000"]);
        let _ = same(c, &["RL.RELEASE", key, "w1"]);
        let _ = same(c, &["RL.RENEW", key, "w1", "1000"]);
        let _ = same(c, &["RL.RELEASE", key, "w2"]);
    }
    let e = same(
        c,
        &[
            "RL.ALL", "2", "k", "slog", "ACQUIRE", "3", "1000", "ACQUIRE", "3", "1000",
        ],
    )
    .unwrap_err();
    assert_eq!(e, "ERR clause 2: key holds RL.SLIDE state, not lease state");
    assert_eq!(
        crate::harness::exists(c, &["f:k"]),
        0,
        "a refused RL.ALL writes nothing"
    );
}

/// The repros of the lease-safety issue through both editions on a stopped
/// clock: sorted sets of the shape of leases (a leaderboard, a schedule, a
/// far future score) refused by every lease command and left as they were;
/// the wait under a lowered limit; a renewal that extends nothing writes
/// nothing. `same` compares the replies, errors and states of both.
#[test]
fn the_lease_safety_repros_answer_alike_and_as_required() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let now = server.clock_ms();
    let (hour, two, far) = (
        (now + 3_600_000).to_string(),
        (now + 7_200_000).to_string(),
        (now + 100_000_000_000).to_string(),
    );
    on_both(
        c,
        &[
            "ZADD", "board", "100", "alice", "250", "bob", "999", "carol",
        ],
    );
    on_both(c, &["EXPIRE", "board", "3600"]);
    on_both(c, &["ZADD", "sched", &hour, "job-alice", &two, "job-bob"]);
    on_both(c, &["PEXPIRE", "sched", "86400000"]);
    on_both(c, &["ZADD", "fs", &far, "alice"]);
    on_both(c, &["PEXPIRE", "fs", "60000"]);
    let dump = |c: &mut redis::Connection| -> Vec<(Option<Vec<u8>>, i64)> {
        ["f:board", "f:sched", "f:fs"]
            .iter()
            .map(|k| crate::harness::frozen_state(c, k))
            .collect()
    };
    let before = dump(c);
    let no_header = "ERR key holds a sorted set that rl did not write (no lease header; a lease set of an earlier rl build ends with its last lease)";
    let lines: &[&[&str]] = &[
        &["RL.ACQUIRE", "board", "10", "1000"],
        &["RL.RELEASE", "sched", "job-alice"],
        &["RL.RENEW", "sched", "job-bob", "99999999"],
        &["RL.ACQUIRE", "fs", "1", "1000", "ID", "alice"],
        &["RL.PEEK", "ACQUIRE", "board", "10", "1000"],
    ];
    for line in lines {
        assert_eq!(same(c, line).unwrap_err(), no_header, "{line:?}");
    }
    let e = same(c, &["RL.ALL", "1", "board", "ACQUIRE", "10", "1000"]).unwrap_err();
    assert_eq!(e, no_header.replacen("ERR ", "ERR clause 1: ", 1));
    assert_eq!(dump(c), before, "left byte for byte");

    for (id, ms) in [("a", "1000"), ("b", "2000"), ("c", "3000")] {
        same(c, &["RL.ACQUIRE", "lo", "5", ms, "ID", id]).unwrap();
    }
    let r = same(c, &["RL.ACQUIRE", "lo", "2", "500"]).unwrap();
    assert_eq!(ints(&r), [0, 0, 2000, 3000]);
    let r = same(c, &["RL.PEEK", "ACQUIRE", "lo", "2", "500"]).unwrap();
    assert_eq!(ints(&r), [0, 0, 2000, 3000]);
    let r = same(c, &["RL.ALL", "1", "lo", "ACQUIRE", "1", "500"]).unwrap();
    assert_eq!(ints(&r)[..2], [0, 3000]);
    server.advance(1_999);
    assert_eq!(
        ints(&same(c, &["RL.ACQUIRE", "lo", "2", "500"]).unwrap())[..3],
        [0, 0, 1]
    );
    server.advance(1);
    assert_eq!(
        ints(&same(c, &["RL.ACQUIRE", "lo", "2", "500"]).unwrap())[0],
        1
    );

    same(c, &["RL.ACQUIRE", "nr", "2", "600000", "ID", "job"]).unwrap();
    let frozen = crate::harness::frozen_state(c, "f:nr");
    let changed = crate::harness::changes(c);
    assert_eq!(
        ints(&same(c, &["RL.RENEW", "nr", "job", "1000"]).unwrap())[..2],
        [1, 1]
    );
    assert_eq!(
        ints(&same(c, &["RL.ACQUIRE", "nr", "2", "1000", "ID", "job"]).unwrap())[..2],
        [1, 1]
    );
    assert_eq!(crate::harness::frozen_state(c, "f:nr"), frozen);
    assert_eq!(crate::harness::changes(c), changed, "neither edition wrote");
}
