//! With `maxmemory` reached under `noeviction`, every admission command
//! (RL.ALL too: all are `deny-oom`) is refused with the server's OOM error
//! before it runs: nothing is written, on existing keys or new ones. The
//! read-only RL.TOTALS and RL.PEEK still answer, and once memory is freed
//! the commands work on the state as it was. RL.REFUND is not
//! `deny-oom`: it gives back at maxmemory, and no key it rewrites grows.

use crate::harness::all_commands::{Writer, WRITERS};
use crate::harness::*;

fn key(w: Writer, new: bool) -> String {
    format!("mp:{}:{}", w.name(), if new { "new" } else { "old" })
}

#[test]
fn at_maxmemory_admissions_are_refused_whole_and_reads_still_answer() {
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        for w in WRITERS {
            run_bytes(&mut c, &w.admit_line(&key(w, false), 5)).unwrap();
        }
        // Fill up to the limit with small values (large ones would leave
        // the limit behind with the query buffer they came in).
        let used: u64 = info_field(&mut c, "memory", "used_memory")
            .unwrap()
            .parse()
            .unwrap();
        for (name, value) in [
            ("maxmemory-policy", "noeviction".to_string()),
            ("maxmemory", (used + 2 * 1024 * 1024).to_string()),
        ] {
            let _: () = redis::cmd("CONFIG")
                .arg("SET")
                .arg(name)
                .arg(value)
                .query(&mut c)
                .unwrap();
        }
        let filler = vec![b'x'; 1024];
        let full = (0..200).any(|i| {
            let mut pipe = redis::pipe();
            for j in 0..100 {
                pipe.cmd("SET")
                    .arg(format!("filler:{i}:{j}"))
                    .arg(&filler)
                    .ignore();
            }
            pipe.query::<()>(&mut c)
                .is_err_and(|e| error_text(&e).starts_with("OOM "))
        });
        assert!(full, "{f:?}: never reached maxmemory");

        let states: Vec<_> = WRITERS
            .iter()
            .flat_map(|&w| [key(w, false), key(w, true)])
            .map(|k| (k.clone(), frozen_state(&mut c, &k)))
            .collect();
        let before_changes = changes(&mut c);
        for w in WRITERS {
            for new in [false, true] {
                let err = err_text(run_bytes(&mut c, &w.admit_line(&key(w, new), 5)));
                assert!(err.starts_with("OOM "), "{f:?} {}: {err}", w.name());
            }
        }
        let all_line = [
            "RL.ALL",
            "2",
            "{mp}:all:new",
            "{mp}:all:other",
            "SLIDE",
            "5",
            "600000",
            "FIXED",
            "5",
            "600000",
        ];
        let err = error_of(&mut c, &all_line);
        assert!(err.starts_with("OOM "), "{f:?} RL.ALL: {err}");
        assert_eq!(
            exists(&mut c, &["{mp}:all:new", "{mp}:all:other"]),
            0,
            "{f:?}: RL.ALL wrote"
        );
        for (k, before) in &states {
            assert_eq!(&frozen_state(&mut c, k), before, "{f:?} {k}");
        }
        assert_eq!(
            changes(&mut c),
            before_changes,
            "{f:?}: something was written"
        );

        // Reads still answer.
        let totals: Vec<(String, i64)> = redis::cmd("RL.TOTALS")
            .arg(key(Writer::Count, false))
            .arg(600_000)
            .query(&mut c)
            .unwrap();
        assert_eq!(totals, vec![("hits".to_string(), 1)], "{f:?}");
        let slide_key = key(Writer::Slide, false);
        let p = peek(&mut c, &["SLIDE", &slide_key, "5", "600000"]);
        assert_eq!(p[..2], [1, 3], "{f:?}: RL.PEEK answers");

        // Freed, the commands go on from the state as it was.
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("maxmemory")
            .arg(0)
            .query(&mut c)
            .unwrap();
        for w in WRITERS {
            let reply = run_bytes(&mut c, &w.admit_line(&key(w, false), 5)).unwrap();
            let ints: Vec<i64> = match w {
                Writer::Count => vec![],
                _ => redis::from_redis_value(&reply).unwrap(),
            };
            assert!(w.admitted(&ints), "{f:?} {}", w.name());
            if matches!(
                w,
                Writer::Slide | Writer::Buckets | Writer::Fixed | Writer::Throttle
            ) {
                assert_eq!(
                    ints[1],
                    3,
                    "{f:?} {}: remaining after the second admit",
                    w.name()
                );
            }
        }
    });
}

/// Admissions and the refunds that follow them at maxmemory (module line
/// shapes): each refund's `refunded`. One BUCKETS key holds two buckets,
/// so its refund rewrites an older bucket's field as well as the header;
/// another refund names a longer window, which moves the expiry.
pub const REFUNDS_AT_OOM: [(&[&str], &[&str], i64); 6] = [
    (
        &["RL.SLIDE", "r:s", "10", "600000", "COST", "3"],
        &["RL.REFUND", "SLIDE", "r:s", "10", "600000", "COST", "2"],
        2,
    ),
    (
        &["RL.BUCKETS", "r:b", "10", "600000", "COST", "3"],
        &["RL.REFUND", "BUCKETS", "r:b", "10", "600000", "COST", "2"],
        2,
    ),
    (
        &["RL.BUCKETS", "r:b", "10", "600000"],
        &["RL.REFUND", "BUCKETS", "r:b", "10", "1200000"],
        1,
    ),
    (
        &[
            "RL.BUCKETS",
            "r:b2",
            "10",
            "600000",
            "PRECISION",
            "2400",
            "COST",
            "2",
        ],
        &["RL.REFUND", "BUCKETS", "r:b2", "10", "600000", "COST", "4"],
        4,
    ),
    (
        &["RL.THROTTLE", "r:t", "9", "10", "600000", "3"],
        &["RL.REFUND", "THROTTLE", "r:t", "9", "10", "600000", "2"],
        2,
    ),
    (
        &["RL.FIXED", "r:f", "10", "600000", "COST", "3"],
        &["RL.REFUND", "FIXED", "r:f", "10", "600000", "COST", "2"],
        2,
    ),
];

/// The refunds of [`REFUNDS_AT_OOM`] through `call` (the module's
/// commands, or the library's functions), with `pause` letting a bucket
/// width pass: at maxmemory (`noeviction`, an admission refused with OOM)
/// each gives back what it reports, and no key grows, by the server's own
/// count of its bytes. Then memory is freed again.
pub fn refunds_run_at_maxmemory(
    c: &mut redis::Connection,
    call: &dyn Fn(&mut redis::Connection, &[&str]) -> redis::RedisResult<redis::Value>,
    pause: &dyn Fn(u64),
    label: &str,
) {
    for (admit, _, _) in REFUNDS_AT_OOM {
        call(c, admit).unwrap();
    }
    // A second bucket for r:b2: its first becomes a field of its own.
    pause(2500);
    call(
        c,
        &[
            "RL.BUCKETS",
            "r:b2",
            "10",
            "600000",
            "PRECISION",
            "2400",
            "COST",
            "3",
        ],
    )
    .unwrap();
    assert_eq!(
        bucket_fields(c, "r:b2").len(),
        1,
        "{label}: an older bucket"
    );
    for (name, value) in [("maxmemory-policy", "noeviction"), ("maxmemory", "1")] {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(value)
            .query(c)
            .unwrap();
    }
    let oom = err_text(call(c, REFUNDS_AT_OOM[0].0));
    assert!(oom.starts_with("OOM "), "{label}: not at maxmemory: {oom}");
    for (_, refund, want) in REFUNDS_AT_OOM {
        let key = refund[2];
        let before = memory_usage(c, key);
        let reply: Vec<i64> = redis::from_redis_value(&call(c, refund).unwrap()).unwrap();
        assert_eq!(reply[0], want, "{label} {refund:?}: {reply:?}");
        let after = memory_usage(c, key);
        assert!(
            after <= before,
            "{label} {refund:?}: the key grew from {before} to {after} bytes"
        );
    }
    assert_eq!(
        bucket_fields(c, "r:b2").values().collect::<Vec<_>>(),
        ["1"],
        "{label}: the older bucket rewritten, 2 - 1"
    );
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(0)
        .query(c)
        .unwrap();
}

/// RL.REFUND is not `deny-oom` (as RL.RELEASE): a refund only lowers
/// counts and removes entries or fields, so it gives back at maxmemory, and
/// the key it rewrites never grows.
#[test]
fn at_maxmemory_refunds_give_back_and_no_key_grows() {
    on_every_server_clocked(|server| {
        let label = format!("{:?}", server.flavor);
        let mut c = server.conn();
        refunds_run_at_maxmemory(
            &mut c,
            &|c, line| run(c, line),
            &|ms| server.advance(ms),
            &label,
        );
    });
}
