//! Printing a prompt again when it changes: `--watch`, each time the
//! user's files change; `promptreg follow`, each time a server's label
//! moves.

use std::io::Write;
use std::sync::mpsc;

use promptreg::remote::{Change, Remote};
use promptreg::{PromptRegistry, ReloadEvent};
use serde_json::json;

use super::Output;
use super::render::{Request, show};
use crate::cli::{FollowArgs, ReportArgs};
use crate::options::Session;
use crate::report::Failure;

/// The follower as `--report-interval`, `--instance-id`, `--instance-name`
/// and `--no-reports` ask: it tells the server what it serves, unless told
/// not to.
fn reporting(remote: Remote, args: &ReportArgs) -> Remote {
    if args.no_reports {
        return remote;
    }
    let mut remote = remote.report_interval(args.report_interval);
    if let Some(id) = &args.instance_id {
        remote = remote.instance_id(id);
    }
    if let Some(name) = &args.instance_name {
        remote = remote.instance_name(name);
    }
    remote
}

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
    let mut out = Renders::new(json);
    let mut last = out.print(&show(registry)?);
    for event in inbox {
        match event {
            ReloadEvent::Reloaded(loaded) => {
                let changed: Vec<&str> = loaded.changed.iter().map(|id| id.as_str()).collect();
                match show(registry) {
                    Ok(output) if output.stdout != last => {
                        news.reloaded(&changed, true);
                        last = out.print(&output);
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

/// `promptreg follow ID --server URL`: prints the prompt as the server's
/// label has it, with the user's configuration on top, then again after
/// each move of the label that changes it, with a line on standard error
/// saying what happened (a JSON object a line with `--json`). Runs until
/// interrupted, or until printed `--count` times.
pub fn run(session: &Session, args: &FollowArgs) -> Result<Output, Failure> {
    let target = crate::server_client::target(&session.args)?.ok_or_else(|| {
        Failure::usage(
            "follow reads a server: pass --server URL and --pack NAME (to print again when local files change, use `render --watch`)",
        )
    })?;
    let (changes, inbox) = mpsc::channel();
    let mut target = target;
    target.remote = reporting(target.remote, &args.reports).on_change(move |change| {
        let _ = changes.send(change.clone());
    });
    let registry = PromptRegistry::new();
    let (follower, pack) = target.follow(&registry)?;
    registry.load_config(pack.spec().clone(), session.load_options(&pack))?;
    let inputs = (args.ctx.as_deref(), args.history.as_deref());
    let request = Request::read(session, &pack, &args.id, inputs, args.max_ctx_size)?;
    let news = News {
        json: session.args.json,
    };
    let mut out = Renders::new(session.args.json);
    let mut last = out.print(&show(session, &pack, &registry, &request)?);
    let mut printed = 1;
    let mut shown_etag = follower.status().etag;
    while args.count.is_none_or(|n| printed < n) {
        let Ok(change) = inbox.recv() else { break };
        match change {
            Change::Updated { etag, .. } if Some(&etag) != shown_etag.as_ref() => {
                shown_etag = Some(etag);
                let version = follower.status().versions.get(&args.id).copied();
                match show(session, &pack, &registry, &request) {
                    Ok(output) if output.stdout != last => {
                        news.moved(&args.id, version, true);
                        last = out.print(&output);
                        printed += 1;
                    }
                    Ok(_) => news.moved(&args.id, version, false),
                    Err(failure) => news.failed("the prompt does not render", &failure),
                }
            }
            Change::Failed(why) => news.failed(
                "the label cannot be read; the last good version stays in force",
                &Failure::from(promptreg::Error::new(promptreg::ErrorKind::Remote, why)),
            ),
            Change::Disconnected(why) => news.disconnected(&why),
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

    fn moved(&self, id: &str, version: Option<u64>, shown_again: bool) {
        if self.json {
            eprintln!(
                "{}",
                json!({ "event": "moved", "id": id, "version": version, "printed": shown_again })
            );
            return;
        }
        let version = version.map_or("absent".to_owned(), |v| format!("version {v}"));
        if shown_again {
            eprintln!("── the label moved; {id} is now {version}");
        } else {
            eprintln!("── the label moved; {id} is unchanged ({version})");
        }
    }

    fn disconnected(&self, why: &str) {
        if self.json {
            eprintln!("{}", json!({ "event": "disconnected", "why": why }));
        } else {
            eprintln!("── disconnected, reconnecting: {why}");
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
/// The line between two renders of `--watch` and `follow`, so a script
/// can split what it reads: the ASCII record separator (U+001E) alone on
/// its line, which a terminal does not show and a prompt does not hold.
const RENDER_SEPARATOR: &str = "\u{1e}\n";

/// Prints renders one after another on standard output: as text, each
/// after the first preceded by [`RENDER_SEPARATOR`]; with `--json`, each
/// one compact JSON object on its line (JSON Lines).
struct Renders {
    json: bool,
    printed: usize,
}

impl Renders {
    fn new(json: bool) -> Self {
        Renders { json, printed: 0 }
    }

    /// Prints a command's output and returns its text, to compare the
    /// next render with.
    fn print(&mut self, output: &Output) -> String {
        let mut shown = String::new();
        match &output.json {
            // JSON Lines: the data on one line.
            Some(value) if self.json => shown.push_str(&value.to_string()),
            _ => {
                if self.printed > 0 {
                    shown.push_str(RENDER_SEPARATOR);
                }
                shown.push_str(&output.stdout);
            }
        }
        if !shown.ends_with('\n') {
            shown.push('\n');
        }
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(shown.as_bytes());
        let _ = stdout.flush();
        self.printed += 1;
        output.stdout.clone()
    }
}

fn list(ids: &[&str]) -> String {
    if ids.is_empty() {
        "nothing".to_owned()
    } else {
        ids.join(", ")
    }
}
