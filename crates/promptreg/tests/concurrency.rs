//! Renders see whole states: while writers override, append and reset,
//! every rendered text is one that some complete state produces.

use std::collections::HashSet;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};

use promptreg::{Prompt, PromptRegistry};

const ID: &str = "narrator";

/// The texts the writer's states can produce. The writer moves between
/// these states with single calls; a render that mixed two states (say, the
/// override of one and the appender of another) would produce a text that
/// is not listed.
fn valid_outputs() -> HashSet<String> {
    let body = ["default body", "override body"];
    let tails = ["", "\n\nrule"];
    body.iter()
        .flat_map(|b| tails.iter().map(move |t| format!("HEAD\n\n{b}{t}")))
        .collect()
}

#[test]
fn renders_never_see_a_half_applied_change() {
    let registry = PromptRegistry::new();
    registry
        .register(ID, Prompt::new("default body").pin_head("HEAD"))
        .unwrap();
    let valid = valid_outputs();
    let stop = AtomicBool::new(false);
    // The writer starts once both readers are rendering, so the renders
    // overlap the writes even when the scheduler starts the readers late.
    let started = Barrier::new(3);

    std::thread::scope(|s| {
        let readers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    started.wait();
                    loop {
                        let text = registry.render(ID, &()).unwrap();
                        assert!(valid.contains(&text), "mixed state rendered: {text:?}");
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                })
            })
            .collect();

        started.wait();
        for round in 0..2_000 {
            registry.set_override(ID, "en", "override body").unwrap();
            registry.append(ID, "rule").unwrap();
            if round % 2 == 0 {
                registry.reset(ID).unwrap();
            } else {
                registry
                    .register(ID, Prompt::new("default body").pin_head("HEAD"))
                    .unwrap();
                registry.reset(ID).unwrap();
            }
        }
        stop.store(true, Ordering::Relaxed);

        for reader in readers {
            reader.join().unwrap();
        }
    });
}

#[test]
fn a_snapshot_renders_every_prompt_from_the_same_state() {
    let registry = PromptRegistry::new();
    registry.register_default("a", "a0").unwrap();
    registry.register_default("b", "b0").unwrap();
    let stop = AtomicBool::new(false);

    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let snapshot = registry.snapshot();
                let a = snapshot.render("a", &()).unwrap();
                let b = snapshot.render("b", &()).unwrap();
                assert_eq!(a[1..], b[1..], "a and b from different states");
            }
        });
        for n in 1..2_000 {
            // Both change in one published step by overriding the fallback
            // locale's variant of each, then switching locale atomically.
            let locale = if n % 2 == 0 { "en" } else { "fr" };
            registry.set_override("a", locale, format!("a{n}")).unwrap();
            registry.set_override("b", locale, format!("b{n}")).unwrap();
            registry.set_locale(locale).unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        reader.join().unwrap();
    });
}
