//! The function edition's ACL recipe (docs/operations.md, "The function
//! edition"): a function's commands are checked as its caller's, so the
//! recipe grants `FCALL`, `FCALL_RO` and every command the library runs,
//! by name. It is the one list: the static test reads the library's calls
//! from `functions/rl.lua` and requires the documented line to name exactly
//! those; the server test makes that user on Redis 7.0 and Valkey 9.1 (the
//! library loaded by the default user), runs every function as it, and
//! shows each command it grants needed by a call that fails without it.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use super::differential::{fcall_line, run_line};
use super::start_functions_only;
use crate::harness::all_commands::{every_command, mixed_lines, words};
use crate::harness::*;

/// Commands the library asks with `redis.pcall` and goes on without when
/// refused: left out of the recipe on purpose (the docs say why).
const OPTIONAL: [&str; 1] = ["INFO"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The documented recipe: the `ACL SETUSER ... +fcall ...` line of
/// docs/operations.md, its words after the prompt.
fn recipe() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("docs/operations.md")).unwrap();
    let line = text
        .lines()
        .filter_map(|l| l.split_once("> ").map(|(_, cmd)| cmd))
        .find(|cmd| cmd.starts_with("ACL SETUSER ") && cmd.contains(" +fcall "))
        .expect("docs/operations.md has no `ACL SETUSER ... +fcall ...` session line");
    line.split_whitespace().map(str::to_string).collect()
}

/// The commands a recipe grants by name, lowercase, without the two calls.
fn granted(recipe: &[String]) -> BTreeSet<String> {
    recipe
        .iter()
        .filter_map(|w| w.strip_prefix('+'))
        .filter(|c| *c != "fcall" && *c != "fcall_ro")
        .map(str::to_lowercase)
        .collect()
}

/// Lua code without its comments (`--` to the end of the line, outside a
/// string), so a call named in a comment is not counted.
fn code_of(lua: &str) -> String {
    let mut out = String::new();
    for line in lua.lines() {
        let mut quote = None;
        let mut prev = ' ';
        let mut end = line.len();
        for (i, ch) in line.char_indices() {
            match quote {
                Some(q) if ch == q && prev != '\\' => quote = None,
                Some(_) => {}
                None if ch == '\'' || ch == '"' => quote = Some(ch),
                None if ch == '-' && prev == '-' => {
                    end = i - 1;
                    break;
                }
                None => {}
            }
            prev = ch;
        }
        out.push_str(&line[..end]);
        out.push('\n');
    }
    out
}

/// What the library runs: (every command, those only ever `redis.pcall`ed).
/// A call's command is its first argument, a string literal; `typed_read`
/// passes its arguments to `redis.pcall` and raises what it gets back
/// (WRONGTYPE as rl's error), so its literals count as calls. The two calls
/// that are not literals are read where their argument comes from; any
/// other form fails here, to be taught to this test.
fn library_commands(lua: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let code = code_of(lua);
    let site = regex::Regex::new(
        r"(redis\.call|redis\.pcall|typed_read)\s*\(\s*('[^']*'|\.\.\.|unpack\(\w+\)|[^,)]*)",
    )
    .unwrap();
    let literal = regex::Regex::new(r"^'([A-Za-z]+)'$").unwrap();
    let (mut called, mut pcalled) = (BTreeSet::new(), BTreeSet::new());
    for m in site.captures_iter(&code) {
        let (how, arg) = (&m[1], m[2].trim());
        let name = if let Some(l) = literal.captures(arg) {
            l[1].to_uppercase()
        } else if how == "redis.pcall" && arg == "..." {
            continue; // typed_read's own body: its callers are counted
        } else if let Some(table) = arg
            .strip_prefix("unpack(")
            .and_then(|a| a.strip_suffix(')'))
        {
            // `redis.call(unpack(args))`: the nearest `local args = { 'CMD', ...`
            // before it names the command.
            let before = &code[..m.get(0).unwrap().start()];
            let open = format!("local {table} = {{");
            let at = before
                .rfind(&open)
                .unwrap_or_else(|| panic!("no `{open}` before {}", &m[0]));
            let first = before[at + open.len()..]
                .split(',')
                .next()
                .unwrap()
                .trim()
                .to_string();
            let l = literal
                .captures(&first)
                .unwrap_or_else(|| panic!("{} builds its command from {first}", &m[0]));
            l[1].to_uppercase()
        } else if how == "typed_read" && arg == "..." {
            continue; // its definition
        } else {
            panic!(
                "functions/rl.lua: `{}`: a call whose command this test cannot read",
                &m[0]
            );
        };
        if how == "redis.pcall" {
            pcalled.insert(name.clone());
        }
        called.insert(name);
    }
    let raised: BTreeSet<String> = site
        .captures_iter(&code)
        .filter(|m| &m[1] != "redis.pcall")
        .filter_map(|m| literal.captures(m[2].trim()).map(|l| l[1].to_uppercase()))
        .collect();
    let pcall_only = pcalled.difference(&raised).cloned().collect();
    (called, pcall_only)
}

#[test]
fn the_library_recipe_names_exactly_the_commands_the_library_runs() {
    let lua = std::fs::read_to_string(root().join("functions/rl.lua")).unwrap();
    let (called, pcall_only) = library_commands(&lua);
    for c in OPTIONAL {
        assert!(
            pcall_only.contains(c),
            "{c} is left out of the recipe as optional, but the library {}",
            if called.contains(c) {
                "raises its refusal (redis.call or typed_read)"
            } else {
                "no longer asks it: drop it from OPTIONAL and the docs"
            }
        );
    }
    let needed: BTreeSet<String> = called
        .iter()
        .filter(|c| !OPTIONAL.contains(&c.as_str()))
        .map(|c| c.to_lowercase())
        .collect();
    let recipe = recipe();
    let granted = granted(&recipe);
    let missing: Vec<_> = needed.difference(&granted).collect();
    let extra: Vec<_> = granted.difference(&needed).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/operations.md's recipe and functions/rl.lua differ: the library runs {missing:?} \
         that the recipe lacks; the recipe grants {extra:?} that the library does not need"
    );
    assert!(
        granted.len() >= 20,
        "{granted:?}: the library's calls were not read"
    );
    // The calls, the keys, and nothing by category or pattern beyond them.
    for w in &recipe[3..] {
        let ok = w == "on"
            || w.starts_with('>')
            || w == "~rl:*"
            || (w.starts_with('+') && !w.starts_with("+@"));
        assert!(
            ok,
            "{w}: the recipe grants only commands by name and rl: keys"
        );
    }
    for w in ["+fcall", "+fcall_ro", "~rl:*"] {
        assert!(recipe.iter().any(|r| r == w), "the recipe lacks {w}");
    }
    // The docs' count of the commands is the list's.
    let docs = std::fs::read_to_string(root().join("docs/operations.md")).unwrap();
    let count = format!("the {} commands", granted.len());
    assert!(
        docs.contains(&count),
        "docs/operations.md does not say `{count}`"
    );
}

/// Steps of (ms to sleep first, lines on keys under `prefix`): every
/// function by [`mixed_lines`] and [`every_command`], then the library's
/// paths they do not reach: the plain `RL.FIXED` on a key it already counts
/// (INCRBY), hand blocks lifted from keys that held nothing else (DEL), a
/// lease set past the 64 a call walks (ZCOUNT), a bucket window whose
/// oldest fields left it (HDEL), and a sliding log whose oldest entry left
/// it (ZREMRANGEBYRANK), while their keys live on.
fn timeline(prefix: &str) -> Vec<(u64, Vec<Vec<String>>)> {
    let k = |c: &str| format!("{prefix}:{c}");
    let s = |l: &[&str]| l.iter().map(|w| w.to_string()).collect::<Vec<String>>();
    let buckets = s(&["RL.BUCKETS", &k("buckets"), "50", "100", "PRECISION", "10"]);
    let log = s(&["RL.SLIDE", &k("log"), "5", "120"]);
    let mut now: Vec<Vec<String>> = mixed_lines(prefix, 2)
        .into_iter()
        .map(|l| {
            l.into_iter()
                .map(|w| String::from_utf8(w).unwrap())
                .collect()
        })
        .chain(every_command(&format!("{prefix}:every:")))
        .collect();
    now.extend([
        s(&["RL.FIXED", &k("plain"), "5", "600000"]),
        s(&["RL.FIXED", &k("plain"), "5", "600000"]),
        s(&["RL.BLOCK", "FIXED", &k("ban"), "600000"]),
        s(&["RL.UNBLOCK", "FIXED", &k("ban")]),
        s(&["RL.BLOCK", "BUCKETS", &k("bban"), "600000"]),
        s(&["RL.UNBLOCK", "BUCKETS", &k("bban")]),
    ]);
    now.extend((0..66).map(|_| s(&["RL.ACQUIRE", &k("leases"), "100", "600000"])));
    // Then a few calls per user on time (a key lives until the window
    // after its newest write has passed, and a quarter more): bucket fields
    // flushed 20 ms apart into a 100 ms window, the oldest past it about
    // 150 ms in while the key lives on; log entries at about 0 and 40 ms in
    // a 120 ms window, the first past it at about 150 ms and the second at
    // about 210 ms, both while the key lives on.
    let mut steps = vec![(0, now), (0, vec![buckets.clone(), log.clone()])];
    steps.push((20, vec![buckets.clone()]));
    steps.push((20, vec![buckets.clone(), log.clone()]));
    steps.push((20, vec![buckets.clone()]));
    steps.push((90, vec![buckets, log.clone()]));
    steps.push((60, vec![log]));
    steps
}

/// The commands `ACL LOG` says `user` was refused (reason `command`).
fn refused_commands(admin: &mut redis::Connection, user: &str) -> BTreeSet<String> {
    let log: Vec<Vec<redis::Value>> = redis::cmd("ACL")
        .arg(&["LOG", "100000"])
        .query(admin)
        .unwrap();
    log.iter()
        .filter_map(|entry| {
            let field = |name: &str| -> Option<String> {
                let at = entry
                    .iter()
                    .position(|v| redis::from_redis_value::<String>(v).is_ok_and(|s| s == name))?;
                redis::from_redis_value(entry.get(at + 1)?).ok()
            };
            let ours = field("username")? == user && field("reason")? == "command";
            ours.then(|| field("object"))?
        })
        .collect()
}

#[test]
fn the_library_recipe_runs_every_function_and_needs_each_command() {
    for flavor in [Flavor::Redis7, Flavor::Valkey9] {
        the_library_recipe_runs_on(flavor);
    }
}

/// The test above on one server (`tests/it/older/` runs it on more).
pub fn the_library_recipe_runs_on(flavor: Flavor) {
    let recipe = recipe();
    let user = recipe[2].clone();
    let password = recipe
        .iter()
        .find_map(|w| w.strip_prefix('>'))
        .expect("the recipe sets a password")
        .to_string();
    let commands = granted(&recipe);
    let server = start_functions_only(flavor, &["--acllog-max-len", "100000"]);
    let mut admin = server.conn();
    // The recipe's user, and one more per command it grants, made by
    // the same line without that command: one timeline for them all.
    let mut users = vec![(user.clone(), None)];
    users.extend(
        commands
            .iter()
            .map(|c| (format!("{user}-without-{c}"), Some(c))),
    );
    let mut conns = Vec::new();
    for (name, without) in &users {
        let mut line = recipe.clone();
        line[2] = name.clone();
        if let Some(c) = without {
            line.push(format!("-{c}"));
        }
        run(&mut admin, &words(&line)).unwrap();
        let url = format!("redis://{name}:{password}@127.0.0.1:{}/", server.port);
        conns.push(redis::Client::open(url).unwrap().get_connection().unwrap());
    }
    let timelines: Vec<_> = users
        .iter()
        .map(|(name, _)| timeline(&format!("rl:{name}")))
        .collect();
    let mut failed = vec![Vec::new(); users.len()];
    let sleeps: Vec<u64> = timelines[0].iter().map(|(ms, _)| *ms).collect();
    for (step, ms) in sleeps.into_iter().enumerate() {
        std::thread::sleep(Duration::from_millis(ms));
        for (i, c) in conns.iter_mut().enumerate() {
            for line in &timelines[i][step].1 {
                let f = fcall_line(&words(line));
                if let Err(e) = run_line(c, &f) {
                    failed[i].push((f, e));
                }
            }
        }
    }
    assert!(
        failed[0].is_empty(),
        "{flavor:?}: as the recipe's user: {:#?}",
        failed[0]
    );
    // Each command granted is needed: without it, a call is refused
    // for it. ACL LOG names the command (Redis 7.0's error text inside
    // a script does not).
    let unreached: Vec<_> = users
        .iter()
        .zip(&failed)
        .filter_map(|((name, without), failed)| {
            let c = (*without)?;
            let refused = refused_commands(&mut admin, name);
            (failed.is_empty() || !refused.contains(c)).then_some(c)
        })
        .collect();
    assert!(
        unreached.is_empty(),
        "{flavor:?}: a user without any one of {unreached:?} runs every call: the \
         workload never reaches them (reach them, or they are not needed)"
    );
    // Nothing outside rl:, and a refused call writes nothing.
    let err = run_line(
        &mut conns[0],
        &fcall_line(&["RL.SLIDE", "other:1", "5", "1000"]),
    );
    assert!(
        err.as_ref().is_err_and(|e| e.starts_with("NOPERM")),
        "{flavor:?}: {err:?}"
    );
    assert_eq!(exists(&mut admin, &["other:1"]), 0, "{flavor:?}");
}
