//! The committed library is what its source assembles to: users download
//! `functions/rl.lua`, the developers edit `functions/src/`, and a change
//! to one without `make functions` must not pass.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The assembly `make functions` would write, from the script itself
/// (its file list is the one place the order is kept).
fn assembly() -> String {
    let out = Command::new("bash")
        .arg(root().join("scripts/assemble-functions.sh"))
        .arg("-")
        .output()
        .expect("run scripts/assemble-functions.sh");
    assert!(
        out.status.success(),
        "scripts/assemble-functions.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the assembly is UTF-8")
}

#[test]
fn committed_library_is_the_assembly_of_functions_src() {
    // Read now, not compiled in: an edit after the last build still counts.
    let committed =
        std::fs::read_to_string(root().join("functions/rl.lua")).expect("read functions/rl.lua");
    let assembled = assembly();
    if let Some(i) = committed
        .lines()
        .zip(assembled.lines())
        .position(|(a, b)| a != b)
    {
        panic!(
            "functions/rl.lua differs from the assembly of functions/src/ at line {}: \
             edit functions/src/ and run `make functions`",
            i + 1
        );
    }
    assert!(
        committed == assembled,
        "functions/rl.lua and the assembly of functions/src/ differ in length: run `make functions`"
    );
    assert!(committed.starts_with("#!lua name=rl\n"));
}
