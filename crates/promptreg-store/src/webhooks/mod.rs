//! Webhooks: subscriptions to the event log, and the outbox their
//! deliveries are made from.
//!
//! A [`Webhook`] names a URL, the packs and the [event types](EVENT_TYPES)
//! it wants, and a signing secret (`whsec_` and 32 random bytes in
//! base64, as the Standard Webhooks scheme writes them). The secret is
//! shown once, when it is made; the store keeps it, since every delivery
//! is signed with it. [`Store::rotate_webhook_secret`] makes a new one
//! and keeps the old one signing beside it for an overlap, so a receiver
//! can switch without losing a message.
//!
//! The event log is the outbox: each webhook keeps the id of the last
//! event it took in, and [`Store::claim_deliveries`] first turns the
//! events after it into deliveries (one per webhook and event, in one
//! transaction with the cursor, so an event becomes a delivery exactly
//! once however many servers share the store), then leases the ones due.
//! A lease is a time after which another worker may take the delivery
//! again: a process killed mid-delivery loses nothing, its deliveries are
//! taken again once their lease runs out. On PostgreSQL the due rows are
//! claimed with `FOR UPDATE SKIP LOCKED`, so two servers never both take
//! one; on SQLite the write lock does the same. A delivery keeps its
//! message id (`msg_`, its webhook's random prefix and its number)
//! through every attempt, so a receiver can drop what it has seen, and
//! ids from two stores never collide.
//!
//! What to do after an attempt (deliver, retry at a time, give up) is the
//! caller's decision ([`Attempted`]); the store records each attempt in
//! the delivery log ([`Store::deliveries`]) and disables a webhook whose
//! delivery it gives up on.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

mod outbox;
mod rules;

pub use outbox::{Attempt, Attempted, ClaimedDelivery, Delivery, DeliveryState};
pub(crate) use outbox::{AttemptRow, DeliveryRow};
pub use rules::check_url;
use rules::{check, invalid, new_message_prefix, new_secret};

use crate::error::{Error, ErrorKind};
use crate::events::EventKind;
use crate::model::{Actor, Permission, RevisionCause, Timestamp};
use crate::splits::SplitStep;
use crate::store::Store;

/// The event types a webhook may ask for, as its deliveries' `type`.
pub const EVENT_TYPES: &[&str] = &[
    "version.created",
    "label.moved",
    "label.released",
    "label.rolled_back",
    "label.restored",
    "revision.created",
    "revision.signed",
    "split.started",
    "split.share_changed",
    "split.promoted",
    "split.aborted",
    "gate.refused",
    "translation.stale",
    "label.protected",
    "label.unprotected",
];

/// The type of the message [`Store::queue_test_delivery`] sends.
pub const TEST_EVENT_TYPE: &str = "webhook.test";

/// The most bytes of a response body the delivery log keeps.
pub const LOGGED_RESPONSE_BYTES: usize = 1024;

/// The longest URL a webhook takes.
pub const MAX_URL_BYTES: usize = 2048;

/// The longest overlap of a rotation: both secrets sign for at most this.
pub const MAX_OVERLAP: Duration = Duration::from_secs(7 * 24 * 3600);

/// A webhook's type for an event: what a subscription filters on and its
/// deliveries carry. A revision is named for what made it when that is a
/// rollback or a restore (a pack rolled back, a label set to a revision);
/// its other causes already have their own event (the move, the release,
/// the push).
pub fn event_type(change: &EventKind) -> &'static str {
    match change {
        EventKind::VersionCreated { .. } => "version.created",
        EventKind::LabelMoved { .. } => "label.moved",
        EventKind::Released { .. } => "label.released",
        EventKind::RevisionCreated { cause, .. } => match cause {
            RevisionCause::Rollback => "label.rolled_back",
            RevisionCause::Restore => "label.restored",
            _ => "revision.created",
        },
        EventKind::RevisionSigned { .. } => "revision.signed",
        EventKind::SplitChanged { step, .. } => match step {
            SplitStep::Start => "split.started",
            SplitStep::Share => "split.share_changed",
            SplitStep::Promote => "split.promoted",
            SplitStep::Abort => "split.aborted",
        },
        EventKind::GateRefused { .. } => "gate.refused",
        EventKind::TranslationStale { .. } => "translation.stale",
        EventKind::LabelProtected { .. } => "label.protected",
        EventKind::LabelUnprotected { .. } => "label.unprotected",
    }
}

/// How a delivery's body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WebhookFormat {
    /// The Standard Webhooks body: `type`, `timestamp`, `data`.
    #[default]
    Standard,
    /// A readable message for a chat's incoming webhook (`{"text": …}`).
    Slack,
}

impl WebhookFormat {
    /// `standard` or `slack`.
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookFormat::Standard => "standard",
            WebhookFormat::Slack => "slack",
        }
    }
}

impl fmt::Display for WebhookFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for WebhookFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "standard" => Ok(WebhookFormat::Standard),
            "slack" => Ok(WebhookFormat::Slack),
            _ => Err(invalid(format!(
                "unknown webhook format `{s}`: it is `standard` (signed JSON) or `slack` (a chat message)"
            ))),
        }
    }
}

/// What a new webhook is: [`Store::create_webhook`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WebhookSpec {
    /// Its name: lowercase letters, digits and `-`, like a label.
    pub name: String,
    /// Where deliveries go: an `http` or `https` URL.
    pub url: String,
    /// The packs it hears of; empty: every pack.
    pub packs: Vec<String>,
    /// The [event types](EVENT_TYPES) it wants; empty: every type.
    pub events: Vec<String>,
    /// How its bodies are written.
    pub format: WebhookFormat,
}

/// What changes in a webhook ([`Store::update_webhook`]): each field
/// given replaces the webhook's; an empty list means every pack or type.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WebhookChange {
    /// A new URL.
    pub url: Option<String>,
    /// New packs.
    pub packs: Option<Vec<String>>,
    /// New event types.
    pub events: Option<Vec<String>>,
    /// A new format.
    pub format: Option<WebhookFormat>,
}

/// A webhook as the store records it (never its secrets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Webhook {
    /// Its name.
    pub name: String,
    /// Where deliveries go.
    pub url: String,
    /// The packs it hears of; empty: every pack.
    pub packs: Vec<String>,
    /// The event types it wants; empty: every type.
    pub events: Vec<String>,
    /// How its bodies are written.
    pub format: WebhookFormat,
    /// When it was made.
    pub created_at: Timestamp,
    /// Who made it.
    pub created_by: String,
    /// Until when a rotated-out secret still signs beside the new one.
    pub previous_secret_until: Option<Timestamp>,
    /// When it was disabled and why; a disabled webhook takes in no event.
    pub disabled: Option<Disabled>,
}

/// Why and when a webhook stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Disabled {
    /// When.
    pub at: Timestamp,
    /// Why, for people.
    pub reason: String,
}

impl Webhook {
    /// Whether it wants events of `kind` from `pack`.
    pub fn wants(&self, pack: &str, kind: &str) -> bool {
        wants(&self.packs, &self.events, pack, kind)
    }
}

/// Whether a subscription to `packs` and `types` (empty: all) takes an
/// event of type `kind` from `pack`.
pub(crate) fn wants(packs: &[String], types: &[String], pack: &str, kind: &str) -> bool {
    (packs.is_empty() || packs.iter().any(|p| p == pack))
        && (types.is_empty() || types.iter().any(|t| t == kind))
}

/// A webhook as the database holds it: name, url, packs, events, format,
/// created_at, created_by, previous_until, disabled_at, disabled_reason.
pub(crate) type WebhookRow = (
    String,
    String,
    String,
    String,
    String,
    i64,
    String,
    Option<i64>,
    Option<i64>,
    Option<String>,
);

pub(crate) fn webhook_of(row: WebhookRow) -> Result<Webhook, Error> {
    let (name, url, packs, events, format, created_at, created_by, until, disabled_at, why) = row;
    let format = format.parse().map_err(|_| {
        Error::new(
            ErrorKind::Database,
            format!("webhook `{name}` has the unknown format `{format}`: the webhooks table was changed by hand"),
        )
    })?;
    let words = |s: &str| s.split_whitespace().map(str::to_owned).collect();
    Ok(Webhook {
        packs: words(&packs),
        events: words(&events),
        name,
        url,
        format,
        created_at: Timestamp(created_at),
        created_by,
        previous_secret_until: until.map(Timestamp),
        disabled: disabled_at.map(|at| Disabled {
            at: Timestamp(at),
            reason: why.unwrap_or_default(),
        }),
    })
}

pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Store {
    /// Creates a webhook. Returns it with its secret, which is shown this
    /// once.
    ///
    /// It takes in the events after the newest one now: a webhook hears
    /// of changes made after it exists.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] unless `actor` is an admin;
    /// [`ErrorKind::InvalidWebhook`] for a bad name, URL or event type;
    /// [`ErrorKind::UnknownPack`]; [`ErrorKind::Conflict`] when a webhook
    /// has the name.
    pub async fn create_webhook(
        &self,
        spec: &WebhookSpec,
        actor: &Actor,
    ) -> Result<(Webhook, String), Error> {
        actor.require(Permission::Admin, "create webhooks")?;
        check(spec, &self.packs().await?)?;
        let secret = new_secret()?;
        let prefix = new_message_prefix()?;
        let now = Timestamp::now();
        on_backend!(
            self,
            insert_webhook(spec, (&secret, &prefix), now, &actor.name)
        )?;
        Ok((self.webhook(&spec.name).await?, secret))
    }

    /// Every webhook, by name.
    pub async fn webhooks(&self) -> Result<Vec<Webhook>, Error> {
        on_backend!(self, webhooks())?
            .into_iter()
            .map(webhook_of)
            .collect()
    }

    /// The webhook named `name`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownWebhook`], naming the nearest name.
    pub async fn webhook(&self, name: &str) -> Result<Webhook, Error> {
        let hooks = self.webhooks().await?;
        let names: Vec<&str> = hooks.iter().map(|h| h.name.as_str()).collect();
        match hooks.iter().find(|h| h.name == name) {
            Some(hook) => Ok(hook.clone()),
            None => Err(unknown_webhook(name, &names)),
        }
    }

    /// Changes a webhook's URL, packs, event types or format, checked as
    /// a new one is. Its secret, log and pending deliveries stay: those
    /// go to the new URL.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] unless `actor` is an admin;
    /// [`ErrorKind::UnknownWebhook`]; [`ErrorKind::InvalidWebhook`] and
    /// [`ErrorKind::UnknownPack`] as [`create_webhook`](Self::create_webhook).
    pub async fn update_webhook(
        &self,
        name: &str,
        change: &WebhookChange,
        actor: &Actor,
    ) -> Result<Webhook, Error> {
        actor.require(Permission::Admin, "change webhooks")?;
        let hook = self.webhook(name).await?;
        let spec = WebhookSpec {
            name: hook.name,
            url: change.url.clone().unwrap_or(hook.url),
            packs: change.packs.clone().unwrap_or(hook.packs),
            events: change.events.clone().unwrap_or(hook.events),
            format: change.format.unwrap_or(hook.format),
        };
        check(&spec, &self.packs().await?)?;
        on_backend!(self, update_webhook(&spec))?;
        self.webhook(name).await
    }

    /// Deletes a webhook with its delivery log.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] unless `actor` is an admin;
    /// [`ErrorKind::UnknownWebhook`].
    pub async fn delete_webhook(&self, name: &str, actor: &Actor) -> Result<Webhook, Error> {
        actor.require(Permission::Admin, "delete webhooks")?;
        let hook = self.webhook(name).await?;
        on_backend!(self, delete_webhook(name))?;
        Ok(hook)
    }

    /// Gives the webhook a new secret; the old one keeps signing beside
    /// it for `overlap` (at most [`MAX_OVERLAP`]). Returns the new secret,
    /// shown this once.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] unless `actor` is an admin;
    /// [`ErrorKind::UnknownWebhook`]; [`ErrorKind::InvalidWebhook`] for an
    /// overlap over [`MAX_OVERLAP`].
    pub async fn rotate_webhook_secret(
        &self,
        name: &str,
        overlap: Duration,
        actor: &Actor,
    ) -> Result<(Webhook, String), Error> {
        actor.require(Permission::Admin, "rotate webhook secrets")?;
        if overlap > MAX_OVERLAP {
            return Err(invalid(format!(
                "an overlap of {} s is longer than the longest, {} s (a week): both secrets would sign for too long",
                overlap.as_secs(),
                MAX_OVERLAP.as_secs()
            )));
        }
        self.webhook(name).await?;
        let secret = new_secret()?;
        let until = Timestamp(Timestamp::now().0.saturating_add(millis(overlap)));
        on_backend!(self, rotate_webhook(name, &secret, until))?;
        Ok((self.webhook(name).await?, secret))
    }

    /// Enables a disabled webhook again. It takes in the events after the
    /// newest one now; what failed while it was down is redelivered with
    /// [`redeliver_failed`](Self::redeliver_failed).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] unless `actor` is an admin;
    /// [`ErrorKind::UnknownWebhook`].
    pub async fn enable_webhook(&self, name: &str, actor: &Actor) -> Result<Webhook, Error> {
        actor.require(Permission::Admin, "enable webhooks")?;
        self.webhook(name).await?;
        on_backend!(self, enable_webhook(name))?;
        self.webhook(name).await
    }
}

fn unknown_webhook(name: &str, names: &[&str]) -> Error {
    let hint = crate::store::nearest(name, names.iter().copied())
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    let known = match names.is_empty() {
        true => {
            "the store has none: `promptreg webhooks create NAME URL --admin` makes one".to_owned()
        }
        false => format!("it has {}", names.join(", ")),
    };
    Error::new(
        ErrorKind::UnknownWebhook,
        format!("no webhook is named `{name}`{hint}; {known}"),
    )
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD as BASE64;

    use super::*;

    #[test]
    fn every_event_kind_has_a_listed_type() {
        for kind in crate::events::tests::every_kind() {
            assert!(EVENT_TYPES.contains(&event_type(&kind)), "{kind:?}");
        }
    }

    #[test]
    fn urls_are_http_with_a_host_and_no_credentials() {
        assert!(check_url("https://hooks.example.com/in?x=1").is_ok());
        assert!(check_url("http://127.0.0.1:9/").is_ok());
        for bad in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "https://u:p@example.com/",
            "not a url",
        ] {
            let e = check_url(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidWebhook, "{bad}: {e}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(
            check_url(&long)
                .unwrap_err()
                .to_string()
                .contains("at most")
        );
    }

    #[test]
    fn a_secret_is_whsec_and_32_bytes_of_base64() {
        let secret = new_secret().unwrap();
        let bytes = BASE64
            .decode(secret.strip_prefix("whsec_").unwrap())
            .unwrap();
        assert_eq!(bytes.len(), 32);
        assert_ne!(secret, new_secret().unwrap());
    }

    #[test]
    fn a_webhook_wants_its_packs_and_types_or_every_one() {
        let mut hook = Webhook {
            name: "h".into(),
            url: "http://x/".into(),
            packs: vec![],
            events: vec![],
            format: WebhookFormat::Standard,
            created_at: Timestamp(0),
            created_by: "ada".into(),
            previous_secret_until: None,
            disabled: None,
        };
        assert!(hook.wants("any", "label.moved"));
        hook.packs = vec!["demo".into()];
        hook.events = vec!["label.released".into()];
        assert!(hook.wants("demo", "label.released"));
        assert!(!hook.wants("other", "label.released"));
        assert!(!hook.wants("demo", "label.moved"));
    }
}
