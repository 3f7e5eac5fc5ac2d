//! Fleet reports: a thread of the follower tells the server what this
//! instance serves (`POST …/labels/{label}/fleet`) on start, on every
//! change in force, and at an interval. It only reads the follower's
//! status, so a slow or refusing server delays nothing else.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Source;
use super::client::{Client, Reported};
use super::follower::Watched;

/// The longest last error sent (the server keeps at most 1,024 bytes).
const MAX_ERROR: usize = 1000;

/// What a report says; a change of it is reported at once.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Serving {
    source: Source,
    revision: Option<u64>,
    etag: Option<String>,
    last_error: Option<String>,
    /// The split whose candidate it serves.
    split: Option<u64>,
}

/// The reporting thread's state.
pub(crate) struct Reporter {
    pub(crate) client: Client,
    pub(crate) watched: Arc<Watched>,
    pub(crate) interval: Duration,
    pub(crate) instance: String,
    pub(crate) name: Option<String>,
    pub(crate) library: String,
}

impl Reporter {
    /// Reports until the follower stops.
    pub(crate) fn run(self) {
        let mut sent: Option<Serving> = None;
        let mut due = Instant::now();
        // Until when the server asked to hear nothing (429).
        let mut hold = Instant::now();
        loop {
            let now = Instant::now();
            let woken = match now < hold {
                true => self.watched.wait_for_report(hold - now, |_| false),
                false => self
                    .watched
                    .wait_for_report(due.saturating_duration_since(now), |status| {
                        sent.as_ref() != Some(&serving(status))
                    }),
            };
            let Some(status) = woken else { return };
            let serving = serving(&status);
            let now = Instant::now();
            if now < hold || (sent.as_ref() == Some(&serving) && now < due) {
                continue;
            }
            match self.client.report(&self.body(&serving)) {
                Ok(Reported::Done) => {
                    self.watched.update(|s| {
                        s.last_report = Some(Instant::now());
                        s.report_error = None;
                    });
                    sent = Some(serving);
                    due = Instant::now() + self.interval;
                }
                Ok(Reported::RetryAfter(after)) => {
                    // What was not sent stays to send, after the wait.
                    hold = Instant::now() + after;
                    self.watched.update(|s| {
                        s.report_error = Some(format!(
                            "the server limits reports: the next in {} s",
                            after.as_secs()
                        ))
                    });
                }
                Err(why) => {
                    self.watched.update(|s| s.report_error = Some(why));
                    sent = Some(serving);
                    due = Instant::now() + self.interval;
                }
            }
        }
    }

    fn body(&self, serving: &Serving) -> serde_json::Value {
        // The bundle's ETag is its state digest, quoted.
        let digest = serving
            .etag
            .as_deref()
            .map(|e| e.trim_matches('"'))
            .filter(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()));
        serde_json::json!({
            "instance": self.instance,
            "name": self.name,
            "library": self.library,
            "source": serving.source.as_str(),
            "revision": serving.revision,
            "digest": digest,
            "last_error": serving.last_error.as_deref().map(one_line),
            "interval_ms": self.interval.as_millis() as u64,
            "split": serving.split,
        })
    }
}

fn serving(status: &super::Status) -> Serving {
    Serving {
        source: status.source,
        revision: status.revision,
        etag: status.etag.clone(),
        last_error: status.last_error.clone(),
        split: status.split.map(|rule| rule.id),
    }
}

/// An error as the server keeps it: one line of at most [`MAX_ERROR`]
/// bytes.
fn one_line(error: &str) -> String {
    let flat: String = error
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.len() <= MAX_ERROR {
        return flat;
    }
    let mut end = MAX_ERROR - 3;
    while !flat.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &flat[..end])
}

/// A random id for this follower: 16 hex digits from the standard
/// library's randomly keyed hasher, the process id and the time.
pub(crate) fn random_instance_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    hasher.write_u128(since.as_nanos());
    format!("{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_sent_on_one_line_and_cut_to_the_bound() {
        assert_eq!(one_line("GET x:\nrefused"), "GET x: refused");
        let long = "é".repeat(800);
        let cut = one_line(&long);
        assert!(
            cut.len() <= MAX_ERROR && cut.ends_with("..."),
            "{}",
            cut.len()
        );
    }

    #[test]
    fn instance_ids_differ_and_are_what_the_server_takes() {
        let (a, b) = (random_instance_id(), random_instance_id());
        assert_ne!(a, b);
        assert!(a.len() == 16 && a.bytes().all(|c| c.is_ascii_hexdigit()));
    }
}
