//! How a split shares subjects out (`promptreg::split`): over 100,000
//! subject keys, the share that gets the candidate at 1, 10 and 50 %, and
//! who changes arm when the share goes from 10 to 20 %. See BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p promptreg --example split_shares
//! ```

use promptreg::split::{Arm, SplitRule};

const SUBJECTS: usize = 100_000;

fn main() {
    let keys: Vec<String> = (0..SUBJECTS).map(|n| format!("user-{n}")).collect();
    let on = |rule: SplitRule| {
        keys.iter()
            .filter(|k| rule.arm(k) == Arm::Candidate)
            .count()
    };
    for id in [1, 2, 3] {
        for bp in [100, 1000, 5000] {
            let got = on(SplitRule {
                id,
                basis_points: bp,
            }) as f64
                / SUBJECTS as f64
                * 100.0;
            let want = f64::from(bp) / 100.0;
            println!(
                "split {id}: {want:>4} % asked, {got:.3} % got ({:+.3} points)",
                got - want
            );
        }
    }
    let (ten, twenty) = (
        SplitRule {
            id: 1,
            basis_points: 1000,
        },
        SplitRule {
            id: 1,
            basis_points: 2000,
        },
    );
    let (mut up, mut down) = (0, 0);
    for key in &keys {
        match (ten.arm(key), twenty.arm(key)) {
            (Arm::Stable, Arm::Candidate) => up += 1,
            (Arm::Candidate, Arm::Stable) => down += 1,
            _ => {}
        }
    }
    let added = on(twenty) - on(ten);
    println!(
        "10 % -> 20 %: {up} subjects moved to the candidate, {down} back to stable; the candidate gained {added}"
    );
}
