//! Hostile argument vectors against every command (RL.PEEK, RL.REFUND,
//! RL.CHARGE, RL.BLOCK, RL.UNBLOCK and RL.ALL with every limiter and clause
//! form, BLOCK and UPTO options, the lease commands with their ids): at least 10,000 per
//! server, from a seeded generator (set `RL_FUZZ_SEED` to replay another
//! seed): random argument counts, empty strings, binary bytes, huge and
//! negative numbers, floats, unknown options, options given twice. Each
//! reply is a value or an error reply (never a dropped connection or an
//! internal error), the server never dies, and keys of other types, and
//! keys of the right types that rl did not write (generated per seed:
//! sorted sets, hashes and strings of random shapes), are never touched.

use crate::harness::all_commands::COMMANDS;
use crate::harness::raw_resp::{RawConn, Resp, XorShift};
use crate::harness::*;

const REQUESTS: usize = 12_000;
const BATCH: usize = 1_000;

const NAMES: &[&str] = &[
    "RL.SLIDE",
    "RL.BUCKETS",
    "RL.COUNT",
    "RL.TOTALS",
    "RL.THROTTLE",
    "CL.THROTTLE",
    "RL.FIXED",
    "RL.PEEK",
    "RL.REFUND",
    "RL.ALL",
    "RL.ACQUIRE",
    "RL.RELEASE",
    "RL.RENEW",
    "RL.BLOCK",
    "RL.UNBLOCK",
    "RL.CHARGE",
    "rl.slide",
    "Rl.Buckets",
    "cl.throttle",
    "rl.all",
    "Rl.Acquire",
    "rl.charge",
];

/// The limiters RL.PEEK, RL.REFUND and RL.ALL name, and words that are not
/// one.
const LIMITERS: &[&str] = &[
    "SLIDE", "BUCKETS", "THROTTLE", "FIXED", "ACQUIRE", "slide", "Acquire", "LEAKY", "COUNT",
];

/// Lease ids: valid ones, integers (RL.SLIDE's members), empty, with a
/// space, too long.
fn lease_id(rng: &mut XorShift) -> Vec<u8> {
    match rng.below(6) {
        0 => rng.pick(&["a", "job-1", "w:7"]).as_bytes().to_vec(),
        1 => rng.below(1_000_000).to_string().into_bytes(),
        2 => Vec::new(),
        3 => b"x y".to_vec(),
        4 => vec![b'i'; 64 + rng.below(3) as usize],
        _ => (0..1 + rng.below(8)).map(|_| rng.next() as u8).collect(),
    }
}

/// Keys of other types, made before the fuzzing and checked after each batch.
const OTHERS: &[(&str, &[&str])] = &[
    ("fz:o:string", &["SET", "fz:o:string", "hello"]),
    ("fz:o:number", &["SET", "fz:o:number", "not 5"]),
    ("fz:o:list", &["RPUSH", "fz:o:list", "a", "b"]),
    ("fz:o:set", &["SADD", "fz:o:set", "a"]),
    ("fz:o:hash", &["HSET", "fz:o:hash", "k", "nope", "t", "1"]),
    ("fz:o:zset", &["ZADD", "fz:o:zset", "+inf", "m", "2", "x"]),
    ("fz:o:stream", &["XADD", "fz:o:stream", "1-1", "f", "v"]),
];

const RL_KEYS: &[&str] = &["fz:rl:0", "fz:rl:1", "fz:rl:2", "", "fz:\0\r\n"];

/// Keys of rl's types that rl could not have written, under the names the
/// commands use (`fz:<COMMAND>:<n>` for n of 3 and up), built from `rng`:
/// sorted sets whose members are strings or integers that are not
/// `score * 10^6 + n`, hashes without rl's header, strings without a TTL or
/// that are no number. Each key gets a TTL unless a missing one is the
/// point. Returns the setup commands, one list per key.
fn foreign_keys(rng: &mut XorShift) -> Vec<(String, Vec<Vec<String>>)> {
    let mut out = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        let key = format!("fz:{}:{}", name.to_ascii_uppercase(), 3 + i);
        let mut setup = Vec::new();
        let ttl = rng.below(4) != 0;
        // Of the type the command reads, so each one meets a foreign key
        // of its own type (other types only get WRONGTYPE).
        let kind = match name.to_ascii_uppercase().as_str() {
            // Sorted sets that are neither RL.SLIDE logs nor lease sets.
            "RL.SLIDE" | "RL.ACQUIRE" | "RL.RELEASE" | "RL.RENEW" => 0,
            "RL.BUCKETS" | "RL.COUNT" | "RL.TOTALS" => 1,
            // These read every layout, by the limiter they name.
            "RL.PEEK" | "RL.REFUND" | "RL.ALL" | "RL.CHARGE" | "RL.BLOCK" | "RL.UNBLOCK" => {
                rng.below(3)
            }
            _ => 2,
        };
        match kind {
            0 => {
                let mut z = vec!["ZADD".to_string(), key.clone()];
                for _ in 0..1 + rng.below(6) {
                    // Scores from 1 ms on: a member below 10^6 never matches.
                    let score = 1 + rng.below(2_000_000_000_000);
                    // Never a lease id (those have no space and are no
                    // integer): a set of ids scored by whole ms has the
                    // shape of a lease set, whose expired entries
                    // RL.ACQUIRE removes (guarantees.md says so).
                    let member = match rng.below(3) {
                        0 => format!("job {}", rng.below(1000)),
                        1 => rng.below(1_000_000).to_string(),
                        _ => format!("{}.5 s", rng.below(100)),
                    };
                    z.extend([score.to_string(), member]);
                }
                setup.push(z);
            }
            1 => {
                let mut h = vec!["HSET".to_string(), key.clone()];
                for _ in 0..1 + rng.below(4) {
                    let field = rng.pick(&["name", "t", "f", "0", "17", "hh"]).to_string();
                    h.extend([field, format!("{}", rng.below(1000))]);
                }
                if rng.below(2) == 0 {
                    h.extend(["h".to_string(), format!("b,x{},1", rng.below(9))]);
                }
                setup.push(h);
            }
            _ => {
                let value = match rng.below(3) {
                    0 => rng.below(1_000_000).to_string(),
                    1 => format!("{}", 1_750_000_000_000_000 + rng.below(1 << 40)),
                    _ => format!("v{}", rng.below(1000)),
                };
                let numeric = !value.starts_with('v');
                setup.push(vec!["SET".to_string(), key.clone(), value]);
                // A number with a TTL could be rl's own state: only text
                // gets one.
                if ttl && !numeric {
                    setup.push(vec!["PEXPIRE".to_string(), key.clone(), "900000".into()]);
                }
                out.push((key, setup));
                continue;
            }
        }
        if ttl {
            setup.push(vec!["PEXPIRE".to_string(), key.clone(), "900000".into()]);
        }
        out.push((key, setup));
    }
    out
}

fn number(rng: &mut XorShift) -> Vec<u8> {
    let v: String = match rng.below(8) {
        0 => rng.below(12).to_string(),
        1 => rng.below(2_000_000).to_string(),
        2 => rng.below(u64::MAX).to_string(),
        3 => rng
            .pick(&[
                "99999999999999999999999",
                "18446744073709551615",
                "18446744073709551616",
                "9223372036854775807",
                "-9223372036854775808",
                "1000000000000",
                "1000000000001",
                "100000000000000",
                "1000000000000000",
                "000000000000000000000001",
            ])
            .to_string(),
        4 => format!("-{}", rng.below(1000)),
        5 => rng
            .pick(&[
                "+5", "-0", "1.5", "1e3", "inf", "-inf", "nan", " 1", "1 ", "0x10", "１",
            ])
            .to_string(),
        _ => (1 + rng.below(100)).to_string(),
    };
    v.into_bytes()
}

fn arg(rng: &mut XorShift) -> Vec<u8> {
    match rng.below(10) {
        0..=3 => number(rng),
        4 => Vec::new(),
        5 => (0..rng.below(40)).map(|_| rng.next() as u8).collect(),
        6 | 7 => rng
            .pick(&[
                "COST",
                "cost",
                "PRECISION",
                "BY",
                "Cost",
                "precision",
                "by",
                "ID",
                "id",
                "SLIDE",
                "ACQUIRE",
                "FIXED",
                "BLOCK",
                "UPTO",
                "block",
            ])
            .as_bytes()
            .to_vec(),
        8 => rng
            .pick(&[
                "FOO",
                "NX",
                "COSTS",
                "WITHSCORES",
                "ok",
                "fail",
                "a,b",
                "x y",
            ])
            .as_bytes()
            .to_vec(),
        _ => vec![b'f'; 1 + rng.below(70) as usize],
    }
}

/// Valid leading arguments per command (by name, case-insensitively;
/// for a limiter of RL.PEEK, RL.REFUND and RL.ALL by its name), after the
/// key, with its options now and then.
fn template(name: &str, rng: &mut XorShift) -> Vec<Vec<u8>> {
    let small = |rng: &mut XorShift| (1 + rng.below(30)).to_string();
    let window = |rng: &mut XorShift| (1 + rng.below(5_000)).to_string();
    let mut args: Vec<String> = match name.to_ascii_uppercase().as_str() {
        "RL.COUNT" => vec![window(rng), rng.pick(&["ok", "fail", "x"]).to_string()],
        "RL.TOTALS" => vec![window(rng)],
        "RL.THROTTLE" | "THROTTLE" => vec![small(rng), small(rng), window(rng)],
        "CL.THROTTLE" => vec![small(rng), small(rng), small(rng)],
        "RL.RELEASE" => vec![],
        "RL.RENEW" | "RL.BLOCK" => vec![window(rng)],
        "RL.UNBLOCK" => vec![],
        _ => vec![small(rng), window(rng)],
    };
    match (name.to_ascii_uppercase().as_str(), rng.below(3)) {
        ("SLIDE" | "FIXED" | "BUCKETS", 0) => args.extend(["COST".into(), small(rng)]),
        ("BUCKETS", 1) => args.extend(["PRECISION".into(), (1 + rng.below(300)).to_string()]),
        ("THROTTLE", 0) => args.push(rng.below(4).to_string()),
        _ => {}
    }
    // Every limiter blocks now and then (its own command, its clause;
    // refused by name elsewhere), and their own commands grant in part.
    let upper = name.to_ascii_uppercase();
    let blocking = [
        "RL.SLIDE",
        "RL.BUCKETS",
        "RL.THROTTLE",
        "RL.FIXED",
        "SLIDE",
        "BUCKETS",
        "THROTTLE",
        "FIXED",
    ];
    if blocking.contains(&upper.as_str()) && rng.below(6) == 0 {
        args.extend(["BLOCK".into(), window(rng)]);
    }
    if ["RL.SLIDE", "RL.BUCKETS", "RL.THROTTLE", "RL.FIXED"].contains(&upper.as_str())
        && rng.below(6) == 0
    {
        args.push("UPTO".into());
    }
    let mut args: Vec<Vec<u8>> = args.into_iter().map(String::into_bytes).collect();
    match name.to_ascii_uppercase().as_str() {
        "RL.RELEASE" | "RL.RENEW" => args.insert(0, lease_id(rng)),
        "RL.ACQUIRE" | "ACQUIRE" if rng.below(2) == 0 => {
            args.extend([b"ID".to_vec(), lease_id(rng)]);
        }
        _ => {}
    }
    args
}

/// A key for a call of `name`: mostly one of its own (so the state is
/// reached), now and then a shared one, an odd name or a key of another
/// type.
fn key(name: &str, rng: &mut XorShift) -> Vec<u8> {
    match rng.below(8) {
        0 | 1 => rng.pick(OTHERS).0.as_bytes().to_vec(),
        2 => rng.pick(RL_KEYS).as_bytes().to_vec(),
        // Its own keys (0..3) and the foreign ones of the same names.
        _ => format!(
            "fz:{}:{}",
            name.to_ascii_uppercase(),
            rng.below(3 + NAMES.len() as u64)
        )
        .into_bytes(),
    }
}

/// Whose keys a limiter named in `name` (RL.PEEK, RL.REFUND, RL.ALL) works
/// on: its own command's, holding the state that command wrote and the
/// foreign keys of its type; a word that names no limiter, `name`'s own.
fn keys_of<'a>(limiter: &str, name: &'a str) -> &'a str {
    match limiter.to_ascii_uppercase().as_str() {
        "SLIDE" => "RL.SLIDE",
        "BUCKETS" => "RL.BUCKETS",
        "THROTTLE" => "RL.THROTTLE",
        "FIXED" => "RL.FIXED",
        "ACQUIRE" => "RL.ACQUIRE",
        _ => name,
    }
}

/// `template`'s arguments with some replaced by garbage and some garbage
/// after them, or garbage only.
fn arguments(name: &str, rng: &mut XorShift) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if rng.below(2) == 0 {
        for a in template(name, rng) {
            out.push(if rng.below(6) == 0 { arg(rng) } else { a });
        }
        if rng.below(2) == 0 {
            for _ in 0..1 + rng.below(3) {
                out.push(arg(rng));
            }
        }
    } else {
        for _ in 0..rng.below(9) {
            out.push(arg(rng));
        }
    }
    out
}

fn command(rng: &mut XorShift) -> Vec<Vec<u8>> {
    let name = *rng.pick(NAMES);
    let upper = name.to_ascii_uppercase();
    let mut line = vec![name.as_bytes().to_vec()];
    if rng.below(20) == 0 {
        return line; // no key at all
    }
    match upper.as_str() {
        "RL.PEEK" | "RL.REFUND" | "RL.CHARGE" | "RL.BLOCK" | "RL.UNBLOCK" => {
            // RL.BLOCK and RL.UNBLOCK mostly name a limiter with blocks.
            let limiter = match upper.as_str() {
                "RL.BLOCK" | "RL.UNBLOCK" if rng.below(2) == 0 => {
                    *rng.pick(&["SLIDE", "BUCKETS", "THROTTLE", "FIXED"])
                }
                _ => *rng.pick(LIMITERS),
            };
            line.push(limiter.as_bytes().to_vec());
            line.push(key(keys_of(limiter, name), rng));
            // RL.BLOCK's ms, RL.UNBLOCK's nothing: their own template;
            // the newer commands half the time as their template has them.
            let of = match upper.as_str() {
                "RL.BLOCK" | "RL.UNBLOCK" => name,
                _ => limiter,
            };
            match upper.as_str() {
                "RL.PEEK" | "RL.REFUND" => line.extend(arguments(of, rng)),
                _ if rng.below(2) == 0 => line.extend(template(of, rng)),
                _ => line.extend(arguments(of, rng)),
            }
            // A charge needs its COST, mostly given.
            if upper == "RL.CHARGE" && rng.below(4) != 0 {
                let cost = match rng.below(2) {
                    0 => (1 + rng.below(30)).to_string().into_bytes(),
                    _ => number(rng),
                };
                line.extend([b"COST".to_vec(), cost]);
            }
        }
        "RL.ALL" => {
            // numkeys keys (now and then one twice), then as many clauses,
            // or one more, one fewer or none.
            let n = 1 + rng.below(4) as usize;
            line.push(match rng.below(8) {
                0 => number(rng),
                _ => n.to_string().into_bytes(),
            });
            let clauses = match rng.below(12) {
                0 => n + 1,
                1 => n - 1,
                2 => 0,
                _ => n,
            };
            let limiters: Vec<&str> = (0..clauses).map(|_| *rng.pick(LIMITERS)).collect();
            for i in 0..n {
                let of = limiters.get(i).map_or(name, |l| keys_of(l, name));
                line.push(key(of, rng));
            }
            if rng.below(10) == 0 {
                let again = line[2].clone();
                line.push(again);
            }
            for limiter in limiters {
                line.push(limiter.as_bytes().to_vec());
                if rng.below(4) == 0 {
                    line.extend(arguments(limiter, rng));
                } else {
                    line.extend(template(limiter, rng));
                }
            }
        }
        _ => {
            line.push(key(name, rng));
            line.extend(arguments(name, rng));
        }
    }
    // Options twice, on purpose, now and then.
    if rng.below(8) == 0 {
        let opt = rng
            .pick(&["COST", "PRECISION", "BY", "ID"])
            .as_bytes()
            .to_vec();
        for _ in 0..2 {
            line.push(opt.clone());
            line.push(number(rng));
        }
    }
    line
}

#[test]
fn random_argument_vectors_get_values_or_errors_and_touch_no_other_key() {
    let seed: u64 = std::env::var("RL_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_F022);
    for (i, flavor) in ALL.into_iter().enumerate() {
        let seed = seed.wrapping_add(i as u64);
        let mut server = Server::start(flavor);
        let mut c = server.conn();
        for (_, setup) in OTHERS {
            let mut cmd = redis::cmd(setup[0]);
            cmd.arg(&setup[1..]);
            let _: redis::Value = cmd.query(&mut c).unwrap();
        }
        let mut rng = XorShift(seed | 1);
        let foreign = foreign_keys(&mut rng);
        for (_, setup) in &foreign {
            for line in setup {
                let mut cmd = redis::cmd(&line[0]);
                cmd.arg(&line[1..]);
                let _: redis::Value = cmd.query(&mut c).unwrap();
            }
        }
        let watched: Vec<String> = OTHERS
            .iter()
            .map(|(k, _)| k.to_string())
            .chain(foreign.iter().map(|(k, _)| k.clone()))
            .collect();
        let before: Vec<_> = watched.iter().map(|k| frozen_state(&mut c, k)).collect();
        let mut raw = RawConn::connect(server.port);
        let (mut values, mut errors) = (0, 0);
        // Value replies per command (and limiter, for the three that name
        // one): the generator reaches every command's decision.
        let mut decided: std::collections::BTreeMap<String, usize> = Default::default();
        let mut sent: std::collections::BTreeMap<String, usize> = Default::default();
        for batch in 0..REQUESTS / BATCH {
            let lines: Vec<Vec<Vec<u8>>> = (0..BATCH).map(|_| command(&mut rng)).collect();
            let replies = raw.pipeline(&lines);
            for line in &lines {
                let name = String::from_utf8_lossy(&line[0]).to_ascii_uppercase();
                let words = match name.as_str() {
                    "RL.PEEK" | "RL.REFUND" | "RL.CHARGE" | "RL.BLOCK" | "RL.UNBLOCK" => {
                        &line[1..line.len().min(2)]
                    }
                    "RL.ALL" => &line[1..],
                    _ => &line[..0],
                };
                for w in words {
                    if let Some(l) = LIMITERS.iter().find(|l| l.as_bytes() == w.as_slice()) {
                        *sent.entry(format!("{name} {l}")).or_default() += 1;
                    }
                }
            }
            for (line, reply) in lines.iter().zip(&replies) {
                let shown: Vec<String> = line
                    .iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                match reply {
                    Resp::Error(_) => {
                        errors += 1;
                        let text = reply.error_text().unwrap();
                        assert!(
                            !text.contains("internal error") && !text.contains("panic"),
                            "{flavor:?} seed {seed} batch {batch}: {shown:?} -> {text}"
                        );
                    }
                    Resp::Array(Some(_)) | Resp::Int(_) => {
                        values += 1;
                        let mut what = String::from_utf8_lossy(&line[0]).to_ascii_uppercase();
                        if [
                            "RL.PEEK",
                            "RL.REFUND",
                            "RL.CHARGE",
                            "RL.BLOCK",
                            "RL.UNBLOCK",
                        ]
                        .contains(&what.as_str())
                        {
                            what = format!("{what} {}", shown[1].to_ascii_uppercase());
                        }
                        *decided.entry(what).or_default() += 1;
                    }
                    other => panic!("{flavor:?} seed {seed}: {shown:?} -> {other:?}"),
                }
            }
            server.assert_alive();
            let now: Vec<_> = watched.iter().map(|k| frozen_state(&mut c, k)).collect();
            for ((key, was), is) in watched.iter().zip(&before).zip(&now) {
                assert_eq!(
                    is,
                    was,
                    "{flavor:?} seed {seed} batch {batch}: {key} changed (set up as {:?})",
                    foreign.iter().find(|(k, _)| k == key)
                );
            }
        }
        assert_eq!(values + errors, REQUESTS);
        // The generator reaches past the parsers: many calls decide.
        assert!(
            values >= REQUESTS / 15,
            "{flavor:?}: only {values} values, {errors} errors"
        );
        for name in COMMANDS {
            let of_name = |k: &String| k == name || k.starts_with(&format!("{name} "));
            assert!(
                decided.keys().any(of_name),
                "{flavor:?}: no value from {name}: {decided:?}"
            );
        }
        // Every limiter in every form that names one was sent (values
        // or not: what the form's parser does with hostile arguments).
        for limiter in ["SLIDE", "BUCKETS", "THROTTLE", "FIXED", "ACQUIRE"] {
            for name in [
                "RL.PEEK",
                "RL.REFUND",
                "RL.ALL",
                "RL.CHARGE",
                "RL.BLOCK",
                "RL.UNBLOCK",
            ] {
                let form = format!("{name} {limiter}");
                assert!(
                    sent.get(&form).is_some_and(|&n| n >= 20),
                    "{flavor:?}: {form}: {sent:?}"
                );
            }
        }
        let pong: String = redis::cmd("PING").query(&mut c).unwrap();
        assert_eq!(pong, "PONG");
    }
}
