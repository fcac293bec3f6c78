//! Where the servers differ, by release. Each difference a test expects is
//! one named predicate here, saying which releases and why, and it reads
//! the release of the binary the test runs (`--version`), so the suite
//! holds whatever server an `RL_*` variable points it at (Valkey 7.2,
//! Redis 7.4, ...), not only the ones `make deps` installs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use super::server::Flavor;

/// A server's release, as its binary reports it (`Valkey server v=8.0.1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    pub valkey: bool,
    pub major: u32,
    pub minor: u32,
}

impl Release {
    /// `Redis server v=7.0.15 sha=...` or `Valkey server v=8.0.1 ...`.
    pub fn parse(version_line: &str) -> Option<Release> {
        let valkey = version_line.starts_with("Valkey");
        let v = version_line.split("v=").nth(1)?.split_whitespace().next()?;
        let mut parts = v.split('.').map(|p| p.parse::<u32>());
        Some(Release {
            valkey,
            major: parts.next()?.ok()?,
            minor: parts.next()?.ok()?,
        })
    }

    fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    /// Modules can add ACL categories (`RedisModule_AddACLCategory`):
    /// Redis 7.4+ and Valkey 8.0+. Redis 7.0 to 7.3 and Valkey 7.2 (forked
    /// from Redis 7.2) have no such call: rl loads there without
    /// `@ratelimit` and logs "@ratelimit unavailable".
    pub fn module_acl_categories(&self) -> bool {
        if self.valkey {
            self.at_least(8, 0)
        } else {
            self.at_least(7, 4)
        }
    }

    /// `ACL CAT ratelimit` lists rl's commands: Redis 8.0+ and Valkey 8.1+.
    /// Redis 7.4 and Valkey 8.0 answer an empty list, as they leave module
    /// commands out of that listing, though `+@ratelimit` still grants every
    /// one of them (an ACL user made by the README's recipe works there).
    pub fn acl_cat_lists_module_commands(&self) -> bool {
        if self.valkey {
            self.at_least(8, 1)
        } else {
            self.at_least(8, 0)
        }
    }

    /// `SET key value PXAT <now>` deletes the key at once (its expiry is
    /// not in the future), as the library's refund of a GCRA state to idle
    /// writes it, while the module keeps that key until the ms passes: every
    /// release tested here. Valkey 7.2 keeps the library's key until that ms
    /// passes too, so there both editions hold the same idle state.
    pub fn set_pxat_now_deletes_at_once(&self) -> bool {
        !(self.valkey && self.major == 7)
    }
}

impl Flavor {
    /// The release of this pairing's binary (read once per binary).
    pub fn release(self) -> Release {
        static SEEN: OnceLock<Mutex<HashMap<PathBuf, Release>>> = OnceLock::new();
        let binary = self.binary();
        let mut seen = SEEN.get_or_init(Default::default).lock().unwrap();
        *seen.entry(binary.clone()).or_insert_with(|| {
            let out = Command::new(&binary)
                .arg("--version")
                .output()
                .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
            let text = String::from_utf8_lossy(&out.stdout);
            Release::parse(&text)
                .unwrap_or_else(|| panic!("{}: no release in --version: {text}", binary.display()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Release;

    fn r(line: &str) -> Release {
        Release::parse(line).unwrap()
    }

    #[test]
    fn each_difference_names_the_releases_it_holds_for() {
        let redis70 = r("Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0");
        let redis74 = r("Redis server v=7.4.1 sha=00000000:0");
        let redis80 = r("Redis server v=8.0.2 sha=00000000:1");
        let redis82 = r("Redis server v=8.2.3 sha=00000000:0");
        let valkey72 = r("Valkey server v=7.2.7 sha=00000000:0");
        let valkey80 = r("Valkey server v=8.0.1 sha=00000000:0");
        let valkey81 = r("Valkey server v=8.1.1 sha=00000000:1");
        let valkey91 = r("Valkey server v=9.1.2 sha=00000000:0");
        let all = [
            redis70, redis74, redis80, redis82, valkey72, valkey80, valkey81, valkey91,
        ];
        let which = |p: fn(&Release) -> bool| all.iter().map(p).collect::<Vec<_>>();
        assert_eq!(
            which(Release::module_acl_categories),
            [false, true, true, true, false, true, true, true]
        );
        assert_eq!(
            which(Release::acl_cat_lists_module_commands),
            [false, false, true, true, false, false, true, true]
        );
        assert_eq!(
            which(Release::set_pxat_now_deletes_at_once),
            [true, true, true, true, false, true, true, true]
        );
    }
}
