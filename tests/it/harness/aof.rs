//! What a server's AOF files logged: as text, or as the commands' words.

use std::path::{Path, PathBuf};

/// The files under `dir`, its subfolders' too, whose names pass `keep`.
fn files_under(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if keep(&path.to_string_lossy()) {
                out.push(path);
            }
        }
    }
    out
}

/// Every AOF file under `dir` (its manifest too) as text, for checking
/// what was logged.
pub fn aof_text(dir: &Path) -> String {
    let mut text = String::new();
    for path in files_under(dir, |name| name.contains(".aof")) {
        text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
    }
    text
}

/// The commands of the AOF files in command form under `dir` (a base
/// written as RDB is left out), each as its words.
pub fn aof_commands(dir: &Path) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for path in files_under(dir, |name| name.ends_with(".aof")) {
        let bytes = std::fs::read(&path).unwrap();
        let mut at = 0;
        let line = |at: &mut usize| {
            let end = at_crlf(&bytes, *at);
            let text = std::str::from_utf8(&bytes[*at..end]).unwrap().to_string();
            *at = end + 2;
            text
        };
        while at < bytes.len() {
            let head = line(&mut at);
            let n: usize = head
                .strip_prefix('*')
                .unwrap_or_else(|| panic!("{}: {head:?}", path.display()))
                .parse()
                .unwrap();
            let mut words = Vec::new();
            for _ in 0..n {
                let len: usize = line(&mut at).strip_prefix('$').unwrap().parse().unwrap();
                words.push(bytes[at..at + len].to_vec());
                at += len + 2;
            }
            out.push(words);
        }
    }
    out
}

fn at_crlf(bytes: &[u8], from: usize) -> usize {
    from + bytes[from..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .expect("a line")
}
