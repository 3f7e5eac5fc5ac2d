//! `--watch`: print again each time the user's files change.

use std::io::Write;
use std::sync::mpsc;

use promptreg::{PromptRegistry, ReloadEvent};

use super::Output;
use crate::report::Failure;

/// Prints `show`'s output now and after every reload that changes it, with
/// a line on standard error saying what changed or what failed to load.
/// Runs until the process is interrupted.
pub fn follow(
    registry: &PromptRegistry,
    show: impl Fn(&PromptRegistry) -> Result<Output, Failure>,
) -> Result<Output, Failure> {
    let (events, inbox) = mpsc::channel();
    let _watching = registry.watch(move |event| {
        let _ = events.send(event);
    })?;
    let mut last = print(&show(registry)?.stdout);
    for event in inbox {
        match event {
            ReloadEvent::Reloaded(loaded) => {
                let changed: Vec<&str> = loaded.changed.iter().map(|id| id.as_str()).collect();
                match show(registry) {
                    Ok(output) if output.stdout != last => {
                        eprintln!("── reloaded; changed: {}", list(&changed));
                        last = print(&output.stdout);
                    }
                    Ok(_) => eprintln!(
                        "── reloaded; this prompt is unchanged (changed: {})",
                        list(&changed)
                    ),
                    Err(failure) => {
                        eprintln!("── reloaded, but the prompt does not render:\n{failure}")
                    }
                }
            }
            ReloadEvent::Failed(error) => {
                let failure = Failure::from(error);
                eprintln!(
                    "── the files do not load; the previous configuration stays in force:\n{failure}"
                );
            }
            _ => {}
        }
    }
    Ok(Output::text(String::new()))
}

/// Prints `text` on its own lines and returns it, to compare with the next.
fn print(text: &str) -> String {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
    text.to_owned()
}

fn list(ids: &[&str]) -> String {
    if ids.is_empty() {
        "nothing".to_owned()
    } else {
        ids.join(", ")
    }
}
