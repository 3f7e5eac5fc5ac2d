//! What a webhook must be (a name, an `http` or `https` URL, known packs
//! and event types), and its new secrets and message-id prefixes.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::{EVENT_TYPES, MAX_URL_BYTES, WebhookSpec};
use crate::error::{Error, ErrorKind};
use crate::model::name_problem;

pub(super) fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidWebhook, message)
}

/// `N` random bytes from the operating system.
fn random<const N: usize>(what: &str) -> Result<[u8; N], Error> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot make {what}: the system's random source failed ({e})"),
        )
    })?;
    Ok(bytes)
}

/// A new secret: `whsec_` and 32 random bytes in base64.
pub(super) fn new_secret() -> Result<String, Error> {
    Ok(format!(
        "whsec_{}",
        BASE64.encode(random::<32>("a webhook secret")?)
    ))
}

/// A new webhook's message prefix: 8 random bytes in lowercase hex and
/// `_` (`msg_3f…_12`).
pub(super) fn new_message_prefix() -> Result<String, Error> {
    let bytes = random::<8>("a webhook's message ids")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>() + "_")
}

/// Checks a spec, naming what is wrong and how to write it.
pub(super) fn check(spec: &WebhookSpec, packs: &[String]) -> Result<(), Error> {
    if let Some(why) = name_problem(&spec.name) {
        return Err(invalid(format!(
            "invalid webhook name `{}`: {why}; a webhook's name is lowercase letters, digits and `-` (like `team-chat`)",
            spec.name
        )));
    }
    check_url(&spec.url)?;
    for pack in &spec.packs {
        if !packs.contains(pack) {
            let known = match packs.is_empty() {
                true => "the store holds no pack yet".to_owned(),
                false => format!("it holds {}", packs.join(", ")),
            };
            return Err(Error::new(
                ErrorKind::UnknownPack,
                format!(
                    "webhook `{}` names pack `{pack}`, which the store does not hold: {known}",
                    spec.name
                ),
            ));
        }
    }
    for kind in &spec.events {
        if !EVENT_TYPES.contains(&kind.as_str()) {
            let hint = crate::store::nearest(kind, EVENT_TYPES.iter().copied())
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            return Err(invalid(format!(
                "unknown event type `{kind}`{hint}: a webhook takes {}",
                EVENT_TYPES.join(", ")
            )));
        }
    }
    Ok(())
}

/// An `http` or `https` URL with a host, no credentials, at most
/// [`MAX_URL_BYTES`]. Where it points is checked when a delivery
/// connects, since a name may resolve elsewhere later.
pub fn check_url(url: &str) -> Result<url::Url, Error> {
    if url.len() > MAX_URL_BYTES {
        return Err(invalid(format!(
            "a webhook's URL is at most {MAX_URL_BYTES} bytes; this one is {}",
            url.len()
        )));
    }
    let parsed =
        url::Url::parse(url).map_err(|e| invalid(format!("invalid webhook URL `{url}`: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "webhook URL `{url}` is `{}`: deliveries go over `http` or `https` only",
            parsed.scheme()
        )));
    }
    if parsed.host().is_none() {
        return Err(invalid(format!("webhook URL `{url}` has no host")));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(invalid(format!(
            "webhook URL `{url}` carries credentials: deliveries are signed instead, so none are needed (and the URL is shown in lists)"
        )));
    }
    Ok(parsed)
}
