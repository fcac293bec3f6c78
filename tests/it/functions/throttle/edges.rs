//! States ahead of the clock, the documented examples, and a refund to the
//! current instant: both editions alike on a stopped clock.

use super::set_both;
use crate::functions::differential::{both, idle_tat, ints, same_stepping};
use crate::functions::start_both;
use crate::harness::{run, Flavor};

/// The clock stepping back: the stopped clock cannot go back, so the keys
/// are moved ahead instead (a TAT or window end in the future as a clock
/// set back would see it): both editions deny alike and write nothing.
#[test]
fn states_ahead_of_the_clock() {
    let s = start_both(Flavor::Valkey9);
    let mut c = s.conn();
    let now = s.clock_ms();
    // A TAT 7 s ahead with a 2 s tolerance, a window ending in 10 days.
    set_both(
        &mut c,
        "t",
        &((now + 7000) * 1000 + 1).to_string(),
        Some(now + 7001),
    );
    set_both(&mut c, "f", "2", Some(now + 864_000_000));
    let lines: &[&[&str]] = &[
        &["RL.THROTTLE", "t", "1", "1", "1000"],
        &["RL.THROTTLE", "t", "1", "1", "1000", "0"],
        &["CL.THROTTLE", "t", "1", "1", "1", "0"],
        &["CL.THROTTLE", "t", "1", "1", "1", "3"],
        &["RL.PEEK", "THROTTLE", "t", "1", "1", "1000", "2"],
        &["RL.REFUND", "THROTTLE", "t", "1", "1", "1000", "2"],
        &["RL.THROTTLE", "t", "1", "1", "1000"],
        &["RL.FIXED", "f", "2", "1000"],
        &["RL.FIXED", "f", "3", "1000"],
        &["RL.FIXED", "f", "1", "1000"],
        &["RL.REFUND", "FIXED", "f", "1", "1000"],
    ];
    let mut denied = 0;
    for line in lines {
        let v = same_stepping(&s, &mut c, line).unwrap();
        let n = ints(&v);
        if (line[0] == "CL.THROTTLE" && n[0] == 1)
            || (line[0].starts_with("RL.") && line[0] != "RL.REFUND" && n[0] == 0)
        {
            denied += 1;
        }
    }
    assert!(denied >= 5, "{denied}");
}

/// RL.THROTTLE's documented example and CL.THROTTLE's, replayed on both.
#[test]
fn the_documented_examples() {
    let s = start_both(Flavor::Valkey9);
    let mut c = s.conn();
    let lines: &[(&[&str], &[i64])] = &[
        (&["RL.THROTTLE", "u", "2", "10", "1000"], &[1, 2, 0, 100]),
        (
            &["RL.THROTTLE", "u", "2", "10", "1000", "2"],
            &[1, 0, 0, 300],
        ),
        (&["RL.THROTTLE", "u", "2", "10", "1000"], &[0, 0, 100, 300]),
        (
            &["CL.THROTTLE", "c", "15", "30", "60", "1"],
            &[0, 16, 15, -1, 2],
        ),
        (
            &["CL.THROTTLE", "c", "15", "30", "60", "16"],
            &[1, 16, 15, 2, 2],
        ),
        (
            &["CL.THROTTLE", "c", "15", "30", "60", "17"],
            &[1, 16, 15, -1, 2],
        ),
        (
            &["CL.THROTTLE", "fresh", "5", "1", "1", "2000000000000000"],
            &[1, 6, 6, -1, 0],
        ),
        (&["RL.FIXED", "r", "3", "60000"], &[1, 2, 0, 60000]),
        (
            &["RL.FIXED", "tok", "10000", "60000", "COST", "4000"],
            &[1, 6000, 0, 60000],
        ),
        (
            &[
                "RL.REFUND",
                "FIXED",
                "tok",
                "10000",
                "60000",
                "COST",
                "2800",
            ],
            &[2800, 8799, 0, 60000],
        ),
    ];
    for (line, want) in lines {
        let v = same_stepping(&s, &mut c, line).unwrap();
        assert_eq!(ints(&v), *want, "{line:?}");
    }
    // RL.PEEK's forms run read-only (FCALL_RO), as the module's RL.PEEK
    // runs in read-only scripts.
    for (module, library) in [
        (
            vec!["RL.PEEK", "THROTTLE", "m:u", "2", "10", "1000"],
            vec![
                "FCALL_RO", "rl_peek", "1", "f:u", "THROTTLE", "2", "10", "1000",
            ],
        ),
        (
            vec!["RL.PEEK", "FIXED", "m:r", "3", "60000", "COST", "2"],
            vec![
                "FCALL_RO", "rl_peek", "1", "f:r", "FIXED", "3", "60000", "COST", "2",
            ],
        ),
    ] {
        let m = run(&mut c, &module).unwrap();
        assert_eq!(Ok(m), run(&mut c, &library).map_err(|e| e.to_string()));
    }
    let tat: String = redis::cmd("GET").arg("f:u").query(&mut c).unwrap();
    assert_eq!(tat, ((s.clock_ms() + 300) * 1000).to_string());
    s.advance(100);
    let v = same_stepping(&s, &mut c, &["RL.THROTTLE", "u", "2", "10", "1000"]).unwrap();
    assert_eq!(ints(&v), [1, 0, 0, 300]);
}

/// A refund reaching now: the module keeps the TAT `now` until the ms
/// passes, the library's SET PXAT now is gone at once (see `idle_tat`), but
/// on Valkey 7.2, which keeps it as the module does
/// (`set_pxat_now_deletes_at_once`); every answer after is the same, and
/// after 1 ms so are the keys.
#[test]
fn a_refund_to_now_says_idle_on_both() {
    let s = start_both(Flavor::Valkey9);
    let release = s.flavor.release();
    let mut c = s.conn();
    same_stepping(&s, &mut c, &["RL.THROTTLE", "k", "4", "10", "1000", "3"]).unwrap();
    let (m, f) = both(
        &mut c,
        &["RL.REFUND", "THROTTLE", "k", "4", "10", "1000", "5"],
    );
    assert_eq!(m.reply, f.reply);
    assert_eq!(ints(m.reply.as_ref().unwrap()), [3, 4, 0, 100]);
    let now = s.clock_ms();
    assert!(idle_tat(&m.state[0], now), "{:?}", m.state);
    if release.set_pxat_now_deletes_at_once() {
        assert_eq!(f.state[0].1, -2, "{:?}", f.state);
    } else {
        assert_eq!(f.state, m.state, "{release:?}");
    }
    let (m, f) = both(&mut c, &["RL.PEEK", "THROTTLE", "k", "4", "10", "1000"]);
    assert_eq!(m.reply, f.reply);
    s.advance(1);
    let (m, f) = both(&mut c, &["RL.PEEK", "THROTTLE", "k", "4", "10", "1000"]);
    assert_eq!((m.reply, m.state), (f.reply, f.state));
}
