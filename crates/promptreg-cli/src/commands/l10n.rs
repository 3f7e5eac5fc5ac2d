//! `promptreg l10n`: how far each locale is translated, recording a
//! variant as current, and the pack's text in XLIFF and PO files for
//! translators, written back when translated.

use std::fs;
use std::path::Path;

use promptreg::Locale;
use promptreg::l10n::{Catalog, Coverage, Format, Status};
use promptreg::pack::{FileSet, Translation, translation::record_source};
use serde_json::json;

use super::Output;
use crate::cli::{L10nArgs, L10nCommand, L10nFormat};
use crate::options::Session;
use crate::report::Failure;
use crate::style::Paint;

pub fn run(session: &Session, args: &L10nArgs) -> Result<Output, Failure> {
    match &args.command {
        L10nCommand::Status { .. } => status(session),
        L10nCommand::MarkCurrent { id, locale, .. } => mark_current(session, id, locale),
        L10nCommand::Export { format, output, .. } => export(session, *format, output.as_deref()),
        L10nCommand::Import {
            file,
            max_file_size,
            ..
        } => import(session, file, *max_file_size),
    }
}

fn status(session: &Session) -> Result<Output, Failure> {
    let pack = session.pack()?;
    let registry = session.host_registry(&pack)?;
    let locales: Vec<Locale> = match &session.args.locale {
        Some(tag) => vec![Locale::parse(tag)?],
        None => Vec::new(),
    };
    let status = Status::of(&pack, &registry, &locales);
    if session.args.json {
        return Ok(Output::json(
            &serde_json::to_value(&status).unwrap_or_default(),
        ));
    }
    Ok(Output::text(status_table(
        &status,
        Paint {
            color: session.color,
        },
    )))
}

/// One line per locale, then what is not current in each.
fn status_table(status: &Status, paint: Paint) -> String {
    if status.locales.is_empty() {
        return format!(
            "{}: no locale has a variant; `[l10n] locales` in promptreg.toml names the locales to translate into\n",
            status.pack
        );
    }
    let mut out = format!(
        "{:<10} {:>10} {:>8} {:>6} {:>10} {:>13}\n",
        "locale", "translated", "current", "stale", "untracked", "falling back"
    );
    for locale in &status.locales {
        let name = match locale.required {
            true => format!("{} *", locale.locale),
            false => locale.locale.to_string(),
        };
        out.push_str(&format!(
            "{name:<10} {:>10} {:>8} {:>6} {:>10} {:>13}\n",
            format!("{}/{}", locale.translated, locale.prompts),
            locale.current,
            locale.stale,
            locale.untracked,
            locale.falling_back
        ));
    }
    if status.locales.iter().any(|l| l.required) {
        out.push_str("* required by [l10n] required: `promptreg test` fails until it is current\n");
    }
    for locale in &status.locales {
        let pending: Vec<_> = locale
            .entries
            .iter()
            .filter(|e| e.state != Coverage::Current)
            .collect();
        if pending.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n{}\n",
            paint.heading(&locale.locale.to_string())
        ));
        for entry in pending {
            let serves = match (&entry.serves, entry.step) {
                (Some(variant), Some(step)) if entry.state == Coverage::Missing => {
                    format!("falls back to the `{variant}` variant ({step})")
                }
                (Some(variant), _) if entry.state == Coverage::Missing => {
                    format!("falls back to `{variant}`")
                }
                _ if entry.state == Coverage::Missing => {
                    format!("falls back to the default ({})", status.default_locale)
                }
                _ => String::new(),
            };
            let state = match entry.state {
                Coverage::Stale => paint.removed("stale"),
                other => other.as_str().to_owned(),
            };
            let line = format!("  {:<24} {state:<9} {serves}", entry.prompt.as_str());
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

fn mark_current(session: &Session, id: &str, tag: &str) -> Result<Output, Failure> {
    let pack = session.pack_to_write()?;
    let locale = Locale::parse(tag)?;
    let prompt = pack
        .prompt(id)
        .ok_or_else(|| Failure::usage(format!("the pack has no prompt `{id}`")))?;
    let source = prompt.source_text().ok_or_else(|| {
        Failure::usage(format!(
            "`{id}` has no default file, so nothing to translate from"
        ))
    })?;
    let path = prompt.variant_file(&locale).ok_or_else(|| {
        let file = pack.variant_path(id, &locale);
        Failure::usage(format!(
            "`{id}` has no `{locale}` variant; create {} first",
            file.display()
        ))
    })?;
    let was = prompt.translation(&locale).map(Translation::as_str);
    let text = fs::read_to_string(path).map_err(|e| io("read", path, e))?;
    let mut set = FileSet::new(pack.root());
    set.write(path, record_source(&text, source));
    set.commit()?;
    if session.args.json {
        return Ok(Output::json(&json!({
            "file": path.display().to_string(),
            "prompt": id,
            "locale": locale.to_string(),
            "was": was,
            "digest": source.digest(),
        })));
    }
    Ok(Output::text(format!(
        "{}: the `{locale}` variant of `{id}` translates the current default ({}, was {})\n",
        path.display(),
        source.digest(),
        was.unwrap_or("untracked")
    )))
}

fn export(session: &Session, format: L10nFormat, output: Option<&Path>) -> Result<Output, Failure> {
    let pack = session.pack()?;
    let Some(tag) = &session.args.locale else {
        return Err(Failure::usage(
            "`l10n export` writes one locale: give --locale TAG",
        ));
    };
    let locale = Locale::parse(tag)?;
    let format = match format {
        L10nFormat::Xliff => Format::Xliff,
        L10nFormat::Po => Format::Po,
    };
    let catalog = Catalog::of(&pack, &locale);
    let text = catalog.write(format);
    let Some(output) = output else {
        return Ok(Output::text(text));
    };
    write(output, &text)?;
    let count = |state| catalog.units.iter().filter(|u| u.state == state).count();
    use promptreg::l10n::UnitState::{New, Stale, Translated, Untracked};
    if session.args.json {
        return Ok(Output::json(&json!({
            "file": output.display().to_string(),
            "locale": locale.to_string(),
            "units": catalog.units.len(),
            "new": count(New),
            "stale": count(Stale),
            "untracked": count(Untracked),
            "translated": count(Translated),
        })));
    }
    Ok(Output::text(format!(
        "wrote {}: {} units for `{locale}` ({} new, {} stale, {} untracked, {} translated)\n",
        output.display(),
        catalog.units.len(),
        count(New),
        count(Stale),
        count(Untracked),
        count(Translated)
    )))
}

fn import(session: &Session, file: &Path, max_size: u64) -> Result<Output, Failure> {
    let dir = session.pack_dir()?;
    let pack = session.pack_to_write()?;
    let text = read_bounded(file, max_size)?;
    let catalog = Catalog::read(&text, file)?;
    let locale = match &session.args.locale {
        Some(tag) => Locale::parse(tag)?,
        None => Locale::parse(&catalog.locale)?,
    };
    let refused = |err: promptreg::Error| {
        let diagnostics = promptreg::Error::from_diagnostics(err.diagnostics().to_vec());
        Failure::stopped(
            diagnostics,
            "the file cannot be imported: nothing was written",
        )
    };
    let imported = catalog
        .import(&pack, &locale, |path| fs::read_to_string(path).ok())
        .map_err(refused)?;
    // The pack as it would be: it must still load.
    let mut files =
        promptreg_store::PackFiles::read(&dir).map_err(|e| Failure::usage(e.to_string()))?;
    for (path, text) in &imported.files {
        let relative = path.strip_prefix(&dir).unwrap_or(path);
        files.insert(
            relative.to_string_lossy().replace('\\', "/"),
            text.as_bytes(),
        );
    }
    if let Err(err) = files.to_pack(&dir) {
        let diagnostics = promptreg::Error::from_diagnostics(err.diagnostics().to_vec());
        return Err(Failure::stopped(
            diagnostics,
            "the imported translations would not load: nothing was written",
        ));
    }
    let mut set = FileSet::new(&dir);
    for (path, text) in &imported.files {
        set.write(path, text.as_bytes());
    }
    set.commit()?;
    let incomplete: Vec<String> = imported
        .incomplete
        .iter()
        .map(|(id, units)| format!("{id} ({} to translate: {})", units.len(), units.join(", ")))
        .collect();
    if session.args.json {
        return Ok(Output::json(&json!({
            "locale": locale.to_string(),
            "written": imported.files.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>(),
            "incomplete": imported.incomplete.iter().map(|(id, units)| json!({ "prompt": id, "units": units })).collect::<Vec<_>>(),
            "warnings": imported.warnings.iter().map(crate::report::diagnostic_json).collect::<Vec<_>>(),
        })));
    }
    let mut out = crate::report::render(
        &imported.warnings,
        session.color,
        crate::report::Wrap::stdout(),
    );
    for (path, _) in &imported.files {
        out.push_str(&format!("wrote {}\n", path.display()));
    }
    for line in &incomplete {
        out.push_str(&format!("not imported, not fully translated: {line}\n"));
    }
    out.push_str(&format!(
        "{} variant file{} of `{locale}` written, each recorded as current\n",
        imported.files.len(),
        if imported.files.len() == 1 { "" } else { "s" }
    ));
    Ok(Output::text(out))
}

/// The text of `path`, refused unread when it is larger than `max_size`
/// bytes: a translation file is read whole, and so are its units.
fn read_bounded(path: &Path, max_size: u64) -> Result<String, Failure> {
    use std::io::Read;

    let file = fs::File::open(path).map_err(|e| io("read", path, e))?;
    let mut bytes = Vec::new();
    file.take(max_size.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io("read", path, e))?;
    if bytes.len() as u64 > max_size {
        return Err(Failure::usage(format!(
            "{} is larger than {max_size} bytes, the most `l10n import` reads: nothing was written; give `--max-file-size` to read a larger file",
            path.display()
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        Failure::usage(format!(
            "cannot read {}: not UTF-8 ({e}); save it as UTF-8",
            path.display()
        ))
    })
}

/// Writes `text` to `path`, a file outside the pack (an exported
/// catalog), through a file beside it renamed over it, so a failure
/// leaves the old file whole.
fn write(path: &Path, text: &str) -> Result<(), Failure> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temporary = path.with_file_name(format!(".{name}.promptreg-tmp"));
    fs::write(&temporary, text).map_err(|e| io("write", &temporary, e))?;
    fs::rename(&temporary, path).map_err(|e| {
        let _ = fs::remove_file(&temporary);
        io("write", path, e)
    })
}

fn io(verb: &str, path: &Path, e: std::io::Error) -> Failure {
    Failure::usage(format!("cannot {verb} {}: {e}", path.display()))
}
