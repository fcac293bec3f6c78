//! The test-fixture modules (`examples/`): `nametaker`, which owns command
//! names before rl loads, and `rl_panic_probe`, rl with a command that
//! panics. `cargo test` and `cargo build --release --examples` build them.

use std::path::PathBuf;

use super::server::{new_dir, Flavor, Server};

/// The fixture module `name` (`nametaker`, `rl_panic_probe`).
pub fn fixture(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("target/release/examples/lib{name}.so"));
    assert!(
        path.is_file(),
        "fixture module not found at {} (run `cargo build --release --examples`; `make test` does)",
        path.display()
    );
    path
}

/// A server that loads these modules in this order, each with its load
/// arguments (rl itself is `flavor.module()`).
pub fn start_with_modules(flavor: Flavor, modules: &[(PathBuf, &[&str])]) -> Server {
    let mut extra: Vec<String> = vec!["--enable-module-command".into(), "yes".into()];
    for (path, args) in modules {
        extra.push("--loadmodule".into());
        extra.push(path.to_str().unwrap().into());
        extra.extend(args.iter().map(|a| a.to_string()));
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    Server::start_in(flavor, new_dir(flavor), &extra, false)
}
