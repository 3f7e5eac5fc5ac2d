//! Rate limits per caller, for fleet reports: a flood from one API key is
//! answered 429 with `Retry-After`, and nobody else waits for it (each
//! caller has its own cell; renders and reads are never limited).

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// How many callers' cells are kept before those at rest are forgotten.
const KEPT_CALLERS: usize = 10_000;

/// Reports per second per caller, after a burst.
pub(crate) struct ReportRate {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
}

impl ReportRate {
    /// `per_second` reports per caller on average, `burst` at once.
    pub(crate) fn new(per_second: u32, burst: u32) -> ReportRate {
        let one = NonZeroU32::MIN;
        let quota = Quota::per_second(NonZeroU32::new(per_second).unwrap_or(one))
            .allow_burst(NonZeroU32::new(burst).unwrap_or(one));
        ReportRate {
            limiter: RateLimiter::keyed(quota),
            clock: DefaultClock::default(),
        }
    }

    /// Counts one report of `caller`; how long to wait when over.
    pub(crate) fn check(&self, caller: &str) -> Result<(), Duration> {
        if self.limiter.len() > KEPT_CALLERS {
            self.limiter.retain_recent();
        }
        self.limiter
            .check_key(&caller.to_owned())
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_caller_past_its_burst_waits_and_another_does_not() {
        let rate = ReportRate::new(1, 3);
        for _ in 0..3 {
            assert!(rate.check("key:flood").is_ok());
        }
        let wait = rate.check("key:flood").unwrap_err();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert!(rate.check("key:other").is_ok());
    }
}
