//! One prompt file of a pack: named after a declared id, its front
//! matter read and its body compiled, and added to its prompt as the
//! default or a locale variant.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::chat::Chat;
use crate::config::ConfigSpec;
use crate::diagnostic::{Diagnostic, DiagnosticCode, Diagnostics, LineIndex};
use crate::error::Error;
use crate::front_matter::{Document, PIN_HEAD, PIN_TAIL};
use crate::id::PromptId;
use crate::locale::Locale;
use crate::prompt::Prompt;
use crate::prompt_file::{self, FileKey, prompt_file_warnings};
use crate::provenance::{Provenance, SourceKind};
use crate::renderer::Renderer;
use crate::snippet::Snippets;
use crate::suggest;
use crate::template::Variable;

use super::translation::{self, SourceText, Translation};
use super::{DEFAULTS_DIR, LocaleVariant, MANIFEST, PackPrompt, chat, contract};

/// One default or variant file, named after a declared id.
pub(super) struct PromptFile<'a> {
    pub(super) id: PromptId,
    pub(super) locale: Option<Locale>,
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

/// Adds one default or variant file to `prompts`; what is wrong with it
/// goes to `diagnostics`.
pub(super) fn add_file(
    prompts: &mut BTreeMap<PromptId, PackPrompt>,
    file: PromptFile<'_>,
    read_with: &PackWide<'_>,
    diagnostics: &mut Diagnostics,
) {
    let default = prompts.get(&file.id).filter(|p| p.default.is_some());
    let inherited = Inherited {
        variables: default.map_or(&[][..], PackPrompt::variables),
        chat: default.map(|p| p.chat.as_ref()),
    };
    let Some(parsed) = parse_file(file, &inherited, read_with, diagnostics) else {
        return;
    };
    let id = &parsed.file.id;
    let entry = prompts.entry(id.clone()).or_insert_with(|| PackPrompt {
        id: id.clone(),
        default: None,
        chat: None,
        source: None,
        template: false,
        variants: BTreeMap::new(),
    });
    match parsed.file.locale.clone() {
        None => add_default(entry, parsed, read_with.shared, diagnostics),
        Some(locale) => {
            if let Some(variant) = variant(entry, parsed, locale, diagnostics) {
                diagnostics.ok(insert_variant(entry, variant));
            }
        }
    }
}

/// What every prompt file of the pack is read with.
pub(super) struct PackWide<'a> {
    /// The snippets templates may include.
    pub(super) snippets: &'a Arc<Snippets>,
    /// The manifest's `extra_model_keys`: model settings not warned about.
    pub(super) extra_model_keys: &'a [String],
    /// The tools and schemas of `tools/` and `schemas/`, which a default
    /// file's contract may name.
    pub(super) shared: &'a super::shared_contract::SharedContract,
}

/// What a locale variant takes from its default file.
struct Inherited<'a> {
    variables: &'a [Variable],
    /// `None` for a default file (or a variant without one); `Some(None)`
    /// when the default is text.
    chat: Option<Option<&'a chat::ChatDecl>>,
}

/// A prompt file with its front matter read and its body compiled.
struct ParsedFile<'a> {
    file: PromptFile<'a>,
    doc: Document<'a>,
    body: Renderer,
    /// A chat file's messages (`body` is then empty) and declaration.
    chat: Option<(Arc<Chat>, chat::ChatDecl)>,
}

impl ParsedFile<'_> {
    /// Warnings about the file, its pinned blocks compiled.
    fn warnings(&self, head: &[Renderer], tail: &[Renderer]) -> Vec<Diagnostic> {
        let messages = self.chat.iter().flat_map(|(c, _)| chat::contents(c));
        let parts: Vec<&Renderer> = head
            .iter()
            .chain([&self.body])
            .chain(messages)
            .chain(tail)
            .collect();
        prompt_file_warnings(&self.doc, self.file.text, self.file.path, &parts)
    }
}

/// Reads the front matter and compiles the body, or a chat file's messages
/// (with the default's variables, for a variant that declares none).
fn parse_file<'a>(
    file: PromptFile<'a>,
    inherited: &Inherited<'_>,
    read_with: &PackWide<'_>,
    diagnostics: &mut Diagnostics,
) -> Option<ParsedFile<'a>> {
    let doc = match Document::parse_all(file.text, file.path) {
        Ok(doc) => doc.with_snippets(read_with.snippets),
        Err(problems) => {
            diagnostics.extend(problems);
            return None;
        }
    };
    let settings_problems = doc.settings_problems(file.path);
    if !settings_problems.is_empty() {
        diagnostics.extend(settings_problems);
        return None;
    }
    diagnostics.extend(doc.settings_warnings(file.path, read_with.extra_model_keys));
    if diagnostics.ok(chat::is_chat(&doc, file.path, inherited.chat))? {
        let chat = parse_chat(&doc, file.path, inherited, diagnostics)?;
        let body = Renderer::text("");
        return Some(ParsedFile {
            file,
            doc,
            body,
            chat: Some(chat),
        });
    }
    diagnostics.ok(chat::chat_keys_in_text(&doc, file.path))?;
    let body = diagnostics.ok(doc.body_renderer_with(file.path, inherited.variables))?;
    if let Some(template) = body.computed::<crate::template::Template>() {
        diagnostics.extend(template.undeclared_diagnostics());
    }
    Some(ParsedFile {
        file,
        doc,
        body,
        chat: None,
    })
}

/// The messages of a chat file, and its declaration (its own keys over
/// its default's).
fn parse_chat(
    doc: &Document<'_>,
    path: &Path,
    inherited: &Inherited<'_>,
    diagnostics: &mut Diagnostics,
) -> Option<(Arc<Chat>, chat::ChatDecl)> {
    let decl = chat::ChatDecl::of(doc, inherited.chat.flatten());
    let variables = match doc.declares_variables() {
        true => doc.variables(),
        false => inherited.variables.to_vec(),
    };
    let chat = match chat::parse(doc, path, &variables, &decl) {
        Ok(chat) => chat,
        Err(problems) => {
            diagnostics.extend(problems);
            return None;
        }
    };
    for content in chat::contents(&chat) {
        if let Some(template) = content.computed::<crate::template::Template>() {
            diagnostics.extend(template.undeclared_diagnostics());
        }
    }
    Some((Arc::new(chat), decl))
}

/// The default of a prompt, with its pinned blocks and description.
fn add_default(
    entry: &mut PackPrompt,
    parsed: ParsedFile<'_>,
    shared: &super::shared_contract::SharedContract,
    diagnostics: &mut Diagnostics,
) {
    let Some((head, tail)) = diagnostics.ok(parsed.doc.pin_renderers(parsed.file.path)) else {
        return;
    };
    diagnostics.extend(parsed.warnings(&head, &tail));
    let ParsedFile {
        file,
        doc,
        body,
        chat,
    } = parsed;
    let provenance = file_provenance("default file", file.path, None);
    let at = (&file.id, file.path);
    let Some(contract) = contract::read(&doc, at, shared, &provenance, diagnostics) else {
        return;
    };
    let mut prompt = Prompt::new(body)
        .with_pins(head, tail)
        .with_provenance(provenance);
    if let Some(contract) = contract {
        prompt = prompt.with_contract(contract);
    }
    if let Some((messages, decl)) = chat {
        prompt = prompt.with_chat(messages);
        entry.chat = Some(decl);
    }
    if let Some(description) = &doc.meta.description {
        prompt = prompt.describe(description.as_str());
    }
    if let Some(model) = doc.model_settings() {
        prompt = prompt.with_model(model);
    }
    if let Some(metadata) = doc.metadata() {
        prompt = prompt.with_metadata(metadata);
    }
    entry.source = Some(SourceText::of(&doc));
    entry.template = doc.is_template();
    entry.default = Some((file.path.to_path_buf(), prompt, doc.variables()));
}

/// A locale variant: its body and its translations of the default's pins,
/// which it gives all or none of per side.
fn variant(
    entry: &PackPrompt,
    parsed: ParsedFile<'_>,
    locale: Locale,
    diagnostics: &mut Diagnostics,
) -> Option<LocaleVariant> {
    let (doc, id, path) = (&parsed.doc, &parsed.file.id, parsed.file.path);
    diagnostics.ok(default_only(doc, "description", id, path))?;
    diagnostics.ok(default_only(doc, "metadata", id, path))?;
    let default = entry.default_prompt();
    for (key, declared) in [
        (PIN_HEAD, default.map_or(0, |d| d.head().len())),
        (PIN_TAIL, default.map_or(0, |d| d.tail().len())),
    ] {
        diagnostics.ok(check_pin_count(doc, key, declared, id, path))?;
    }
    let (head, tail) = diagnostics.ok(doc.pin_renderers_with(path, entry.variables()))?;
    diagnostics.extend(parsed.warnings(&head, &tail));
    let source = entry.source.clone().unwrap_or_default();
    let translation = diagnostics.ok(translation::state(doc, &source, path))?;
    let mut provenance = file_provenance("locale variant", path, Some(&locale));
    let default_contract = default.and_then(Prompt::contract);
    let contract = contract::translate(doc, default_contract, id, path, &provenance, diagnostics)?;
    if let Translation::Stale { from } = &translation {
        diagnostics.push(translation::stale_warning(id, &locale, path, from, &source));
        Arc::make_mut(&mut provenance).stale = true;
    }
    Some(LocaleVariant {
        provenance,
        text: SourceText::of(doc),
        translation,
        locale,
        file: path.to_path_buf(),
        chat: parsed.chat.map(|(messages, _)| messages),
        renderer: parsed.body,
        head,
        tail,
        model: doc.model_settings(),
        contract: contract.map(Arc::new),
    })
}

/// A description and metadata belong to the default: listings show one per
/// prompt.
fn default_only(
    doc: &Document<'_>,
    key: &str,
    id: &PromptId,
    path: &Path,
) -> Result<(), Diagnostic> {
    let given = match key {
        "description" => doc.meta.description.is_some(),
        _ => doc.meta.metadata.is_some(),
    };
    if !given {
        return Ok(());
    }
    Err(Diagnostic::error(
        DiagnosticCode::FrontMatter,
        format!("a locale variant cannot set `{key}`"),
    )
    .in_file(path)
    .at_key(doc, key)
    .suggest(Some(format!("set it in {DEFAULTS_DIR}/{id}.md"))))
}

/// Adds `variant` to its prompt; two files for one locale are an error.
fn insert_variant(entry: &mut PackPrompt, variant: LocaleVariant) -> Result<(), Diagnostic> {
    let key = variant.locale.key().to_owned();
    if let Some(existing) = entry.variants.get(&key) {
        return Err(Diagnostic::error(
            DiagnosticCode::DuplicateId,
            format!(
                "the `{}` variant of `{}` (also in {}) is defined twice",
                variant.locale,
                entry.id,
                existing.file.display()
            ),
        )
        .in_file(&variant.file)
        .suggest(Some("keep one of the files".to_owned())));
    }
    entry.variants.insert(key, variant);
    Ok(())
}

/// The provenance of a pack file: `what` it is, where, for which locale.
fn file_provenance(what: &str, path: &Path, locale: Option<&Locale>) -> Arc<Provenance> {
    let mut provenance = Provenance::new(SourceKind::Pack, what).file(path);
    provenance.locale = locale.cloned();
    Arc::new(provenance)
}

/// A variant translates the pinned blocks of one side all or not at all:
/// `declared` blocks in the default, matched by position.
fn check_pin_count(
    doc: &Document<'_>,
    key: &str,
    declared: usize,
    id: &PromptId,
    path: &Path,
) -> Result<(), Diagnostic> {
    let given = doc.pin_count(key);
    if given == 0 || given == declared {
        return Ok(());
    }
    let blocks = |n: usize| match n {
        1 => "1 block".to_owned(),
        n => format!("{n} blocks"),
    };
    let hint = match declared {
        0 => format!("remove `{key}`, or declare the pinned blocks in {DEFAULTS_DIR}/{id}.md"),
        _ => format!(
            "give one translation per block of {DEFAULTS_DIR}/{id}.md, in the same order, or leave `{key}` out to keep the default's text"
        ),
    };
    Err(Diagnostic::error(
        DiagnosticCode::FrontMatter,
        format!(
            "`{key}` gives {} but the default of `{id}` pins {}: a variant translates the pinned blocks by position",
            blocks(given),
            blocks(declared)
        ),
    )
    .in_file(path)
    .at_key(doc, key)
    .suggest(Some(hint)))
}

/// Points a diagnostic at a front matter key of the file, when present.
trait AtKey {
    fn at_key(self, doc: &Document<'_>, key: &str) -> Self;
}

impl AtKey for Diagnostic {
    fn at_key(self, doc: &Document<'_>, key: &str) -> Self {
        match doc.key_span(key) {
            Some(span) => self.at(&LineIndex::new(doc.text()), span),
            None => self,
        }
    }
}

/// `<id>.md` or `<id>.<locale>.md`, for a declared id.
pub(super) fn classify(
    spec: &ConfigSpec,
    name: &str,
    path: &Path,
) -> Result<(PromptId, Option<Locale>), Diagnostic> {
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let key = match prompt_file::file_key(spec, stem) {
        FileKey::Key(id, locale) => return Ok((id, locale)),
        FileKey::Invalid(e) => return Err(invalid(path, e)),
        FileKey::Unknown { key, .. } => key,
    };
    let hint = suggest::nearest(key, spec.keys().map(PromptId::as_str))
        .map(|k| format!("did you mean `{k}`?"))
        .unwrap_or_else(|| format!("add `{key}` to `keys` in {MANIFEST}"));
    Err(Diagnostic::error(
        DiagnosticCode::UndeclaredId,
        format!("this default file is for `{key}`, which {MANIFEST} does not declare"),
    )
    .in_file(path)
    .suggest(Some(hint)))
}

fn invalid(path: &Path, e: Error) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::InvalidPromptKey, e.detail().to_owned()).in_file(path)
}
