//! With `maxmemory` reached under `noeviction`, every admission command
//! (RL.ALL too: all are `deny-oom`) is refused with the server's OOM error
//! before it runs: nothing is written, on existing keys or new ones. The
//! read-only RL.TOTALS and RL.PEEK still answer, and once memory is freed
//! the commands work on the state as it was.

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
