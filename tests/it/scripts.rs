//! The make targets' scripts as a user meets them (issue #40's first
//! hour): `make load-functions` against a server with a password, `make
//! help`'s columns, `make run` when its free port is taken as the server
//! starts, and `make deps` while another apt holds dpkg's lock.

use crate::harness::*;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn make(args: &[&str]) -> Output {
    Command::new("make")
        .arg("-s")
        .args(args)
        .current_dir(root())
        .output()
        .expect("run make (apt-get install make)")
}

#[test]
fn load_functions_on_a_server_with_a_password_says_how_to_authenticate() {
    let server = Server::start_without_module(Flavor::Redis7);
    let mut c = server.conn();
    let _: () = redis::cmd("ACL")
        .arg(&["SETUSER", "loader", "on", ">loader-pw", "+@all", "~*"])
        .query(&mut c)
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg(&["SET", "requirepass", "s3cret"])
        .query(&mut c)
        .unwrap();
    let port = format!("PORT={}", server.port);

    let out = make(&["load-functions", &port]);
    assert!(!out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("needs authentication")
            && said.contains("AUTH=")
            && said.contains("AUTH_USER="),
        "{said}"
    );
    assert!(!said.contains("Protocol error"), "{said}");

    let out = make(&["load-functions", &port, "AUTH=wrong"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("refused the password"),
        "{}",
        text(&out)
    );

    let out = make(&["load-functions", &port, "AUTH=s3cret"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("function library"), "{}", text(&out));

    let out = make(&[
        "load-functions",
        &port,
        "AUTH=loader-pw",
        "AUTH_USER=loader",
    ]);
    assert!(out.status.success(), "{}", text(&out));

    let mut c = redis::Client::open(format!("redis://:s3cret@127.0.0.1:{}/", server.port))
        .unwrap()
        .get_connection()
        .unwrap();
    let version: String = redis::cmd("FCALL_RO")
        .arg(&["rl_version", "0"])
        .query(&mut c)
        .unwrap();
    assert!(!version.is_empty());
    // The harness stops the server through an unauthenticated connection.
    let _: () = redis::cmd("CONFIG")
        .arg(&["SET", "requirepass", ""])
        .query(&mut c)
        .unwrap();
}

#[test]
fn make_help_starts_every_description_in_one_column() {
    let out = make(&["help"]);
    assert!(out.status.success(), "{}", text(&out));
    let listing = String::from_utf8(out.stdout).unwrap();
    let columns: Vec<(String, usize)> = listing
        .lines()
        .map(|line| {
            let name = line
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            let at = line[2 + name.len()..]
                .find(|ch: char| ch != ' ')
                .map(|i| i + 2 + name.len())
                .unwrap_or(0);
            (name, at)
        })
        .collect();
    assert!(
        columns.iter().any(|(n, _)| n == "load-functions"),
        "{listing}"
    );
    let first = columns[0].1;
    for (name, at) in &columns {
        assert_eq!(
            *at, first,
            "make help: {name}'s description is misaligned:\n{listing}"
        );
        assert!(*at >= 2 + name.len() + 2, "{listing}");
    }
}

/// `make run`'s script with a server that finds its port taken as it
/// starts (a wrapper takes it just before the real server binds it, as
/// another process could between the check and the bind).
#[test]
fn run_takes_the_next_port_when_its_free_port_is_taken_as_the_server_starts() {
    let dir = new_dir(Flavor::Redis7);
    let wrapper = dir.join("redis-server");
    let taker = dir.join("taker.pid");
    let once = dir.join("taken");
    std::fs::write(
        &wrapper,
        format!(
            r#"#!/bin/bash
port=$(printf '%s\n' "$@" | grep -A1 -x -- --port | tail -n 1)
if [ ! -e {once} ]; then
    touch {once}
    python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
time.sleep(120)' "$port" >/dev/null 2>&1 &
    echo $! > {taker}
    sleep 0.5
fi
exec {server} "$@"
"#,
            once = once.display(),
            taker = taker.display(),
            server = Flavor::Redis7.binary().display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();

    // Its own process group: whatever the script leaves behind (the server
    // holds our stdout pipe) is killed at the end, so the test cannot hang.
    let mut run = Command::new(root().join("scripts/run.sh"))
        .process_group(0)
        .env("SERVER", &wrapper)
        .env("MODULE", "target/release/librl.so")
        .env_remove("PORT")
        .env_remove("FUNCTIONS")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run scripts/run.sh");
    let group = format!("-{}", run.id());
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let reader = {
        let lines = lines.clone();
        let stdout = run.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        })
    };
    let answered = wait_until(Duration::from_secs(60), || {
        let said = lines.lock().unwrap().clone();
        // Only once it has moved on: the taker accepts and never answers.
        let Some(moved) = said
            .iter()
            .position(|l| l.contains("was taken by another process"))
        else {
            return false;
        };
        let said = &said[moved..];
        let Some(port) = said.iter().rev().find_map(|l| {
            l.strip_prefix("rl: starting ")
                .and_then(|rest| rest.split(" on port ").nth(1))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|p| p.parse::<u16>().ok())
        }) else {
            return false;
        };
        let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}/")) else {
            return false;
        };
        let Ok(mut c) = client.get_connection_with_timeout(Duration::from_secs(1)) else {
            return false;
        };
        // The port taker accepts and never answers.
        c.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        redis::cmd("RL.SLIDE")
            .arg(&["user:42", "100", "60000"])
            .query::<Vec<i64>>(&mut c)
            .is_ok_and(|r| r[0] == 1 && r[3] == 60000)
    });
    // SIGTERM: the script's trap stops the server it started.
    let _ = Command::new("kill").arg(run.id().to_string()).status();
    let stopped = Instant::now();
    let ended = wait_until(Duration::from_secs(15), || {
        matches!(run.try_wait(), Ok(Some(_)))
    });
    // The port taker is in the group too; only the server must go by itself.
    if let Ok(pid) = std::fs::read_to_string(&taker) {
        let _ = Command::new("kill").arg(pid.trim()).status();
    }
    let server_gone = wait_until(Duration::from_secs(15), || {
        !Command::new("pgrep")
            .args(["-g", &group[1..]])
            .status()
            .is_ok_and(|s| s.success())
    });
    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    let _ = run.wait();
    reader.join().unwrap();
    let said = lines.lock().unwrap().join("\n");
    assert!(
        answered,
        "the server never answered on the port run.sh named:\n{said}"
    );
    assert!(
        said.contains("was taken by another process as the server started: trying port"),
        "{said}"
    );
    assert!(ended, "run.sh did not end on SIGTERM:\n{said}");
    assert!(
        server_gone,
        "run.sh's server outlived the script's SIGTERM:\n{said}"
    );
    assert!(stopped.elapsed() < Duration::from_secs(15));
    let _ = std::fs::remove_dir_all(dir);
}

/// Holds dpkg's frontend lock (an fcntl lock, as apt takes it) for `secs`.
fn hold_dpkg_lock(secs: u32) -> std::process::Child {
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(
            "import fcntl, os, sys, time\n\
             fd = os.open('/var/lib/dpkg/lock-frontend', os.O_RDWR | os.O_CREAT)\n\
             fcntl.lockf(fd, fcntl.LOCK_EX)\n\
             print('held', flush=True)\n\
             time.sleep(float(sys.argv[1]))",
        )
        .arg(secs.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(
        line.trim(),
        "held",
        "could not take dpkg's lock (the tests run as root)"
    );
    child
}

fn apt_get(wait_secs: u32) -> Output {
    // An installed package: apt-get takes the lock, then has nothing to do.
    Command::new("bash")
        .arg("-c")
        .arg(". scripts/apt.sh; SUDO=(); apt_get install -y -qq faketime")
        .current_dir(root())
        .env("RL_APT_RETRY", "1")
        .env("RL_APT_WAIT", wait_secs.to_string())
        .output()
        .unwrap()
}

#[test]
fn deps_waits_for_another_apt_and_says_so() {
    let mut holder = hold_dpkg_lock(3);
    let out = apt_get(60);
    holder.wait().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("another apt or dpkg is running"), "{said}");
    assert!(said.contains("went through"), "{said}");
    assert!(
        !said.contains("E: Could not get lock"),
        "apt's raw error: {said}"
    );

    let mut holder = hold_dpkg_lock(8);
    let out = apt_get(2);
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("still holds dpkg's lock"),
        "{}",
        text(&out)
    );
}
