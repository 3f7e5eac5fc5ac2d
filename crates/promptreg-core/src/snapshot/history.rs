//! Histories given to a render: checked against the prompt's
//! placeholders and roles, and inserted where they stand.

use crate::chat::{Chat, Message, MessageSource, RenderedMessage};
use crate::error::{Error, ErrorKind};
use crate::id::PromptId;
use crate::suggest;

/// The histories a chat render inserts, by placeholder name.
pub(crate) type Histories<'h> = [(&'h str, &'h [Message])];

/// Every history passed is for a placeholder `chat` declares. Inline: most
/// renders pass none, and then this costs one comparison.
#[inline]
pub(super) fn check_history(
    id: &PromptId,
    chat: Option<&Chat>,
    history: &Histories<'_>,
) -> Result<(), Error> {
    match history.is_empty() {
        true => Ok(()),
        false => check_history_names(id, chat, history),
    }
}

fn check_history_names(
    id: &PromptId,
    chat: Option<&Chat>,
    history: &Histories<'_>,
) -> Result<(), Error> {
    let placeholders = || chat.into_iter().flat_map(Chat::placeholders);
    let Some((name, _)) = history
        .iter()
        .find(|(name, _)| !placeholders().any(|p| p == *name))
    else {
        return Ok(());
    };
    let hint = suggest::did_you_mean(name, placeholders()).unwrap_or_else(|| {
        match placeholders().next() {
            Some(_) => format!(
                "its placeholders are {}",
                placeholders()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "pass no history, or declare a placeholder (`# history: NAME` in a chat file)"
                .to_owned(),
        }
    });
    Err(Error::new(
        ErrorKind::InvalidChat,
        format!("prompt `{id}` has no history placeholder `{name}`"),
    )
    .with_id(id.as_str())
    .with_suggestion(hint))
}

/// Every message of a history has a role the prompt knows, as a role
/// heading in a chat file must: `usr` is a typo, not a custom role.
pub(super) fn check_history_roles(
    id: &PromptId,
    chat: &Chat,
    history: &Histories<'_>,
) -> Result<(), Error> {
    for (name, messages) in history {
        for (index, message) in messages.iter().enumerate() {
            let role = message.role.as_str();
            if chat.known_roles().any(|known| known == role) {
                continue;
            }
            let listed: Vec<String> = chat.known_roles().map(|r| format!("`{r}`")).collect();
            let hint = suggest::did_you_mean(role, chat.known_roles()).unwrap_or_else(|| {
                format!(
                    "the roles are {}; a custom role is declared with `roles: [{role}]` in the prompt's front matter",
                    listed.join(", ")
                )
            });
            return Err(Error::new(
                ErrorKind::InvalidChat,
                format!(
                    "message {} of history `{name}` has unknown role `{role}`",
                    index + 1
                ),
            )
            .with_id(id.as_str())
            .with_suggestion(hint));
        }
    }
    Ok(())
}

/// Adds the messages passed for placeholder `name` to `out`.
pub(super) fn insert_history<M: From<RenderedMessage>>(
    history: &Histories<'_>,
    name: &str,
    out: &mut Vec<M>,
) {
    for (_, messages) in history.iter().filter(|(given, _)| *given == name) {
        let traced = messages
            .iter()
            .enumerate()
            .map(|(index, m)| RenderedMessage {
                role: m.role.clone(),
                content: m.content.clone(),
                parts: Vec::new(),
                source: MessageSource::History {
                    name: name.to_owned(),
                    index,
                },
            });
        out.extend(traced.map(M::from));
    }
}
