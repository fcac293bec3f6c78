//! One version everywhere: Cargo.toml, the module (`MODULE LIST`'s `ver`,
//! `INFO rl`'s `rl_version`), the function library (its source, the
//! assembled file and `FCALL_RO rl_version`), the Python and npm packages.
//! Each manifest is read as a file, so a release that bumps one and forgets
//! another fails here.

use std::path::Path;

use crate::functions::start_functions_only;
use crate::harness::resp::{field, items, text};
use crate::harness::*;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The value of the first line `<prefix>"x"` or `<prefix>'x'` of `text`.
fn quoted_after(text: &str, prefix: &str, file: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(|rest| rest.trim().trim_matches(['"', '\'']).to_string())
        .unwrap_or_else(|| panic!("{file} has no line starting {prefix:?}"))
}

/// Every place the release version is written, by file.
fn manifest_versions() -> Vec<(&'static str, String)> {
    let package: serde_json::Value =
        serde_json::from_str(&read("clients/node/package.json")).unwrap();
    let files = [
        ("Cargo.toml", "version = "),
        ("clients/python/pyproject.toml", "version = "),
        ("functions/src/prelude/errors.lua", "local VERSION = "),
        ("functions/rl.lua", "local VERSION = "),
    ];
    let mut out: Vec<(&str, String)> = files
        .iter()
        .map(|(file, prefix)| (*file, quoted_after(&read(file), prefix, file)))
        .collect();
    out.push((
        "clients/node/package.json",
        package["version"].as_str().unwrap().to_string(),
    ));
    out
}

/// Cargo.toml's version, once every manifest agrees with it.
fn the_version() -> String {
    let versions = manifest_versions();
    let (_, first) = &versions[0];
    for (file, v) in &versions {
        assert_eq!(v, first, "{file} says {v}, Cargo.toml says {first}");
    }
    first.clone()
}

#[test]
fn every_manifest_names_the_same_version() {
    let v = the_version();
    assert_eq!(v, env!("CARGO_PKG_VERSION"));
    let parts: Vec<&str> = v.split('.').collect();
    assert_eq!(parts.len(), 3, "{v}: semver is major.minor.patch");
    assert!(parts.iter().all(|p| p.parse::<u32>().is_ok()), "{v}");
}

/// The commit the tests' modules were built from: HEAD, when git can say.
fn head_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn the_module_reports_its_version_build_and_commit() {
    let v = the_version();
    let n: Vec<i64> = v.split('.').map(|p| p.parse().unwrap()).collect();
    let ver = n[0] * 10000 + n[1] * 100 + n[2];
    let head = head_commit();
    on_every_server(|server| {
        let f = server.flavor;
        let mut c = server.conn();
        let list: redis::Value = redis::cmd("MODULE").arg("LIST").query(&mut c).unwrap();
        let rl = items(&list)
            .iter()
            .find(|m| text(&field(m, "name")) == "rl")
            .unwrap_or_else(|| panic!("{f:?}: no rl in {list:?}"));
        assert_eq!(text(&field(rl, "ver")), ver.to_string(), "{f:?}");

        let info: String = redis::cmd("INFO").arg("rl").query(&mut c).unwrap();
        let fields: Vec<&str> = info.lines().filter(|l| l.contains(':')).collect();
        let build = if f == Flavor::Valkey9Native {
            "valkey"
        } else {
            "redis"
        };
        // First, before the counters.
        assert_eq!(
            fields[..2],
            [format!("rl_version:{v}"), format!("rl_build:{build}")],
            "{f:?}: {info}"
        );
        let commit = fields[2]
            .strip_prefix("rl_commit:")
            .unwrap_or_else(|| panic!("{f:?}: {info}"));
        match &head {
            Some(head) => assert_eq!(commit, head, "{f:?}: a module built before HEAD moved"),
            None => assert!(
                commit == "unknown"
                    || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
                "{f:?}: {commit}"
            ),
        }
    });
}

#[test]
fn the_library_reports_the_same_version() {
    let v = the_version();
    for flavor in [Flavor::Redis7, Flavor::Valkey9] {
        let server = start_functions_only(flavor, &[]);
        let mut c = server.conn();
        let got: String = redis::cmd("FCALL_RO")
            .arg("rl_version")
            .arg(0)
            .query(&mut c)
            .unwrap();
        assert_eq!(got, v, "{flavor:?}");
    }
}
