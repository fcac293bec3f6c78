//! The verbs besides admission, both editions alike on a stopped clock:
//! refunds, a key denied at its limit and called again, OLDEST, and a
//! block's life.

use super::{member, zcard, FOREIGN};
use crate::functions::differential::{on_both, same, same_err, same_int, same_ints};
use crate::functions::start_both;
use crate::harness::{frozen_state, plain_key, Flavor};

/// RL.REFUND SLIDE gives back the newest entries still in the window,
/// never one that left it; an emptied set is gone; nothing to give back
/// writes nothing.
#[test]
fn refunds_remove_the_newest_in_the_window() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let line = |cost: &'static str| ["RL.SLIDE", "k", "10", "1000", "COST", cost];
    same_ints(&mut c, &line("3"));
    server.advance(600);
    same_ints(&mut c, &line("2"));
    server.advance(100);
    same_ints(&mut c, &line("1"));
    assert_eq!(
        same_ints(
            &mut c,
            &["RL.REFUND", "SLIDE", "k", "10", "1000", "COST", "2"]
        ),
        [2, 5, 0, 1000]
    );
    server.advance(350);
    // The first 3 have left: only one entry counts.
    assert_eq!(
        same_ints(
            &mut c,
            &["RL.REFUND", "SLIDE", "k", "10", "1000", "COST", "5"]
        ),
        [1, 9, 0, 1000]
    );
    assert_eq!(zcard(&mut c, "f:k"), 3);
    let before = frozen_state(&mut c, "f:k");
    assert_eq!(
        same_ints(&mut c, &["RL.REFUND", "SLIDE", "k", "10", "1000"]),
        [0, 9, 0, 1000]
    );
    assert_eq!(frozen_state(&mut c, "f:k"), before);
    // Emptied: gone.
    same_ints(&mut c, &["RL.SLIDE", "e", "5", "60000", "COST", "2"]);
    assert_eq!(
        same_ints(
            &mut c,
            &["RL.REFUND", "SLIDE", "e", "5", "60000", "COST", "3"]
        ),
        [2, 4, 0, 60000]
    );
    assert_eq!(plain_key(&mut c, b"f:e").1, -2);
    assert_eq!(
        same_ints(&mut c, &["RL.REFUND", "SLIDE", "missing", "5", "60000"]),
        [0, 4, 0, 60000]
    );
}

/// A key denied at its limit is read another way on its next plain call
/// (the library's Slide.full: one range for the count and the oldest):
/// the same replies, and the same refusals when what it reads changed
/// under it (a foreign oldest entry, a lowered limit, a block, an entry
/// that left the window).
#[test]
fn a_key_denied_at_its_limit_answers_alike_when_called_again() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let line = ["RL.SLIDE", "k", "3", "100000"];
    for left in [2, 1, 0] {
        assert_eq!(same_ints(&mut c, &line)[..2], [1, left]);
    }
    // The first denial, then the calls the library reads the other way.
    for _ in 0..3 {
        assert_eq!(same_ints(&mut c, &line)[..2], [0, 0]);
    }
    // A lowered limit (more entries than it) and a raised one.
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "2", "100000"])[..2],
        [0, 0]
    );
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "2", "100000"])[..2],
        [0, 0]
    );
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "4", "100000"])[..2],
        [1, 0]
    );
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "4", "100000"])[..2],
        [0, 0]
    );
    // Every entry left a short window: admitted (stale ones removed).
    server.advance(20);
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "4", "10"])[..2],
        [1, 3]
    );

    // The oldest entry replaced by one rl could not have written, after
    // a denial: refused, the key as it was.
    for _ in 0..3 {
        same_ints(&mut c, &["RL.SLIDE", "k", "4", "100000"]);
    }
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "4", "100000"])[..2],
        [0, 0]
    );
    for edition in ["m:k", "f:k"] {
        let oldest: Vec<String> = redis::cmd("ZRANGE")
            .arg(edition)
            .arg(0)
            .arg(0)
            .arg("WITHSCORES")
            .query(&mut c)
            .unwrap();
        let _: i64 = redis::cmd("ZREM")
            .arg(edition)
            .arg(&oldest[0])
            .query(&mut c)
            .unwrap();
        // One ms earlier: the oldest by rank ('x' sorts after digits).
        let score = oldest[1].parse::<i64>().unwrap() - 1;
        let _: i64 = redis::cmd("ZADD")
            .arg(edition)
            .arg(score)
            .arg("x")
            .query(&mut c)
            .unwrap();
    }
    let before = frozen_state(&mut c, "f:k");
    assert_eq!(same_err(&mut c, &["RL.SLIDE", "k", "4", "100000"]), FOREIGN);
    assert_eq!(frozen_state(&mut c, "f:k"), before);

    // A block on a full key: its wait, not the limit's.
    on_both(&mut c, "b", &["DEL", "K"]);
    for _ in 0..3 {
        same_ints(&mut c, &["RL.SLIDE", "b", "2", "100000"]);
    }
    same(&mut c, &["RL.BLOCK", "SLIDE", "b", "5000"]).unwrap();
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "b", "2", "100000"]),
        [0, 0, 5000, 5000]
    );
}

/// RL.PEEK SLIDE ... OLDEST on both editions, stepping through a window
/// that fills, partly empties (stale entries ahead of the oldest counted
/// one: the rank lookup) and empties.
#[test]
fn oldest_is_the_same_wait_on_both_editions() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let peek = |cost: &'static str| ["RL.PEEK", "SLIDE", "o", "5", "1000", "COST", cost, "OLDEST"];
    assert_eq!(same_ints(&mut c, &peek("1")), [1, 4, 0, 1000, 0]);
    same_ints(&mut c, &["RL.SLIDE", "o", "5", "1000"]);
    server.advance(100);
    same_ints(&mut c, &["RL.SLIDE", "o", "5", "1000", "COST", "2"]);
    server.advance(100);
    same_ints(&mut c, &["RL.SLIDE", "o", "5", "1000"]);
    assert_eq!(same_ints(&mut c, &peek("1")), [1, 0, 0, 1000, 800]);
    assert_eq!(same_ints(&mut c, &peek("2")), [0, 1, 800, 1000, 800]);
    server.advance(850);
    // The first entry has left: three count, the oldest from 100 ms later.
    assert_eq!(same_ints(&mut c, &peek("1")), [1, 1, 0, 1000, 50]);
    assert_eq!(same_ints(&mut c, &peek("5")), [0, 2, 150, 150, 50]);
    server.advance(100);
    assert_eq!(same_ints(&mut c, &peek("1")), [1, 3, 0, 1000, 50]);
    server.advance(50);
    assert_eq!(same_ints(&mut c, &peek("1")), [1, 4, 0, 1000, 0]);
}

/// A block's life on a stopped clock, step by step, both editions alike
/// (reply and state at every step): the breach, denials while it holds
/// (with and without BLOCK, a peek, RL.ALL), a refund and a charge that
/// keep it, its end, an ended block left out of the count, the admission
/// that removes it with the stale entries evicted,
/// and a block by hand after the clock stepped back (it ends past the
/// newest entry).
#[test]
fn a_block_lives_and_ends_alike() {
    let server = start_both(Flavor::Valkey9);
    let mut c = server.conn();
    let t0 = server.clock_ms();
    for _ in 0..2 {
        assert_eq!(same_ints(&mut c, &["RL.SLIDE", "k", "2", "1000"])[0], 1);
    }
    let breach = ["RL.SLIDE", "k", "2", "1000", "BLOCK", "3000"];
    assert_eq!(same_ints(&mut c, &breach), [0, 0, 3000, 3000]);
    server.advance(100);
    for line in [
        &breach[..],
        &["RL.SLIDE", "k", "100", "1000"],
        &["RL.PEEK", "SLIDE", "k", "2", "1000"],
        &["RL.PEEK", "SLIDE", "k", "2", "1000", "OLDEST"],
    ] {
        assert_eq!(same_ints(&mut c, line)[..4], [0, 0, 2900, 2900], "{line:?}");
    }
    let all = [
        "RL.ALL", "2", "k", "o", "SLIDE", "5", "1000", "SLIDE", "5", "1000",
    ];
    same(&mut c, &all).unwrap();
    assert_eq!(
        same_ints(&mut c, &["RL.REFUND", "SLIDE", "k", "2", "1000"]),
        [1, 0, 2900, 2900]
    );
    assert_eq!(
        same_ints(
            &mut c,
            &["RL.CHARGE", "SLIDE", "k", "2", "1000", "COST", "3"]
        ),
        [3, 0, 2900, 2900]
    );
    // Its end: the log decides again; the entries have left the window.
    server.advance(2900);
    assert_eq!(
        same_ints(&mut c, &["RL.PEEK", "SLIDE", "k", "2", "1000"])[0],
        1
    );
    // The entries are stale, the block's member is not (it ends now): the
    // count and the eviction leave it out; the admission removes it (the
    // key lives until the block's end, so a stale member never outlives
    // it but after a clock step).
    assert_eq!(zcard(&mut c, "m:k"), 5);
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "2", "1000"]),
        [1, 1, 0, 1000]
    );
    assert_eq!(zcard(&mut c, "m:k"), 1);
    // The clock stepped back: entries ahead of it; a block by hand ends
    // past the newest.
    let ahead = server.clock_ms() + 5000;
    let (s, m) = (ahead.to_string(), member(ahead, 0));
    on_both(&mut c, "k", &["ZADD", "K", &s, &m]);
    assert_eq!(
        same_int(&mut c, &["RL.BLOCK", "SLIDE", "k", "10"]),
        ahead + 1
    );
    let now = server.clock_ms();
    assert_eq!(
        same_ints(&mut c, &["RL.SLIDE", "k", "2", "1000"]),
        [0, 0, ahead + 1 - now, ahead + 1 - now]
    );
    assert_eq!(same_int(&mut c, &["RL.UNBLOCK", "SLIDE", "k"]), 1);
    assert_eq!(same_int(&mut c, &["RL.UNBLOCK", "SLIDE", "k"]), 0);
    assert!(t0 < now);
}
