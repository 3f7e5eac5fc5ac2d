//! When a failed delivery is tried again: exponential waits with jitter,
//! for a bounded time.

use std::time::Duration;

use promptreg_store::{Attempted, Timestamp};

/// The retry schedule. The wait after attempt `n` is
/// `first × 2^(n-1)`, at most `longest`, of which a random half is
/// taken off (so receivers coming back are not hit by every sender at
/// once); a delivery is given up when its next attempt would come more
/// than `for_at_most` after it was queued.
///
/// The defaults: 5 s, then 10 s, 20 s, … up to an hour between
/// attempts, for a day: about 30 attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retries {
    /// The wait after the first failure.
    pub first: Duration,
    /// The longest wait between attempts.
    pub longest: Duration,
    /// How long after it was queued a delivery is still tried.
    pub for_at_most: Duration,
}

impl Default for Retries {
    fn default() -> Retries {
        Retries {
            first: Duration::from_secs(5),
            longest: Duration::from_secs(3600),
            for_at_most: Duration::from_secs(24 * 3600),
        }
    }
}

impl Retries {
    /// What follows failed attempt `attempt` (from 1) of a delivery
    /// retried since `since`, at `now`; `jitter` is a random fraction in
    /// `[0, 1)`.
    pub fn after_failure(
        &self,
        attempt: u32,
        since: Timestamp,
        now: Timestamp,
        jitter: f64,
    ) -> Attempted {
        let doubled = self.first.saturating_mul(
            1u32.checked_shl(attempt.saturating_sub(1))
                .unwrap_or(u32::MAX),
        );
        let full = doubled.min(self.longest);
        let wait = full.mul_f64(1.0 - jitter.clamp(0.0, 1.0) / 2.0);
        let at = now.0.saturating_add(millis(wait));
        match at > since.0.saturating_add(millis(self.for_at_most)) {
            true => Attempted::GiveUp,
            false => Attempted::RetryAt(Timestamp(at)),
        }
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A random fraction in `[0, 1)`; 0 when the system has no randomness
/// to give (the waits are then the longest of their range).
pub(crate) fn jitter() -> f64 {
    let mut bytes = [0u8; 4];
    match getrandom::fill(&mut bytes) {
        Ok(()) => f64::from(u32::from_le_bytes(bytes)) / (f64::from(u32::MAX) + 1.0),
        Err(_) => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: i64 = 1000;

    fn wait(retries: &Retries, attempt: u32, jitter: f64) -> i64 {
        match retries.after_failure(attempt, Timestamp(0), Timestamp(0), jitter) {
            Attempted::RetryAt(at) => at.0,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn waits_double_up_to_the_longest_and_jitter_takes_off_at_most_half() {
        let retries = Retries::default();
        assert_eq!(wait(&retries, 1, 0.0), 5 * SECOND);
        assert_eq!(wait(&retries, 2, 0.0), 10 * SECOND);
        assert_eq!(wait(&retries, 3, 0.0), 20 * SECOND);
        assert_eq!(wait(&retries, 20, 0.0), 3600 * SECOND);
        assert_eq!(wait(&retries, 1000, 0.0), 3600 * SECOND);
        assert_eq!(wait(&retries, 1, 0.999_999), 2500);
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }

    #[test]
    fn a_delivery_is_given_up_a_day_after_it_was_queued() {
        let retries = Retries::default();
        let day = 24 * 3600 * SECOND;
        let late = Timestamp(day - 2 * SECOND);
        assert_eq!(
            retries.after_failure(3, Timestamp(0), late, 0.0),
            Attempted::GiveUp
        );
        assert!(matches!(
            retries.after_failure(3, Timestamp(0), Timestamp(day - 60 * SECOND), 0.0),
            Attempted::RetryAt(_)
        ));
    }

    #[test]
    fn the_default_schedule_makes_about_thirty_attempts_in_a_day() {
        let retries = Retries::default();
        let (mut now, mut attempts) = (Timestamp(0), 1);
        while let Attempted::RetryAt(at) = retries.after_failure(attempts, Timestamp(0), now, 0.0) {
            now = at;
            attempts += 1;
        }
        assert!((30..=35).contains(&attempts), "{attempts}");
    }
}
