//! `--watch`: print again each time the user's files change.

use std::io::Write;
use std::sync::mpsc;

use promptreg::{PromptRegistry, ReloadEvent};
use serde_json::json;

use super::Output;
use crate::report::Failure;

/// Prints `show`'s output now and after every reload that changes it, with
/// a line on standard error saying what changed or what failed to load (a
/// JSON object a line with `--json`). Runs until the process is
/// interrupted.
pub fn follow(
    registry: &PromptRegistry,
    json: bool,
    show: impl Fn(&PromptRegistry) -> Result<Output, Failure>,
) -> Result<Output, Failure> {
    let (events, inbox) = mpsc::channel();
    let _watching = registry.watch(move |event| {
        let _ = events.send(event);
    })?;
    let news = News { json };
    let mut last = print(&show(registry)?.stdout);
    for event in inbox {
        match event {
            ReloadEvent::Reloaded(loaded) => {
                let changed: Vec<&str> = loaded.changed.iter().map(|id| id.as_str()).collect();
                match show(registry) {
                    Ok(output) if output.stdout != last => {
                        news.reloaded(&changed, true);
                        last = print(&output.stdout);
                    }
                    Ok(_) => news.reloaded(&changed, false),
                    Err(failure) => news.failed("the prompt does not render", &failure),
                }
            }
            ReloadEvent::Failed(error) => news.failed(
                "the files do not load; the previous configuration stays in force",
                &Failure::from(error),
            ),
            _ => {}
        }
    }
    Ok(Output::text(String::new()))
}

/// What the follower says on standard error after a reload.
struct News {
    json: bool,
}

impl News {
    fn reloaded(&self, changed: &[&str], shown_again: bool) {
        if self.json {
            eprintln!(
                "{}",
                json!({ "event": "reloaded", "changed": changed, "printed": shown_again })
            );
        } else if shown_again {
            eprintln!("── reloaded; changed: {}", list(changed));
        } else {
            eprintln!(
                "── reloaded; this prompt is unchanged (changed: {})",
                list(changed)
            );
        }
    }

    fn failed(&self, what: &str, failure: &Failure) {
        if self.json {
            let mut value = failure.to_json();
            value["event"] = json!("failed");
            eprintln!("{value}");
        } else {
            eprintln!("── {what}:\n{failure}");
        }
    }
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
