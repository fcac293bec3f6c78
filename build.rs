//! Stamps the build with the commit it was made from, for `INFO rl`'s
//! `rl_commit`: `RL_COMMIT` from the environment when set (a build from a
//! source tarball has no .git to ask), else `git rev-parse` when this crate
//! is the top of a git checkout, else `unknown`. A crate vendored inside
//! another repository must not report that repository's commit, hence the
//! top-level check.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=RL_COMMIT");
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let ours = git(&["rev-parse", "--show-toplevel"])
        .is_some_and(|top| same_dir(Path::new(&top), &manifest_dir));
    if ours {
        // Rebuild when HEAD moves: HEAD names another branch, or the branch
        // (a loose ref, or packed-refs after `git gc`) gets a commit.
        let head_ref = git(&["rev-parse", "--symbolic-full-name", "HEAD"]);
        let watched = [Some("HEAD"), head_ref.as_deref(), Some("packed-refs")];
        for name in watched.into_iter().flatten() {
            if let Some(path) = git(&["rev-parse", "--git-path", name]) {
                if Path::new(&path).exists() {
                    println!("cargo:rerun-if-changed={path}");
                }
            }
        }
    } else {
        println!("cargo:rerun-if-changed=build.rs");
    }
    let commit = std::env::var("RL_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| {
            if ours {
                git(&["rev-parse", "--short=12", "HEAD"])
            } else {
                None
            }
        })
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=RL_COMMIT={commit}");
}
