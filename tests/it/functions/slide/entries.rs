//! The log's entries: member numbers within one millisecond, which entries
//! a call reads and so checks, and a foreign score where a wait is read.

use super::{member, zcard, FOREIGN};
use crate::functions::differential::{both, on_both, same_err, same_ints, words};
use crate::functions::start_both;
use crate::harness::{frozen_state, plain_key, Flavor, Plain};

const MAX_NOW_MS: i64 = i64::MAX / 1_000_000 - 1;

/// Members of one millisecond run out at 10^6: both editions refuse the
/// call rather than number past it (the millisecond full; the key foreign
/// when a foreign entry holds the next number), and skip a number a
/// foreign entry holds.
#[test]
fn member_numbers_of_one_millisecond() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    let s = now.to_string();
    let ttl = ["PEXPIRE", "K", "100000"];
    // The newest is number 999,998 of now: one more fits, two do not
    // (the millisecond is full, issue #39; the next one has room).
    let full = |left: u64, cost: u64| {
        format!("ERR the key's millisecond {now} has {left} of its 1000000 entries left, fewer than COST {cost}: nothing written, retry in 1 ms")
    };
    on_both(&mut c, "k", &["ZADD", "K", &s, &member(now, 999_998)]);
    on_both(&mut c, "k", &ttl);
    assert_eq!(
        same_err(&mut c, &["RL.SLIDE", "k", "10", "1000", "COST", "2"]),
        full(1, 2)
    );
    assert_eq!(
        same_err(
            &mut c,
            &["RL.PEEK", "SLIDE", "k", "10", "1000", "COST", "2"]
        ),
        full(1, 2)
    );
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "10", "1000"]),
        [1, 8, 0, 1000]
    );
    assert_eq!(
        same_err(&mut c, &["RL.SLIDE", "k", "10", "1000"]),
        full(0, 1)
    );
    // The next ms numbers from 0 again.
    server.advance(1);
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "10", "1000"]),
        [1, 7, 0, 1000]
    );

    // A foreign entry in the middle holds the member this call would take:
    // skipped, the next number is taken.
    let now = server.clock_ms();
    let (old, mid, new) = (now - 500, now - 200, now - 100);
    on_both(
        &mut c,
        "j",
        &[
            "ZADD",
            "K",
            &old.to_string(),
            &member(old, 0),
            &mid.to_string(),
            &member(now, 0),
            &new.to_string(),
            &member(new, 0),
        ],
    );
    on_both(&mut c, "j", &ttl);
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "j", "10", "1000", "COST", "2"]),
        [1, 5, 0, 1000]
    );
    let (Plain::Zset(entries), _) = plain_key(&mut c, b"f:j") else {
        panic!()
    };
    let got: Vec<String> = entries
        .iter()
        .map(|(m, _)| String::from_utf8_lossy(m).into())
        .collect();
    assert_eq!(
        got,
        [
            member(old, 0),
            member(now, 0),
            member(new, 0),
            member(now, 1),
            member(now, 2)
        ]
    );

    // The same for one unit (RL.SLIDE's own path, where the library's
    // ZADD NX finds the member held): the next free number is taken, past
    // one or two held by foreign entries.
    for (key, held) in [("g", 1), ("h", 2)] {
        let now = server.clock_ms();
        let (old, new) = (now - 500, now - 100);
        let mut zadd: Vec<String> = vec!["ZADD".into(), "K".into()];
        zadd.extend([old.to_string(), member(old, 0)]);
        for n in 0..held {
            zadd.extend([(now - 300 + n).to_string(), member(now, n)]);
        }
        zadd.extend([new.to_string(), member(new, 0)]);
        on_both(&mut c, key, &words(&zadd));
        on_both(&mut c, key, &ttl);
        assert_eq!(
            same_ints(&mut c, &["RL.SLIDE", key, "10", "1000"]),
            [1, 7 - held, 0, 1000]
        );
        let (Plain::Zset(entries), _) = plain_key(&mut c, format!("f:{key}").as_bytes()) else {
            panic!()
        };
        let got: Vec<String> = entries
            .iter()
            .map(|(m, _)| String::from_utf8_lossy(m).into())
            .collect();
        assert_eq!(got.last(), Some(&member(now, held)));
        assert_eq!(got.len() as i64, 3 + held);
    }

    // ... unless it holds the last number of the ms: refused, nothing
    // written.
    let now = server.clock_ms() + 1;
    server.advance(1);
    on_both(
        &mut c,
        "i",
        &[
            "ZADD",
            "K",
            &(now - 300).to_string(),
            &member(now - 300, 0),
            &(now - 200).to_string(),
            &member(now, 999_999),
            &now.to_string(),
            &member(now, 999_998),
        ],
    );
    on_both(&mut c, "i", &ttl);
    let before = frozen_state(&mut c, "f:i");
    assert_eq!(same_err(&mut c, &["RL.SLIDE", "i", "10", "1000"]), FOREIGN);
    assert_eq!(frozen_state(&mut c, "f:i"), before);
    // A peek does not number members: it answers.
    assert_eq!(
        same_ints(&mut c, &["RL.PEEK", "SLIDE", "i", "10", "1000"]),
        [1, 6, 0, 1000]
    );
}

/// Only what a call reads is checked: the newest, the oldest, and the
/// stale entries it may remove (none for RL.PEEK; 128 for RL.SLIDE; the
/// cost + 1 newest for RL.REFUND, and what the peek of its reply reads over
/// the log the removal leaves).
#[test]
fn only_what_is_read_is_checked() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    let ttl = ["PEXPIRE", "K", "100000"];
    // Stale entries: rl's oldest, a foreign second, rl's newest in the window.
    let (a, b, n) = (now - 5000, now - 4000, now - 10);
    on_both(
        &mut c,
        "k",
        &[
            "ZADD",
            "K",
            &a.to_string(),
            &member(a, 0),
            &b.to_string(),
            "7",
            &n.to_string(),
            &member(n, 0),
        ],
    );
    on_both(&mut c, "k", &ttl);
    assert_eq!(
        same_ints(&mut c, &["RL.PEEK", "SLIDE", "k", "5", "1000"]),
        [1, 3, 0, 1000]
    );
    let before = frozen_state(&mut c, "f:k");
    assert_eq!(same_err(&mut c, &["RL.SLIDE", "k", "5", "1000"]), FOREIGN);
    assert_eq!(frozen_state(&mut c, "f:k"), before);
    // RL.REFUND reads everything before it writes: the peek of its reply,
    // decided over the log without the newest, finds the foreign entry
    // newest and refuses before the removal (issue #23).
    assert_eq!(
        same_err(&mut c, &["RL.REFUND", "SLIDE", "k", "5", "1000"]),
        FOREIGN
    );
    assert_eq!(zcard(&mut c, "f:k"), 3);
    assert_eq!(frozen_state(&mut c, "f:k"), before);

    // A foreign stale entry at rank 200: beyond this call's 128, within
    // the next call's.
    let mut zadd: Vec<String> = vec!["ZADD".into(), "K".into()];
    for i in 0..400i64 {
        let s = now - 5000 + i;
        zadd.push(s.to_string());
        zadd.push(if i == 200 { "x".into() } else { member(s, 0) });
    }
    on_both(&mut c, "j", &words(&zadd));
    on_both(&mut c, "j", &ttl);
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "j", "5", "1000"]),
        [1, 4, 0, 1000]
    );
    assert_eq!(zcard(&mut c, "f:j"), 400 - 128 + 1);
    assert_eq!(same_err(&mut c, &["RL.SLIDE", "j", "5", "1000"]), FOREIGN);
    // Peeks read only the oldest: fine.
    assert_eq!(
        same_ints(&mut c, &["RL.PEEK", "SLIDE", "j", "5", "1000"]),
        [1, 3, 0, 1000]
    );

    // RL.REFUND checks the cost + 1 newest in the window.
    let (p, q, r) = (now - 30, now - 20, now - 10);
    on_both(
        &mut c,
        "r",
        &[
            "ZADD",
            "K",
            &p.to_string(),
            "oldest-in-window",
            &(p + 1).to_string(),
            &member(p + 1, 0),
            &q.to_string(),
            &member(q, 0),
            &r.to_string(),
            &member(r, 0),
        ],
    );
    on_both(&mut c, "r", &ttl);
    // Oldest foreign: every command refuses.
    assert_eq!(
        same_err(&mut c, &["RL.REFUND", "SLIDE", "r", "5", "1000"]),
        FOREIGN
    );
    on_both(&mut c, "r", &["ZREM", "K", "oldest-in-window"]);
    on_both(
        &mut c,
        "r",
        &["ZADD", "K", &(p - 5000).to_string(), &member(p - 5000, 0)],
    );
    on_both(&mut c, "r", &["ZADD", "K", &(p + 2).to_string(), "middle"]);
    let before = frozen_state(&mut c, "f:r");
    // COST 1 reads the two newest (r, q): fine; COST 2 reads three (r, q,
    // middle): refused, nothing removed.
    assert_eq!(
        same_err(
            &mut c,
            &["RL.REFUND", "SLIDE", "r", "5", "1000", "COST", "2"]
        ),
        FOREIGN
    );
    assert_eq!(frozen_state(&mut c, "f:r"), before);
    assert_eq!(
        same_ints(&mut c, &["RL.REFUND", "SLIDE", "r", "5", "1000"]),
        [1, 1, 0, 1000]
    );
}

/// A foreign entry with a fractional score in the window, at the rank a
/// denial's wait is read from: refused by both, as every entry read is
/// (the module used to read its score as i64::MIN and wrap the wait to
/// about 2^63). A call that does not read it by rank goes on.
#[test]
fn a_fractional_score_where_the_wait_is_read() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let now = server.clock_ms();
    let (o, n) = (now - 100, now - 10);
    on_both(
        &mut c,
        "k",
        &[
            "ZADD",
            "K",
            &o.to_string(),
            &member(o, 0),
            &format!("{}.5", now - 50),
            "x",
            &n.to_string(),
            &member(n, 0),
        ],
    );
    on_both(&mut c, "k", &["PEXPIRE", "K", "100000"]);
    let (m, f) = both(&mut c, &["RL.SLIDE", "k", "3", "100000", "COST", "2"]);
    assert_eq!(m, f);
    assert_eq!(
        m.reply,
        Err("ERR key holds a sorted set that rl did not write".to_string())
    );
    // The entries either side are rl's: a denial whose wait is the oldest's
    // leaving, and an admission, read only them.
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "3", "100000", "COST", "1"]),
        [0, 0, 100_000 - 100, 100_000 - 10]
    );
    assert_eq!(MAX_NOW_MS, 9_223_372_036_853);
}
