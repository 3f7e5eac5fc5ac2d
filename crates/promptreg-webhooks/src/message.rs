//! What a delivery says: the Standard Webhooks body (`type`, `timestamp`,
//! `data`) or, for a chat's incoming webhook, a sentence (`{"text": …}`).
//!
//! `data` is the same for every event type: the pack, the label, the
//! revisions from and to, the prompts changed with their versions from
//! and to, the actor, the reason, and the web page's URL for it; fields
//! an event has no value for are left out.

use promptreg_store::{
    ClaimedDelivery, Event, EventKind, Revision, TEST_EVENT_TYPE, Timestamp, WebhookFormat,
};
use serde_json::{Map, Value, json};
use url::Url;

/// One prompt changed: its versions before and after (`None`: it was
/// not there, or is not any more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptChange {
    /// The prompt id (or `@pack`).
    pub prompt: String,
    /// Its version before.
    pub from: Option<u64>,
    /// Its version after.
    pub to: Option<u64>,
}

/// The body of `delivery`, as its webhook's format writes it. `revision`
/// is the revision a revision event names, read by the caller (it holds
/// the prompts changed); `page` is where the web page is served.
pub fn body(
    delivery: &ClaimedDelivery,
    revision: Option<&Revision>,
    page: &Url,
    now: Timestamp,
) -> Vec<u8> {
    let data = match &delivery.event {
        Some(event) => event_data(event, revision, page),
        None => json!({
            "webhook": delivery.webhook,
            "message": "A test delivery from promptreg: this webhook is set up.",
        }),
    };
    let at = delivery.event.as_ref().map_or(now, |e| e.at);
    let value = match delivery.format {
        WebhookFormat::Standard => json!({
            "type": delivery.kind,
            "timestamp": at.to_string(),
            "data": data,
        }),
        WebhookFormat::Slack => json!({ "text": sentence(&delivery.kind, &data) }),
    };
    serde_json::to_vec(&value).unwrap_or_default()
}

/// The `data` of an event.
fn event_data(event: &Event, revision: Option<&Revision>, page: &Url) -> Value {
    let mut data = Map::new();
    let mut put = |key: &str, value: Value| {
        if !value.is_null() {
            data.insert(key.to_owned(), value);
        }
    };
    put("event_id", json!(event.id));
    put("pack", json!(event.pack));
    let label = label_of(&event.change);
    put("label", json!(label));
    let (actor, reason) = actor_and_reason(&event.change);
    put("actor", json!(actor));
    put("reason", json!(reason));
    match &event.change {
        EventKind::RevisionCreated {
            revision: n,
            digest,
            cause,
            ..
        } => {
            put("revision", revision_span(*n, digest));
            put("cause", json!(cause.as_str()));
        }
        EventKind::RevisionSigned {
            revision: n,
            digest,
            fingerprint,
            ..
        } => {
            put("revision", revision_span(*n, digest));
            put("fingerprint", json!(fingerprint));
        }
        EventKind::GateRefused { failed, .. } => {
            put("failed_cases", json!(failed));
        }
        EventKind::TranslationStale { locale, .. } => {
            put("locale", json!(locale));
        }
        EventKind::SplitChanged {
            split,
            share,
            digest,
            ..
        } => {
            put(
                "split",
                json!({ "id": split, "share_percent": f64::from(share.basis_points()) / 100.0, "digest": digest }),
            );
        }
        _ => {}
    }
    let prompts: Vec<Value> = changes(&event.change, revision)
        .into_iter()
        .map(|c| json!({ "prompt": c.prompt, "from": c.from, "to": c.to }))
        .collect();
    if !prompts.is_empty() {
        put("prompts", Value::Array(prompts));
    }
    put(
        "url",
        json!(page_url(page, &event.pack, label, &event.change).as_str()),
    );
    Value::Object(data)
}

fn revision_span(n: u64, digest: &str) -> Value {
    json!({ "from": n.checked_sub(1).filter(|&n| n > 0), "to": n, "digest": digest })
}

fn label_of(change: &EventKind) -> Option<&str> {
    match change {
        EventKind::VersionCreated { .. } | EventKind::TranslationStale { .. } => None,
        EventKind::LabelMoved { label, .. }
        | EventKind::Released { label, .. }
        | EventKind::RevisionCreated { label, .. }
        | EventKind::RevisionSigned { label, .. }
        | EventKind::SplitChanged { label, .. }
        | EventKind::GateRefused { label, .. }
        | EventKind::LabelProtected { label, .. }
        | EventKind::LabelUnprotected { label, .. } => Some(label),
        _ => None,
    }
}

fn actor_and_reason(change: &EventKind) -> (Option<&str>, Option<&str>) {
    match change {
        EventKind::VersionCreated { author, .. } => (Some(author), None),
        EventKind::TranslationStale { actor, .. } => (Some(actor), None),
        EventKind::LabelMoved { actor, reason, .. }
        | EventKind::Released { actor, reason, .. }
        | EventKind::RevisionCreated { actor, reason, .. }
        | EventKind::SplitChanged { actor, reason, .. }
        | EventKind::GateRefused { actor, reason, .. } => (Some(actor), Some(reason)),
        EventKind::RevisionSigned { actor, .. }
        | EventKind::LabelProtected { actor, .. }
        | EventKind::LabelUnprotected { actor, .. } => (Some(actor), None),
        _ => (None, None),
    }
}

/// The prompts an event changed, with their versions.
pub fn changes(change: &EventKind, revision: Option<&Revision>) -> Vec<PromptChange> {
    match change {
        EventKind::VersionCreated {
            prompt, version, ..
        } => vec![PromptChange {
            prompt: prompt.clone(),
            from: version.checked_sub(1).filter(|&v| v > 0),
            to: Some(*version),
        }],
        EventKind::TranslationStale {
            prompt, version, ..
        } => vec![PromptChange {
            prompt: prompt.clone(),
            from: version.checked_sub(1).filter(|&v| v > 0),
            to: Some(*version),
        }],
        EventKind::LabelMoved {
            prompt, from, to, ..
        } => vec![PromptChange {
            prompt: prompt.clone(),
            from: *from,
            to: *to,
        }],
        EventKind::Released { moves, .. } => moves
            .iter()
            .map(|m| PromptChange {
                prompt: m.prompt.clone(),
                from: m.from,
                to: m.to,
            })
            .collect(),
        EventKind::RevisionCreated { .. } => revision
            .map(|r| {
                r.changes
                    .iter()
                    .map(|c| PromptChange {
                        prompt: c.entry.clone(),
                        from: c.from,
                        to: c.to,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The web page showing what an event changed: the label's revisions,
/// the prompt's versions, or the pack's history.
fn page_url(page: &Url, pack: &str, label: Option<&str>, change: &EventKind) -> Url {
    let mut url = page.clone();
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty().push("packs").push(pack);
        match (change, label) {
            (EventKind::VersionCreated { prompt, .. }, _)
            | (EventKind::TranslationStale { prompt, .. }, _) => {
                path.push("prompts").push(prompt);
            }
            (_, Some(label)) => {
                path.push("labels").push(label);
            }
            (_, None) => {
                path.push("history");
            }
        }
    }
    url
}

/// One line for people: what happened, to what, by whom, and a link.
fn sentence(kind: &str, data: &Value) -> String {
    if kind == TEST_EVENT_TYPE {
        return data["message"].as_str().unwrap_or_default().to_owned();
    }
    let text = |key: &str| data[key].as_str().unwrap_or_default();
    let what = match kind {
        "version.created" => "new version",
        "label.moved" => "label moved",
        "label.released" => "released",
        "label.rolled_back" => "rolled back",
        "label.restored" => "restored",
        "revision.created" => "new revision",
        "revision.signed" => "revision signed",
        "split.started" => "gradual release started",
        "split.share_changed" => "gradual release widened or narrowed",
        "split.promoted" => "gradual release promoted",
        "split.aborted" => "gradual release aborted",
        "gate.refused" => "tests refused a move",
        "translation.stale" => "a translation went stale",
        "label.protected" => "label protected",
        "label.unprotected" => "label no longer protected",
        other => other,
    };
    let mut line = format!("*{}*", text("pack"));
    if !text("label").is_empty() {
        line += &format!(" `{}`", text("label"));
    }
    line += &format!(": {what}");
    let version = |v: &Value| v.as_u64().map_or("none".to_owned(), |v| format!("v{v}"));
    let prompts: Vec<String> = data["prompts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            format!(
                "{} {} → {}",
                p["prompt"].as_str().unwrap_or_default(),
                version(&p["from"]),
                version(&p["to"])
            )
        })
        .collect();
    if !prompts.is_empty() {
        line += &format!(" ({})", prompts.join(", "));
    }
    if !text("actor").is_empty() {
        line += &format!(" by {}", text("actor"));
    }
    if !text("reason").is_empty() {
        line += &format!(": “{}”", text("reason"));
    }
    if !text("url").is_empty() {
        line += &format!(" <{}|open>", text("url"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptreg_store::ReleasedPrompt;

    fn released() -> ClaimedDelivery {
        ClaimedDelivery {
            id: 7,
            message_id: "msg_7".into(),
            kind: "label.released".into(),
            event: Some(Event {
                id: 42,
                at: Timestamp(1_764_000_000_000),
                pack: "demo".into(),
                change: EventKind::Released {
                    label: "production".into(),
                    moves: vec![ReleasedPrompt {
                        prompt: "greeting".into(),
                        from: Some(1),
                        to: Some(2),
                    }],
                    actor: "ada".into(),
                    reason: "ship".into(),
                },
            }),
            webhook: "chat".into(),
            url: "http://127.0.0.1/".into(),
            format: WebhookFormat::Standard,
            secrets: vec![],
            attempt: 1,
            retrying_since: Timestamp(0),
        }
    }

    fn page() -> Url {
        Url::parse("https://prompts.example.com/").unwrap()
    }

    #[test]
    fn a_release_says_what_moved_who_why_and_where_to_look() {
        let body: Value =
            serde_json::from_slice(&body(&released(), None, &page(), Timestamp(0))).unwrap();
        assert_eq!(
            body,
            json!({
                "type": "label.released",
                "timestamp": "2025-11-24T16:00:00Z",
                "data": {
                    "event_id": 42,
                    "pack": "demo",
                    "label": "production",
                    "actor": "ada",
                    "reason": "ship",
                    "prompts": [{ "prompt": "greeting", "from": 1, "to": 2 }],
                    "url": "https://prompts.example.com/packs/demo/labels/production",
                },
            })
        );
    }

    #[test]
    fn a_chat_gets_one_readable_line() {
        let mut delivery = released();
        delivery.format = WebhookFormat::Slack;
        let body: Value =
            serde_json::from_slice(&body(&delivery, None, &page(), Timestamp(0))).unwrap();
        assert_eq!(
            body["text"],
            "*demo* `production`: released (greeting v1 → v2) by ada: “ship” <https://prompts.example.com/packs/demo/labels/production|open>"
        );
    }

    #[test]
    fn a_test_message_names_its_webhook() {
        let mut delivery = released();
        delivery.event = None;
        delivery.kind = TEST_EVENT_TYPE.into();
        let body: Value =
            serde_json::from_slice(&body(&delivery, None, &page(), Timestamp(0))).unwrap();
        assert_eq!(body["type"], "webhook.test");
        assert_eq!(body["timestamp"], "1970-01-01T00:00:00Z");
        assert_eq!(body["data"]["webhook"], "chat");
    }
}
