//! Named ids that look like integers or are 64 bytes long, and the ids the
//! library generates: the module's shape, never the same twice.

use redis::Value;

use crate::functions::start_both;
use crate::harness::{run, Flavor};

use super::{base36, generated_shape, ints, same};

#[test]
fn ids_that_look_like_integers_or_are_64_bytes() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let id64 = "~".repeat(63) + "!";
    let id65 = "a".repeat(65);
    let ok = [
        "-", "0-0", "12a", "+5", "1e5", "0x10", "--1", "-1-", "1.5", &id64, "\x21", "\x7e",
    ];
    for id in ok {
        let r = same(c, &["RL.ACQUIRE", "k", "100", "1000", "ID", id]).unwrap();
        assert_eq!(ints(&r)[0], 1, "{id:?}");
        assert_eq!(
            ints(&same(c, &["RL.RENEW", "k", id, "2000"]).unwrap())[0],
            1
        );
    }
    for id in [
        "42",
        "-42",
        "0",
        "-0",
        "007",
        "99999999999999999999999",
        &id65,
        "",
        " ",
        "a\x00b",
        "\u{80}",
    ] {
        for line in [
            vec!["RL.ACQUIRE", "k", "100", "1000", "ID", id],
            vec!["RL.RELEASE", "k", id],
            vec!["RL.RENEW", "k", id, "10"],
        ] {
            let e = same(c, &line).unwrap_err();
            assert!(
                e.contains("must be 1 to 64 printable ASCII"),
                "{line:?}: {e}"
            );
        }
    }
    for id in ok {
        assert_eq!(
            ints(&same(c, &["RL.RELEASE", "k", id]).unwrap())[0],
            1,
            "{id:?}"
        );
    }
    assert_eq!(
        crate::harness::exists(c, &["f:k", "m:k"]),
        0,
        "the last release deletes the set"
    );
}

/// Ids the library makes: the module's shape, the clock's ms first, never
/// the same twice, at one stopped instant and after the library is
/// loaded again at that instant.
#[test]
fn generated_ids_have_the_shape_and_do_not_repeat() {
    let server = start_both(Flavor::Valkey9);
    let c = &mut server.conn();
    let now = base36(server.clock_ms() as u64);
    let mut seen = std::collections::HashSet::new();
    for round in 0..3 {
        if round > 0 {
            crate::functions::load(c);
        }
        for i in 0..200 {
            let r: Value = run(c, &["FCALL", "rl_acquire", "1", "f:k", "1000", "60000"]).unwrap();
            let Value::Array(a) = r else { panic!() };
            let Value::BulkString(id) = &a[4] else {
                panic!("{a:?}")
            };
            assert!(
                generated_shape(id, Some(now.as_bytes())),
                "{:?}",
                String::from_utf8_lossy(id)
            );
            assert!(
                seen.insert(id.clone()),
                "{:?} twice (round {round}, {i})",
                String::from_utf8_lossy(id)
            );
            // Released at once, so the absent-check cannot hide a repeat.
            let r: Value = run(
                c,
                &[
                    "FCALL",
                    "rl_release",
                    "1",
                    "f:k",
                    std::str::from_utf8(id).unwrap(),
                ],
            )
            .unwrap();
            assert_eq!(ints(&r)[0], 1);
        }
    }
    // Most nonces take 13 base-36 digits, as the module's 64 random bits do.
    let long = seen
        .iter()
        .filter(|id| id.len() == now.len() + 1 + 13)
        .count();
    assert!(long > 300, "{long} of 600 ids with a 13-digit nonce");
    // Another process at the same instant makes other ids.
    let other = start_both(Flavor::Valkey9);
    let c2 = &mut other.conn();
    let r: Value = run(c2, &["FCALL", "rl_acquire", "1", "f:k", "1000", "60000"]).unwrap();
    let Value::Array(a) = r else { panic!() };
    let Value::BulkString(id) = &a[4] else {
        panic!()
    };
    assert!(!seen.contains(id));
}
