//! `promptreg webhooks …`: the webhooks of a store, their secrets and
//! their delivery logs. A running `promptreg serve` sends the deliveries;
//! `test` sends one from here, at once.

use std::time::{Duration, SystemTime};

use promptreg_store::{Delivery, Store, Timestamp, Webhook, WebhookChange, WebhookSpec};
use promptreg_webhooks::{Destinations, WorkerOptions};
use serde_json::{Value, json};

use super::Output;
use super::store::{admin_user, block_on, failure};
use crate::cli::{WebhooksArgs, WebhooksCommand};
use crate::options::Session;
use crate::report::Failure;
use crate::style::Paint;

pub fn run(session: &Session, args: &WebhooksArgs) -> Result<Output, Failure> {
    block_on(execute(session, args))
}

async fn execute(session: &Session, args: &WebhooksArgs) -> Result<Output, Failure> {
    let store = Store::open(&args.database).await.map_err(failure)?;
    let cmd = Command {
        session,
        args,
        store,
    };
    match &args.command {
        WebhooksCommand::Create {
            name,
            url,
            packs,
            events,
            format,
        } => {
            let spec = WebhookSpec {
                name: name.clone(),
                url: url.clone(),
                packs: packs.clone(),
                events: events.clone(),
                format: format.parse().map_err(failure)?,
            };
            cmd.create(&spec).await
        }
        WebhooksCommand::List => cmd.list().await,
        WebhooksCommand::Update {
            name,
            url,
            packs,
            every_pack,
            events,
            every_event,
            format,
        } => {
            // A list replaces the one there is; `--every-…` empties it.
            let listed = |given: &Vec<String>, every: bool| {
                (every || !given.is_empty()).then(|| given.clone())
            };
            let change = WebhookChange {
                url: url.clone(),
                packs: listed(packs, *every_pack),
                events: listed(events, *every_event),
                format: format
                    .as_deref()
                    .map(str::parse)
                    .transpose()
                    .map_err(failure)?,
            };
            cmd.update(name, &change).await
        }
        WebhooksCommand::Delete { name } => cmd.delete(name).await,
        WebhooksCommand::Rotate { name, overlap } => cmd.rotate(name, *overlap).await,
        WebhooksCommand::Enable { name } => cmd.enable(name).await,
        WebhooksCommand::Test {
            name,
            allow_private,
        } => cmd.test(name, *allow_private).await,
        WebhooksCommand::Log { name, limit } => cmd.log(name, *limit).await,
        WebhooksCommand::Redeliver {
            name,
            delivery,
            failed_since,
        } => {
            cmd.redeliver(name, *delivery, failed_since.as_deref())
                .await
        }
    }
}

struct Command<'a> {
    session: &'a Session,
    args: &'a WebhooksArgs,
    store: Store,
}

impl Command<'_> {
    fn admin(&self, what: &str) -> Result<promptreg_store::Actor, Failure> {
        admin_user(self.args.admin, what)
    }

    fn paint(&self) -> Paint {
        Paint {
            color: self.session.color,
        }
    }

    async fn create(&self, spec: &WebhookSpec) -> Result<Output, Failure> {
        let admin = self.admin("creating a webhook")?;
        let (hook, secret) = self
            .store
            .create_webhook(spec, &admin)
            .await
            .map_err(failure)?;
        let headline = format!(
            "created webhook `{}` ({} to {})",
            hook.name,
            listening(&hook),
            hook.url
        );
        self.with_secret(&hook, &secret, &headline)
    }

    /// A webhook and its new secret, shown this once, after `headline`.
    fn with_secret(&self, hook: &Webhook, secret: &str, headline: &str) -> Result<Output, Failure> {
        if self.session.args.json {
            return Ok(Output::json(
                &json!({ "webhook": to_json(hook), "secret": secret }),
            ));
        }
        Ok(Output::text(format!(
            "{headline}; its signing secret:\n{secret}\nThe secret will not be shown again: give it to the receiver now.\n"
        )))
    }

    async fn list(&self) -> Result<Output, Failure> {
        let hooks = self.store.webhooks().await.map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(&Value::Array(
                hooks.iter().map(to_json).collect(),
            )));
        }
        if hooks.is_empty() {
            return Ok(Output::text(format!(
                "no webhooks in {}: `promptreg webhooks create NAME URL --admin` makes one\n",
                self.store.location()
            )));
        }
        let paint = self.paint();
        let mut out = paint.dim(&format!(
            "{:<16} {:<8}  {:<40}  HEARS",
            "NAME", "FORMAT", "URL"
        )) + "\n";
        for hook in &hooks {
            let line = format!(
                "{:<16} {:<8}  {:<40}  {}",
                hook.name,
                hook.format,
                hook.url,
                listening(hook)
            );
            out += line.trim_end();
            out += "\n";
            if let Some(disabled) = &hook.disabled {
                out += &paint.dim(&format!(
                    "  disabled since {}: {} (`promptreg webhooks enable {} --admin`)",
                    disabled.at, disabled.reason, hook.name
                ));
                out += "\n";
            }
        }
        Ok(Output::text(out))
    }

    async fn update(&self, name: &str, change: &WebhookChange) -> Result<Output, Failure> {
        let admin = self.admin("changing a webhook")?;
        if *change == WebhookChange::default() {
            return Err(Failure::usage(
                "nothing to change: give --url, --pack, --every-pack, --event, --every-event or --format",
            ));
        }
        let hook = self
            .store
            .update_webhook(name, change, &admin)
            .await
            .map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(&to_json(&hook)));
        }
        Ok(Output::text(format!(
            "webhook `{name}` now sends {} to {} ({}); its secret and log stay\n",
            listening(&hook),
            hook.url,
            hook.format
        )))
    }

    async fn delete(&self, name: &str) -> Result<Output, Failure> {
        let admin = self.admin("deleting a webhook")?;
        let hook = self
            .store
            .delete_webhook(name, &admin)
            .await
            .map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(&to_json(&hook)));
        }
        Ok(Output::text(format!(
            "deleted webhook `{name}` and its delivery log\n"
        )))
    }

    async fn rotate(&self, name: &str, overlap: Duration) -> Result<Output, Failure> {
        let admin = self.admin("rotating a webhook's secret")?;
        let (hook, secret) = self
            .store
            .rotate_webhook_secret(name, overlap, &admin)
            .await
            .map_err(failure)?;
        let headline = match hook.previous_secret_until {
            Some(until) if until > Timestamp::now() => format!(
                "rotated the secret of webhook `{name}`: the old one signs beside the new one until {until}"
            ),
            _ => format!("rotated the secret of webhook `{name}`: the old one signs no more"),
        };
        self.with_secret(&hook, &secret, &headline)
    }

    async fn enable(&self, name: &str) -> Result<Output, Failure> {
        let admin = self.admin("enabling a webhook")?;
        let hook = self
            .store
            .enable_webhook(name, &admin)
            .await
            .map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(&to_json(&hook)));
        }
        Ok(Output::text(format!(
            "webhook `{name}` is enabled: it hears of events from now on (`promptreg webhooks redeliver {name} --failed-since TIME --admin` sends what failed)\n"
        )))
    }

    async fn test(&self, name: &str, allow_private: bool) -> Result<Output, Failure> {
        let admin = self.admin("testing a webhook")?;
        // The link in a test message is not used: it names no page.
        let page =
            url::Url::parse("http://localhost/").map_err(|e| Failure::usage(e.to_string()))?;
        let mut options = WorkerOptions::new(promptreg_webhooks::worker_name(), page);
        options.destinations = Destinations { allow_private };
        let delivery = promptreg_webhooks::send_test(&self.store, name, &options, &admin)
            .await
            .map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(&delivery_json(&delivery)));
        }
        if delivery.state == promptreg_store::DeliveryState::Delivered {
            return Ok(Output::text(delivery_text(&delivery, &self.paint())));
        }
        let why = delivery
            .attempts
            .last()
            .map_or("it was not sent".to_owned(), outcome);
        Err(Failure::usage(format!(
            "the test message to `{name}` was not delivered: {why}. A running server tries it again (`promptreg webhooks log {name}`)"
        )))
    }

    async fn log(&self, name: &str, limit: usize) -> Result<Output, Failure> {
        let log = self
            .store
            .deliveries(name, None, limit.max(1))
            .await
            .map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(&Value::Array(
                log.iter().map(delivery_json).collect(),
            )));
        }
        if log.is_empty() {
            return Ok(Output::text(format!(
                "webhook `{name}` has no deliveries yet: `promptreg webhooks test {name} --admin` sends one\n"
            )));
        }
        let paint = self.paint();
        Ok(Output::text(
            log.iter().map(|d| delivery_text(d, &paint)).collect(),
        ))
    }

    async fn redeliver(
        &self,
        name: &str,
        delivery: Option<u64>,
        since: Option<&str>,
    ) -> Result<Output, Failure> {
        let actor = self.admin("redelivering")?;
        if let Some(id) = delivery {
            let again = self
                .store
                .redeliver(name, id, &actor)
                .await
                .map_err(failure)?;
            if self.session.args.json {
                return Ok(Output::json(&delivery_json(&again)));
            }
            return Ok(Output::text(format!(
                "delivery {id} ({}) of webhook `{name}` is due again: a running server sends it\n",
                again.message_id
            )));
        }
        let since = since.map(parse_since).transpose()?.unwrap_or(Timestamp(0));
        let n = self
            .store
            .redeliver_failed(name, since, &actor)
            .await
            .map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(&json!({ "redelivered": n })));
        }
        Ok(Output::text(format!(
            "{n} failed deliveries of webhook `{name}` since {since} are due again: a running server sends them\n"
        )))
    }
}

/// An RFC 3339 time, or how long ago (`2h`, `1d`).
fn parse_since(text: &str) -> Result<Timestamp, Failure> {
    if let Ok(ago) = humantime::parse_duration(text) {
        let at = SystemTime::now()
            .checked_sub(ago)
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .unwrap_or_default();
        return Ok(Timestamp(i64::try_from(at.as_millis()).unwrap_or(i64::MAX)));
    }
    text.parse().map_err(|e: promptreg_store::Error| {
        Failure::usage(format!("{e}, or how long ago, like `2h`"))
    })
}

/// What a webhook hears of: its packs and event types.
fn listening(hook: &Webhook) -> String {
    let packs = match hook.packs.is_empty() {
        true => "every pack".to_owned(),
        false => hook.packs.join(", "),
    };
    let events = match hook.events.is_empty() {
        true => "every event".to_owned(),
        false => hook.events.join(", "),
    };
    format!("{events} of {packs}")
}

/// One delivery and its attempts, a line each.
fn delivery_text(d: &Delivery, paint: &Paint) -> String {
    let next = d
        .next_attempt_at
        .map(|t| format!(", next attempt {t}"))
        .unwrap_or_default();
    let mut out = format!(
        "{} {} {} {}{next}\n",
        d.id,
        d.message_id,
        d.kind,
        d.state.as_str(),
    );
    for a in &d.attempts {
        let outcome = outcome(a);
        let response = match a.response.trim() {
            "" => String::new(),
            r => format!("  {}", promptreg::abbreviate(&r.replace('\n', " "), 60)),
        };
        out += &paint.dim(&format!(
            "  {} {} ms  {outcome}{response}  by {}",
            a.at, a.duration_ms, a.by
        ));
        out += "\n";
    }
    out
}

/// What came of an attempt: the status, or why there was none.
fn outcome(a: &promptreg_store::Attempt) -> String {
    match (a.status, &a.error) {
        (Some(status), _) => format!("answered {status}"),
        (None, Some(error)) => error.clone(),
        (None, None) => "no answer".to_owned(),
    }
}

fn to_json(hook: &Webhook) -> Value {
    serde_json::to_value(hook).unwrap_or_default()
}

fn delivery_json(d: &Delivery) -> Value {
    serde_json::to_value(d).unwrap_or_default()
}
