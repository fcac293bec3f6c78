//! Which rl this is: the version of Cargo.toml, the host binding the build
//! selected and the commit `build.rs` stamped. `MODULE LIST` shows the
//! version as a number, `INFO rl` all three.

/// `1.0.0`: Cargo.toml's version, the one every edition and package carries.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The host binding: `redis` (the Redis module API, loads in Redis and
/// Valkey) or `valkey` (native Valkey), as the release tarballs are named.
#[cfg(feature = "redis")]
pub const BUILD: &str = "redis";
#[cfg(feature = "valkey")]
pub const BUILD: &str = "valkey";

/// The commit built (12 hex digits), or `unknown` (see build.rs).
pub const COMMIT: &str = env!("RL_COMMIT");

/// `MODULE LIST`'s `ver`: major*10000 + minor*100 + patch, the convention
/// of RedisJSON and RediSearch (1.0.0 is 10000).
pub const MODULE_VERSION: i32 = number(env!("CARGO_PKG_VERSION_MAJOR")) * 10000
    + number(env!("CARGO_PKG_VERSION_MINOR")) * 100
    + number(env!("CARGO_PKG_VERSION_PATCH"));

/// A decimal in a const: Cargo gives each version part as text. A minor or
/// patch over 99 would overlap the next part, so it fails the build.
const fn number(text: &str) -> i32 {
    let bytes = text.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < bytes.len() {
        assert!(bytes[i].is_ascii_digit(), "version parts are decimal");
        n = n * 10 + (bytes[i] - b'0') as i32;
        i += 1;
    }
    n
}

const _: () = assert!(number(env!("CARGO_PKG_VERSION_MINOR")) < 100);
const _: () = assert!(number(env!("CARGO_PKG_VERSION_PATCH")) < 100);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_version_packs_major_minor_patch() {
        assert_eq!(number("0"), 0);
        assert_eq!(number("17"), 17);
        let parts: Vec<i32> = VERSION.split('.').map(|p| p.parse().unwrap()).collect();
        assert_eq!(MODULE_VERSION, parts[0] * 10000 + parts[1] * 100 + parts[2]);
    }
}
