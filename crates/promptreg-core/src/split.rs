//! Which arm of a gradual release a subject gets: a label of a server may
//! serve a candidate revision to a share of subjects (a *split*); the
//! client decides each subject's arm from the subject's key and the
//! split's id alone, so the decision needs no request, holds with the
//! server down, and is the same in every process and language.
//!
//! The subject's bucket is XXH3-64 of its key, seeded with the split's
//! id, scaled to 0..10,000 (basis points); the subject gets the candidate
//! when its bucket is below the split's share. So:
//!
//! - the same subject gets the same arm for as long as the split lasts;
//! - raising the share only moves subjects from the stable arm to the
//!   candidate (those whose bucket the new share covers), never back;
//! - arms of different splits are independent (each split seeds its own
//!   hash);
//! - no allocation, a few nanoseconds for a short key.
//!
//! ```
//! use promptreg_core::split::{Arm, SplitRule};
//!
//! let split = SplitRule { id: 4, basis_points: 1000 }; // 10 %
//! let arm = split.arm("user-42");
//! assert_eq!(arm, split.arm("user-42")); // sticky
//! assert_eq!(SplitRule { basis_points: 0, ..split }.arm("user-42"), Arm::Stable);
//! ```

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The basis points of the whole: 100 %.
pub const ALL: u32 = 10_000;

/// Which state a subject is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arm {
    /// The label's own state.
    Stable,
    /// The split's candidate.
    Candidate,
}

impl Arm {
    /// Its name in provenance and traces: `stable`, `candidate`.
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Stable => "stable",
            Arm::Candidate => "candidate",
        }
    }
}

/// A split as a client needs it: its id and its share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SplitRule {
    /// The split's id, from the server.
    pub id: u64,
    /// The share of subjects the candidate serves, in basis points (0 to
    /// 10,000; more counts as all).
    pub basis_points: u32,
}

impl SplitRule {
    /// The arm `subject` gets.
    pub fn arm(&self, subject: &str) -> Arm {
        match bucket(self.id, subject) < self.basis_points.min(ALL) {
            true => Arm::Candidate,
            false => Arm::Stable,
        }
    }
}

/// The subject's bucket in split `id`: 0 to 9,999, uniform over keys.
pub fn bucket(id: u64, subject: &str) -> u32 {
    let hash = xxh3_64_with_seed(subject.as_bytes(), id);
    // The high bits of hash * 10,000: uniform, no modulo bias to speak of.
    ((u128::from(hash) * u128::from(ALL)) >> 64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subjects() -> impl Iterator<Item = String> {
        (0..100_000).map(|n| format!("user-{n}"))
    }

    fn share(split: SplitRule) -> f64 {
        let on = subjects()
            .filter(|s| split.arm(s) == Arm::Candidate)
            .count();
        on as f64 / 100_000.0 * 100.0
    }

    #[test]
    fn the_candidate_gets_its_share_within_half_a_point() {
        for (bp, percent) in [(100, 1.0), (1000, 10.0), (5000, 50.0)] {
            let got = share(SplitRule {
                id: 7,
                basis_points: bp,
            });
            assert!((got - percent).abs() < 0.5, "{percent} %: {got} %");
        }
        assert_eq!(
            share(SplitRule {
                id: 7,
                basis_points: 0
            }),
            0.0
        );
        assert_eq!(
            share(SplitRule {
                id: 7,
                basis_points: ALL
            }),
            100.0
        );
        assert_eq!(
            share(SplitRule {
                id: 7,
                basis_points: u32::MAX
            }),
            100.0
        );
    }

    #[test]
    fn raising_the_share_moves_only_the_subjects_it_adds() {
        let (ten, twenty) = (
            SplitRule {
                id: 7,
                basis_points: 1000,
            },
            SplitRule {
                id: 7,
                basis_points: 2000,
            },
        );
        let mut moved = 0;
        for subject in subjects() {
            match (ten.arm(&subject), twenty.arm(&subject)) {
                (Arm::Candidate, Arm::Stable) => panic!("{subject} moved back to stable"),
                (Arm::Stable, Arm::Candidate) => {
                    moved += 1;
                    assert!((1000..2000).contains(&bucket(7, &subject)));
                }
                _ => {}
            }
        }
        let added = subjects()
            .filter(|s| (1000..2000).contains(&bucket(7, s)))
            .count();
        assert_eq!(moved, added);
    }

    #[test]
    fn arms_of_two_splits_are_independent() {
        let (a, b) = (
            SplitRule {
                id: 1,
                basis_points: 5000,
            },
            SplitRule {
                id: 2,
                basis_points: 5000,
            },
        );
        let both = subjects()
            .filter(|s| a.arm(s) == Arm::Candidate && b.arm(s) == Arm::Candidate)
            .count();
        let percent = both as f64 / 1000.0;
        assert!((percent - 25.0).abs() < 1.0, "both candidates: {percent} %");
    }

    /// Fixed values, checked against another implementation of XXH3 (the
    /// `xxhash` package of PyPI: `(xxh3_64_intdigest(key, seed) * 10000)
    /// >> 64`): every client, in every language, must agree.
    #[test]
    fn buckets_are_the_same_everywhere() {
        assert_eq!(
            bucket(0, ""),
            ((u128::from(xxh3_64_with_seed(b"", 0)) * 10_000) >> 64) as u32
        );
        let known = [
            bucket(1, "user-1"),
            bucket(4, "user-42"),
            bucket(u64::MAX, "日本"),
        ];
        assert_eq!(known, GOLDEN);
    }

    const GOLDEN: [u32; 3] = [4226, 1839, 5147];
}
