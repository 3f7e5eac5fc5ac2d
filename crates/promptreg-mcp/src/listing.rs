//! `prompts/list`: every prompt a session sees, by name, each with its
//! arguments as declared, a page at a time.

use std::sync::Arc;

use promptreg::Provenance;
use promptreg::{Locale, Snapshot};
use rmcp::ErrorData;
use rmcp::model::{MetaObject, Prompt};
use serde_json::{Map, Value, json};

use crate::arguments::Declared;
use crate::catalog::Served;

/// How many prompts a page of `prompts/list` holds unless the host says.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// One prompt a session sees: its name there, its pack, its id.
pub(crate) struct Entry<'a> {
    pub(crate) name: String,
    pub(crate) served: &'a Served,
    pub(crate) id: String,
}

impl Entry<'_> {
    /// The snapshot renders of this prompt read, for `subject`.
    pub(crate) fn snapshot(&self, subject: Option<&str>) -> Arc<Snapshot> {
        self.served.pack.snapshot(subject)
    }

    /// The locale the session asks for, else the pack's default.
    pub(crate) fn locale(&self, asked: Option<&Locale>) -> Locale {
        asked
            .cloned()
            .unwrap_or_else(|| self.served.pack.pack().default_locale().clone())
    }

    /// The MCP prompt: name, title, description, arguments, and in
    /// `_meta` what MCP has no field for (types, locale, version).
    pub(crate) fn prompt(&self, snapshot: &Snapshot, locale: &Locale) -> Prompt {
        let pack = self.served.pack.pack();
        let declared = pack.prompt(&self.id);
        let default = snapshot.default_prompt(&self.id);
        let description = declared
            .and_then(|p| p.description())
            .or_else(|| default.and_then(|p| p.description()));
        let arguments = declared
            .map(|p| {
                p.variables()
                    .iter()
                    .map(|v| Declared(v).argument())
                    .collect()
            })
            .unwrap_or_default();
        let mut meta = Map::new();
        meta.insert("promptreg/pack".into(), Value::from(pack.name()));
        meta.insert("promptreg/id".into(), Value::from(self.id.as_str()));
        let chat = snapshot.is_chat(&self.id, locale).unwrap_or(false);
        meta.insert(
            "promptreg/kind".into(),
            Value::from(if chat { "chat" } else { "text" }),
        );
        if let Ok(lookup) = snapshot.locale_lookup(&self.id, locale) {
            let served = lookup.matched.map_or_else(
                || pack.default_locale().as_str().to_owned(),
                |m| m.locale.as_str().to_owned(),
            );
            meta.insert("promptreg/locale".into(), Value::from(served));
        }
        if let Some(provenance) = default.and_then(|p| p.provenance()) {
            stored(&mut meta, provenance);
        }
        if let Some(declared) = declared {
            let types: Map<String, Value> = declared
                .variables()
                .iter()
                .map(|v| (v.name.clone(), Declared(v).meta()))
                .collect();
            meta.insert("promptreg/arguments".into(), Value::Object(types));
        }
        let title = default
            .and_then(|p| p.metadata())
            .and_then(|m| m.get("title"))
            .and_then(|title| title.as_str().map(str::to_owned));
        let mut prompt = Prompt::new(&self.name, description, Some(arguments));
        if let Some(title) = title {
            prompt = prompt.with_title(title);
        }
        prompt.with_meta(MetaObject(meta))
    }
}

/// Where a part or a prompt stands in the store it came from, into
/// `meta`: its version and digest, the label and its revision.
pub(crate) fn stored(meta: &mut Map<String, Value>, provenance: &Provenance) {
    let fields = [
        ("promptreg/version", provenance.version.map(Value::from)),
        (
            "promptreg/digest",
            provenance.digest.clone().map(Value::from),
        ),
        ("promptreg/label", provenance.label.clone().map(Value::from)),
        ("promptreg/revision", provenance.revision.map(Value::from)),
        ("promptreg/split", provenance.split.map(Value::from)),
    ];
    for (key, value) in fields {
        if let Some(value) = value {
            meta.insert(key.into(), value);
        }
    }
}

/// Every prompt of `served`, sorted by name.
pub(crate) fn entries<'a>(served: &'a [Served], subject: Option<&str>) -> Vec<Entry<'a>> {
    let mut entries: Vec<Entry<'a>> = served
        .iter()
        .flat_map(|s| {
            let ids = s.pack.snapshot(subject).list();
            ids.into_iter().map(move |id| Entry {
                name: match &s.prefix {
                    Some(prefix) => format!("{prefix}/{id}"),
                    None => id.as_str().to_owned(),
                },
                served: s,
                id: id.as_str().to_owned(),
            })
        })
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    entries
}

/// The prompt named `name` among `served`, if the session sees it.
pub(crate) fn find<'a>(
    served: &'a [Served],
    name: &str,
    subject: Option<&str>,
) -> Option<Entry<'a>> {
    served.iter().find_map(|s| {
        let id = match &s.prefix {
            Some(prefix) => name.strip_prefix(prefix.as_str())?.strip_prefix('/')?,
            None => name,
        };
        s.pack.snapshot(subject).has(id).then(|| Entry {
            name: name.to_owned(),
            served: s,
            id: id.to_owned(),
        })
    })
}

/// The page of `entries` after `cursor` (the last name of the page
/// before: a page stays right when prompts come and go between pages),
/// and the cursor of the next page.
pub(crate) fn page<'e, 'a>(
    entries: &'e [Entry<'a>],
    cursor: Option<&str>,
    size: usize,
) -> Result<(&'e [Entry<'a>], Option<String>), ErrorData> {
    let start = match cursor {
        None => 0,
        Some(after) if after.is_empty() || after.len() > 1024 => {
            return Err(ErrorData::invalid_params(
                "the cursor is not one `prompts/list` gave: list again without it",
                Some(json!({ "cursor": after.chars().take(100).collect::<String>() })),
            ));
        }
        Some(after) => entries.partition_point(|e| e.name.as_str() <= after),
    };
    let end = start.saturating_add(size.max(1)).min(entries.len());
    let page = &entries[start..end];
    let next = (end < entries.len()).then(|| page.last().map(|e| e.name.clone()));
    Ok((page, next.flatten()))
}
