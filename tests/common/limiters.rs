//! Calls and checks shared by the RL.THROTTLE, CL.THROTTLE and RL.FIXED
//! tests: typed command helpers, a state snapshot with the absolute expiry,
//! a primary with a live replica, and many connections at once.

use super::{Flavor, Reply4, Server};

/// `RL.THROTTLE key max_burst count period_ms [quantity]`.
pub fn throttle(
    c: &mut redis::Connection,
    key: &str,
    spec: [u64; 3],
    quantity: Option<u64>,
) -> Reply4 {
    let v: Vec<i64> = redis::cmd("RL.THROTTLE")
        .arg(key)
        .arg(&spec[..])
        .arg(quantity.as_slice())
        .query(c)
        .expect("RL.THROTTLE");
    v.try_into().expect("four integers")
}

/// `CL.THROTTLE key max_burst count period_s [quantity]`.
pub fn cl_throttle(
    c: &mut redis::Connection,
    key: &str,
    spec: [u64; 3],
    quantity: Option<u64>,
) -> [i64; 5] {
    let v: Vec<i64> = redis::cmd("CL.THROTTLE")
        .arg(key)
        .arg(&spec[..])
        .arg(quantity.as_slice())
        .query(c)
        .expect("CL.THROTTLE");
    v.try_into().expect("five integers")
}

/// `RL.FIXED key limit window_ms [COST cost]`.
pub fn fixed(
    c: &mut redis::Connection,
    key: &str,
    limit: u64,
    window: u64,
    cost: Option<u64>,
) -> Reply4 {
    let mut cmd = redis::cmd("RL.FIXED");
    cmd.arg(key).arg(limit).arg(window);
    if let Some(cost) = cost {
        cmd.arg("COST").arg(cost);
    }
    let v: Vec<i64> = cmd.query(c).expect("RL.FIXED");
    v.try_into().expect("four integers")
}

/// The error text a command line gets (panics if it succeeds).
pub fn error_of(c: &mut redis::Connection, line: &[&str]) -> String {
    let mut cmd = redis::cmd(line[0]);
    for a in &line[1..] {
        cmd.arg(*a);
    }
    match cmd.query::<redis::Value>(c) {
        Ok(v) => panic!("{line:?} succeeded: {v:?}"),
        Err(e) => e.to_string(),
    }
}

/// A key as stored: its DUMP (type, encoding-independent value) and its
/// absolute expiry in ms (`PEXPIRETIME`, stable while time passes).
pub fn state(c: &mut redis::Connection, key: &str) -> (Option<Vec<u8>>, i64) {
    let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(c).unwrap();
    let at: i64 = redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap();
    (dump, at)
}

/// The value and absolute expiry of a string key.
pub fn value_and_expiry(c: &mut redis::Connection, key: &str) -> (Option<String>, i64) {
    let value: Option<String> = redis::cmd("GET").arg(key).query(c).unwrap();
    let at: i64 = redis::cmd("PEXPIRETIME").arg(key).query(c).unwrap();
    (value, at)
}

/// Runs `calls` calls of `call` on each of `clients` connections at once and
/// returns how many were admitted (first reply field 1 for rl commands).
pub fn admitted_concurrently(
    server: &Server,
    clients: usize,
    calls: usize,
    call: fn(&mut redis::Connection) -> bool,
) -> usize {
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(clients));
    let handles: Vec<_> = (0..clients)
        .map(|_| {
            let mut c = server.conn();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                (0..calls).filter(|_| call(&mut c)).count()
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).sum()
}

/// Starts a server of `flavor` without rl, in its own directory, for
/// loading the module by hand.
pub fn server_without_module(flavor: Flavor, name: &str) -> Server {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!(
        "target/test-servers/{}-{name}-{}",
        std::process::id(),
        format!("{flavor:?}").to_lowercase()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Server::start_in(flavor, dir, &["--enable-module-command", "yes"], false)
}

/// Each command line gets an error containing its expected text.
pub fn assert_errors(c: &mut redis::Connection, flavor: Flavor, cases: &[(&[&str], &str)]) {
    for (line, want) in cases {
        let err = error_of(c, line);
        assert!(err.contains(want), "{flavor:?} {line:?}: {err}");
    }
}

/// `line` (on `key`, which holds another type) gets WRONGTYPE and leaves
/// the key exactly as it was.
pub fn assert_wrongtype_untouched(
    c: &mut redis::Connection,
    flavor: Flavor,
    key: &str,
    line: &[&str],
) {
    let before = state(c, key);
    let err = error_of(c, line);
    assert!(err.starts_with("WRONGTYPE"), "{flavor:?}: {err}");
    assert_eq!(state(c, key), before, "{flavor:?}");
}
