//! Printing a prompt again when it changes: `--watch`, each time the
//! user's files change; `promptreg follow`, each time a server's label
//! moves.

use promptreg::prelude::*;
use std::io::Write;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use promptreg::remote::{Change, Remote};
use promptreg::split::{Arm, SplitRule};
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
pub(crate) fn reporting(remote: Remote, args: &ReportArgs) -> Remote {
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
    let news = News::new(json);
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

/// How often `promptreg follow` looks at the follower's status between
/// changes: a split's step and a sync that clears an error are no
/// [`Change`] of their own.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// `promptreg follow ID --server URL`: prints the prompt as the server's
/// label has it (with `--subject`, as that subject is served: a split's
/// candidate when its share picks the subject), with the user's
/// configuration on top, then again after each move of the label or step
/// of a split that changes it, with a line on standard error saying what
/// happened (a JSON object a line with `--json`). Runs until interrupted,
/// or until printed `--count` times.
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
    let subject = args.subject.as_deref();
    let request =
        Request::read(session, &pack, &args.id, inputs, args.max_ctx_size)?.for_subject(subject);
    let render = || show(session, &pack, &registry, &request);
    let mut news = News::new(session.args.json);
    let mut shown = Shown::new(session.args.json, &render()?);
    let status = follower.status();
    let (mut shown_etag, mut shown_split) = (status.etag, status.split);
    if let Some(subject) = subject {
        news.arm(&Served::of(subject, shown_split), None);
    }
    while args.count.is_none_or(|n| shown.printed < n) {
        let change = match inbox.recv_timeout(LOOK_EVERY) {
            Ok(change) => Some(change),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let served = subject.map(|s| Served::of(s, shown_split));
        match change {
            Some(Change::Updated { etag, .. }) if Some(&etag) != shown_etag.as_ref() => {
                shown_etag = Some(etag);
                let version = follower.status().versions.get(&args.id).copied();
                shown.again(render(), &news, |news, printed| {
                    news.moved(&args.id, version, served.as_ref(), printed);
                });
            }
            Some(Change::Failed(why)) => news.repeating(Trouble::Unread, &why),
            Some(Change::Connected) => news.cleared(Trouble::Disconnected),
            Some(Change::Disconnected(why)) => news.repeating(Trouble::Disconnected, &why),
            _ => {}
        }
        let status = follower.status();
        if status.last_error.is_none() {
            news.cleared(Trouble::Unread);
        }
        // Only a subject's arm depends on the split.
        if let Some(subject) = subject.filter(|_| status.split != shown_split) {
            shown_split = status.split;
            let served = Served::of(subject, shown_split);
            shown.again(render(), &news, |news, printed| {
                news.arm(&served, Some(printed));
            });
        }
    }
    Ok(Output::text(String::new()))
}

/// The renders printed so far, and the text of the last.
struct Shown {
    out: Renders,
    last: String,
    printed: u64,
}

impl Shown {
    /// Prints the first render.
    fn new(json: bool, first: &Output) -> Self {
        let mut out = Renders::new(json);
        let last = out.print(first);
        Shown {
            out,
            last,
            printed: 1,
        }
    }

    /// Prints `render` when its text changed, after `say` tells why
    /// (with whether it is printed); reports a render that failed.
    fn again(
        &mut self,
        render: Result<Output, Failure>,
        news: &News,
        say: impl FnOnce(&News, bool),
    ) {
        match render {
            Ok(output) if output.stdout != self.last => {
                say(news, true);
                self.last = self.out.print(&output);
                self.printed += 1;
            }
            Ok(_) => say(news, false),
            Err(failure) => news.failed("the prompt does not render", &failure),
        }
    }
}

/// Which state a subject is served: the split running, if one is, and
/// the subject's arm of it.
struct Served<'a> {
    subject: &'a str,
    split: Option<SplitRule>,
}

impl<'a> Served<'a> {
    fn of(subject: &'a str, split: Option<SplitRule>) -> Self {
        Served { subject, split }
    }

    fn arm(&self) -> Arm {
        self.split
            .map_or(Arm::Stable, |rule| rule.arm(self.subject))
    }

    /// `subject alice gets split 3's candidate (10% of subjects)`.
    fn describe(&self) -> String {
        let subject = self.subject;
        match (self.split, self.arm()) {
            (None, _) => format!("subject {subject} gets the label (no split runs)"),
            (Some(rule), Arm::Candidate) => format!(
                "subject {subject} gets split {}'s candidate ({}% of subjects)",
                rule.id,
                share(rule)
            ),
            (Some(rule), Arm::Stable) => format!(
                "subject {subject} gets the label, not split {}'s candidate ({}% of subjects)",
                rule.id,
                share(rule)
            ),
        }
    }

    fn to_json(&self) -> serde_json::Value {
        json!({
            "subject": self.subject,
            "arm": self.arm().as_str(),
            "split": self.split.map(|rule| rule.id),
            "share": self.split.map(share),
        })
    }
}

/// A split's share in percent: `10`, `2.5`.
fn share(rule: SplitRule) -> f64 {
    f64::from(rule.basis_points.min(promptreg::split::ALL)) / 100.0
}

/// The troubles that repeat while they last, each at every retry: a key
/// revoked or a server down fails every read of the label and every
/// reconnect of the stream.
#[derive(Clone, Copy)]
enum Trouble {
    /// The label cannot be read.
    Unread,
    /// The event stream is lost.
    Disconnected,
}

impl Trouble {
    fn index(self) -> usize {
        self as usize
    }

    /// Its name in JSON events.
    fn event(self) -> &'static str {
        match self {
            Trouble::Unread => "failed",
            Trouble::Disconnected => "disconnected",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Trouble::Unread => "the label cannot be read",
            Trouble::Disconnected => "disconnected, reconnecting",
        }
    }
}

/// An error printed in full once, then counted while it comes again the
/// same.
#[derive(Default)]
struct Repeats {
    /// The error printed, while it lasts.
    error: Option<String>,
    /// How many times it came again since.
    times: u64,
    /// The count last printed.
    said: u64,
}

impl Repeats {
    /// Counts `error`: whether it is another error than the one before,
    /// to print in full.
    fn is_new(&mut self, error: &str) -> bool {
        if self.error.as_deref() == Some(error) {
            self.times += 1;
            return false;
        }
        *self = Repeats {
            error: Some(error.to_owned()),
            ..Repeats::default()
        };
        true
    }

    /// The repeats to report, if due: while the error lasts, at growing
    /// intervals (4, 16, 64… times); once it ended, those not yet said.
    fn due(&mut self, ended: bool) -> Option<u64> {
        let reminder = is_reminder(self.times);
        let due = self.times > self.said && (ended || reminder);
        due.then(|| {
            self.said = self.times;
            self.times
        })
    }

    /// The error is over (another came, or a read succeeded): the repeats
    /// not yet said.
    fn end(&mut self) -> Option<u64> {
        let unsaid = self.due(true);
        *self = Repeats::default();
        unsaid
    }
}

/// Whether a count of `times` repeats is said while the error lasts: at
/// 4, 16, 64… times, so a long outage prints a line at growing intervals.
fn is_reminder(times: u64) -> bool {
    times >= 4 && times.is_power_of_two() && times.trailing_zeros().is_multiple_of(2)
}

/// What the follower says on standard error after a reload.
struct News {
    json: bool,
    /// Of each [`Trouble`].
    repeats: [Repeats; 2],
}

impl News {
    fn new(json: bool) -> Self {
        News {
            json,
            repeats: Default::default(),
        }
    }

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

    fn moved(&self, id: &str, version: Option<u64>, served: Option<&Served>, shown_again: bool) {
        if self.json {
            let mut event =
                json!({ "event": "moved", "id": id, "version": version, "printed": shown_again });
            if let Some(served) = served {
                event["served"] = served.to_json();
            }
            eprintln!("{event}");
            return;
        }
        let version = version.map_or("absent".to_owned(), |v| format!("version {v}"));
        let served = served.map_or(String::new(), |s| format!("; {}", s.describe()));
        if shown_again {
            eprintln!("── the label moved; {id} is now {version}{served}");
        } else {
            eprintln!("── the label moved; {id} is unchanged ({version}){served}");
        }
    }

    /// Which arm the subject gets: at start (`shown_again` is `None`),
    /// then after each step of a split.
    fn arm(&self, served: &Served, shown_again: Option<bool>) {
        if self.json {
            let mut event = served.to_json();
            event["event"] = json!(if shown_again.is_some() {
                "split"
            } else {
                "arm"
            });
            if let Some(printed) = shown_again {
                event["printed"] = json!(printed);
            }
            eprintln!("{event}");
            return;
        }
        match shown_again {
            None => eprintln!("── {}", served.describe()),
            Some(true) => eprintln!("── the split changed; {}", served.describe()),
            Some(false) => eprintln!(
                "── the split changed; {}; this prompt is unchanged",
                served.describe()
            ),
        }
    }

    /// A trouble printed in full when new, counted while it repeats (see
    /// [`Repeats`]).
    fn repeating(&mut self, trouble: Trouble, why: &str) {
        let seen = &mut self.repeats[trouble.index()];
        let ended = seen.error.as_deref().is_some_and(|e| e != why);
        if ended && let Some(times) = seen.end() {
            self.repeated(trouble, times, false);
        }
        let seen = &mut self.repeats[trouble.index()];
        if !seen.is_new(why) {
            if let Some(times) = seen.due(false) {
                self.repeated(trouble, times, true);
            }
            return;
        }
        match trouble {
            Trouble::Unread => self.failed(
                "the label cannot be read; the last good version stays in force",
                &Failure::from(promptreg::Error::new(promptreg::ErrorKind::Remote, why)),
            ),
            Trouble::Disconnected => self.disconnected(why),
        }
    }

    /// The trouble is over: says how often it came again, if not yet said.
    fn cleared(&mut self, trouble: Trouble) {
        if let Some(times) = self.repeats[trouble.index()].end() {
            self.repeated(trouble, times, false);
        }
    }

    fn repeated(&self, trouble: Trouble, times: u64, ongoing: bool) {
        if self.json {
            let of = trouble.event();
            let event =
                json!({ "event": "repeated", "of": of, "times": times, "ongoing": ongoing });
            eprintln!("{event}");
            return;
        }
        let so_far = if ongoing { " so far" } else { "" };
        let what = trouble.describe();
        eprintln!("── the same error {times} more times{so_far} ({what})");
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

#[cfg(test)]
mod tests {
    use super::Repeats;

    #[test]
    fn an_error_is_new_once_then_counted_at_growing_intervals() {
        let mut seen = Repeats::default();
        assert!(seen.is_new("HTTP 401"));
        let said: Vec<(u64, Option<u64>)> = (1..=20)
            .map(|n| {
                assert!(!seen.is_new("HTTP 401"));
                (n, seen.due(false))
            })
            .filter(|(_, due)| due.is_some())
            .collect();
        assert_eq!(said, [(4, Some(4)), (16, Some(16))]);
        // What came after the last count is said when it ends, once.
        assert_eq!(seen.end(), Some(20));
        assert!(seen.is_new("HTTP 401"));
        assert_eq!(seen.end(), None);
    }

    #[test]
    fn another_error_starts_a_new_count() {
        let mut seen = Repeats::default();
        assert!(seen.is_new("refused"));
        assert!(!seen.is_new("refused"));
        assert!(seen.is_new("HTTP 401"));
        assert_eq!(seen.end(), None);
    }
}
