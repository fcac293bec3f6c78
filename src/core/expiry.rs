//! When a limiter's key gets a new expiry.
//!
//! A key must outlive its newest entry's stay in the window (`needed`), or a
//! promoted replica or a reloaded AOF would forget admissions. Setting the
//! expiry to exactly `needed` on every admission costs a write and a
//! replicated `PEXPIREAT` per call. Instead the expiry is moved only when it
//! falls short, and then past `needed` by a slack of 1/4 of the window: a
//! key used more often than that rewrites its expiry once per slack rather
//! than per call, and an idle key lingers at most 1/4 of a window longer.
//! Each move costs about a quarter of an admission (the expiry write and a
//! replicated `PEXPIREAT`), so a key revisited in bursts several seconds
//! apart, as API clients do, should not pay it on every burst.

/// How long an admitted key must live, and how far past that its expiry
/// goes when it moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expiry {
    /// Absolute time (ms) the key must live until: when its newest entry
    /// leaves the window.
    pub needed_ms: i64,
    pub slack_ms: i64,
}

impl Expiry {
    /// The expiry of a key that must live until `needed_ms` under a window
    /// of `window_ms`.
    pub fn new(needed_ms: i64, window_ms: i64) -> Expiry {
        Expiry {
            needed_ms,
            slack_ms: slack_ms(window_ms),
        }
    }

    /// The key's new absolute expiry given its current one (`None`: no
    /// expiry, as for a key being created); `None` when the current expiry
    /// already reaches `needed_ms`, so nothing is written.
    pub fn next(&self, current: Option<i64>) -> Option<i64> {
        match current {
            Some(at) if at >= self.needed_ms => None,
            _ => Some(self.needed_ms.saturating_add(self.slack_ms)),
        }
    }
}

/// The slack added when the expiry moves: 1/4 of the window, at least 1 ms.
pub fn slack_ms(window_ms: i64) -> i64 {
    (window_ms / 4).max(1)
}

#[cfg(test)]
fn extend(current: Option<i64>, needed: i64, window_ms: i64) -> Option<i64> {
    Expiry::new(needed, window_ms).next(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_key_without_expiry_gets_needed_plus_slack() {
        assert_eq!(extend(None, 10_000, 8_000), Some(12_000));
    }

    #[test]
    fn an_expiry_that_reaches_needed_is_kept() {
        assert_eq!(extend(Some(10_000), 10_000, 8_000), None);
        assert_eq!(extend(Some(10_500), 10_000, 8_000), None);
    }

    #[test]
    fn an_expiry_one_ms_short_moves() {
        assert_eq!(extend(Some(9_999), 10_000, 8_000), Some(12_000));
    }

    #[test]
    fn tiny_windows_still_get_a_slack() {
        assert_eq!(slack_ms(1), 1);
        assert_eq!(extend(None, 5, 1), Some(6));
    }

    proptest! {
        /// Whatever the history, after each admission the key lives at
        /// least until `needed` and at most a slack past the latest
        /// `needed` (or its previous expiry, which was itself bounded so).
        #[test]
        fn expiry_stays_between_needed_and_needed_plus_slack(
            window in 1i64..1_000_000,
            steps in proptest::collection::vec(0i64..200_000, 1..50),
        ) {
            let mut expiry: Option<i64> = None;
            let mut now = 0i64;
            let mut moves = 0;
            for step in steps {
                now += step;
                let needed = now + window;
                if let Some(at) = extend(expiry, needed, window) {
                    expiry = Some(at);
                    moves += 1;
                }
                let at = expiry.unwrap();
                prop_assert!(at >= needed);
                prop_assert!(at <= needed + slack_ms(window));
            }
            prop_assert!(moves >= 1);
        }

        /// Admissions closer together than the slack move the expiry at
        /// most once per slack.
        #[test]
        fn frequent_admissions_move_the_expiry_once_per_slack(
            window in 8i64..100_000,
            calls in 2usize..500,
        ) {
            let slack = slack_ms(window);
            let mut expiry = None;
            let mut moves = 0i64;
            for i in 0..calls as i64 {
                if let Some(at) = extend(expiry, i + window, window) {
                    expiry = Some(at);
                    moves += 1;
                }
            }
            prop_assert!(moves <= 1 + calls as i64 / slack);
        }
    }
}
