//! Translations that keep up: a variant records what it translates, goes
//! stale when its default changes, and round-trips through XLIFF and PO
//! files, refusing what would lose or break anything.

#![cfg(all(feature = "l10n", feature = "testing"))]

mod support;

use std::path::Path;

use promptreg::l10n::{Catalog, Coverage, Format, Status};
use promptreg::pack::{Pack, Translation, translation::record_source};
use promptreg::testing::PromptTests;
use promptreg::{DiagnosticCode, Locale, PromptRegistry};

const MANIFEST: &str = "name = \"shop\"\nkeys = [\"greeting\", \"farewell\"]\n[user]\nprompts_dir = \".shop\"\n[l10n]\nlocales = [\"ja\", \"fr\"]\nrequired = [\"ja\"]\npseudo = true\n";
const GREETING: &str = "---\ntemplate: true\nvariables:\n  name:\npin_tail: Never promise a delivery date.\n---\nHello {{ name }}, {% if vip %}welcome back{% endif %}.\n";

fn ja() -> Locale {
    Locale::parse("ja").unwrap()
}

/// A pack whose `ja` variant of `greeting` is marked current.
fn pack(root: &Path) -> Pack {
    support::write(&root.join("promptreg.toml"), MANIFEST);
    support::write(&root.join("defaults/greeting.md"), GREETING);
    support::write(&root.join("defaults/farewell.md"), "Goodbye.\n");
    let pack = Pack::load(root).unwrap();
    let source = pack
        .prompt("greeting")
        .unwrap()
        .source_text()
        .unwrap()
        .clone();
    let variant = "---\ntemplate: true\npin_tail: 配達日を約束しないこと。\n---\nこんにちは、{{ name }}さん。{% if vip %}おかえりなさい{% endif %}。\n";
    support::write(
        &root.join("defaults/greeting.ja.md"),
        record_source(variant, &source),
    );
    Pack::load(root).unwrap()
}

fn change_default(root: &Path) {
    let changed = GREETING.replace("welcome back", "welcome back, we missed you");
    support::write(&root.join("defaults/greeting.md"), &changed);
}

fn import(pack: &Pack, text: &str) -> Result<promptreg::l10n::Imported, promptreg::Error> {
    Catalog::read(text, Path::new("ja.file"))?
        .import(pack, &ja(), |path| std::fs::read_to_string(path).ok())
}

#[test]
fn a_changed_default_makes_its_variant_stale_with_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path());
    let greeting = pack.prompt("greeting").unwrap();
    assert_eq!(greeting.translation(&ja()), Some(&Translation::Current));
    assert!(
        pack.warnings()
            .iter()
            .all(|d| d.code != DiagnosticCode::StaleTranslation)
    );

    change_default(dir.path());
    let (pack, diagnostics) = Pack::load_with_diagnostics(dir.path());
    let pack = pack.unwrap();
    assert!(
        pack.prompt("greeting")
            .unwrap()
            .translation(&ja())
            .unwrap()
            .is_stale()
    );
    let stale: Vec<_> = diagnostics
        .iter()
        .filter(|d| d.code == DiagnosticCode::StaleTranslation)
        .collect();
    assert_eq!(stale.len(), 1);
    assert!(
        stale[0]
            .message
            .contains("the `ja` variant of `greeting` is stale")
    );
    assert!(stale[0].detail.as_deref().unwrap().contains(
        "--- body\n@@ -1 +1 @@\n-Hello {{ name }}, {% if vip %}welcome back{% endif %}.\n+Hello {{ name }}, {% if vip %}welcome back, we missed you{% endif %}."
    ));
    assert!(
        stale[0]
            .file
            .as_deref()
            .unwrap()
            .ends_with("defaults/greeting.ja.md")
    );
    assert!(
        stale[0]
            .suggestion
            .as_deref()
            .unwrap()
            .contains("promptreg l10n mark-current greeting ja")
    );

    // A render of the stale variant says so in its provenance.
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let ctx = serde_json::json!({ "name": "Ada", "vip": true });
    let traced = registry
        .render_traced_in("greeting", &ctx, "ja-JP")
        .unwrap();
    let body = traced
        .parts
        .iter()
        .find(|p| traced.part_text(p).contains("こんにちは"))
        .unwrap();
    assert!(body.provenance.as_ref().unwrap().stale);
}

#[test]
fn status_counts_each_locale_and_what_the_others_fall_back_to() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path());
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let status = Status::of(&pack, &registry, &[]);
    let locales: Vec<&str> = status.locales.iter().map(|l| l.locale.as_str()).collect();
    // The generated pseudo-locale is no translation to count.
    assert_eq!(locales, ["fr", "ja"]);
    let ja = &status.locales[1];
    assert!(ja.required);
    assert_eq!(
        (ja.prompts, ja.current, ja.stale, ja.falling_back),
        (2, 1, 0, 1)
    );
    let farewell = ja
        .entries
        .iter()
        .find(|e| e.prompt.as_str() == "farewell")
        .unwrap();
    assert_eq!(
        (farewell.state, farewell.serves.as_ref()),
        (Coverage::Missing, None)
    );
    // Asked for, the pseudo-locale has a current variant of every prompt.
    let pseudo = Status::of(&pack, &registry, &[Locale::parse("en-XA").unwrap()]);
    assert_eq!(pseudo.locales[0].current, 2);
}

#[test]
fn required_locales_fail_the_tests_until_translations_are_current() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path());
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let results = PromptTests::load(&pack).unwrap().run(&registry);
    let failing: Vec<_> = results.iter().filter(|r| !r.passed()).collect();
    // `farewell` has no `ja` translation; `greeting`'s is current.
    assert_eq!(failing.len(), 1);
    assert_eq!(failing[0].prompt.as_str(), "farewell");
    assert!(
        failing[0].failures[0]
            .message
            .contains("has no `ja` translation")
    );

    change_default(dir.path());
    let pack = Pack::load(dir.path()).unwrap();
    let results = PromptTests::load(&pack).unwrap().run(&registry);
    let greeting = results
        .iter()
        .find(|r| r.prompt.as_str() == "greeting")
        .unwrap();
    assert!(greeting.failures[0].message.contains("is stale"));
    assert!(
        greeting.failures[0]
            .diff
            .as_deref()
            .unwrap()
            .contains("+Hello")
    );
}

#[test]
fn xliff_and_po_round_trip_a_translation_back_to_current() {
    for format in [Format::Xliff, Format::Po] {
        let dir = tempfile::tempdir().unwrap();
        pack(dir.path());
        change_default(dir.path());
        let pack = Pack::load(dir.path()).unwrap();
        let exported = Catalog::of(&pack, &ja()).write(format);
        // The stale unit carries its old source; template syntax is protected.
        assert!(exported.contains("welcome back{% endif %}") || format == Format::Xliff);
        if format == Format::Xliff {
            assert!(exported.contains("<note category=\"previous-source\">Hello {{ name }}, {% if vip %}welcome back{% endif %}.\n</note>"));
            assert!(exported.contains("<ph id=\"1\" dataRef=\"d1\" disp=\"{{ name }}\"/>"));
        } else {
            assert!(exported.contains("#, fuzzy"));
            assert!(
                exported
                    .contains("#. keep as written: `{{ name }}`, `{% if vip %}`, `{% endif %}`")
            );
        }

        // Without a translator's change nothing is imported: the stale unit
        // is not marked done.
        let untouched = import(&pack, &exported).unwrap();
        assert!(untouched.files.is_empty());
        assert_eq!(untouched.incomplete.len(), 1);

        let translated = match format {
            Format::Xliff => exported
                .replace("おかえりなさい", "おかえりなさい、会いたかったです")
                .replace("state=\"initial\"", "state=\"translated\""),
            Format::Po => exported
                .replace("おかえりなさい", "おかえりなさい、会いたかったです")
                .replace("#, fuzzy\n", ""),
        };
        let imported = import(&pack, &translated).unwrap();
        // `farewell` has no translation yet: not imported, not incomplete.
        assert_eq!(imported.files.len(), 1, "{format:?}");
        let (path, text) = &imported.files[0];
        assert!(path.ends_with("defaults/greeting.ja.md"));
        assert!(text.ends_with("---\nこんにちは、{{ name }}さん。{% if vip %}おかえりなさい、会いたかったです{% endif %}。\n"), "{text}");
        std::fs::write(path, text).unwrap();
        let (pack, diagnostics) = Pack::load_with_diagnostics(dir.path());
        assert!(
            diagnostics
                .iter()
                .all(|d| d.code != DiagnosticCode::StaleTranslation)
        );
        let translation = pack
            .unwrap()
            .prompt("greeting")
            .unwrap()
            .translation(&ja())
            .cloned();
        assert_eq!(translation, Some(Translation::Current), "{format:?}");
    }
}

#[test]
fn a_new_translation_creates_its_variant_file() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path());
    let po = Catalog::of(&pack, &Locale::parse("fr").unwrap()).write(Format::Po);
    let po = po.replace(
        "msgid \"Goodbye.\\n\"\nmsgstr \"\"",
        "msgid \"Goodbye.\\n\"\nmsgstr \"Au revoir.\\n\"",
    );
    let imported = Catalog::read(&po, Path::new("fr.po"))
        .unwrap()
        .import(&pack, &Locale::parse("fr").unwrap(), |_| None)
        .unwrap();
    assert_eq!(imported.files.len(), 1, "{po}");
    let (path, text) = &imported.files[0];
    assert!(path.ends_with("defaults/farewell.fr.md"));
    assert!(text.starts_with("---\ntranslated_from:\n  digest: "));
    assert!(text.ends_with("---\nAu revoir.\n"));
}

/// A line longer than 64 KiB: the PO reader once read lines through a
/// buffer of that size, panicking on one with a multi-byte character and
/// cutting an ASCII one short, then writing the cut text as current.
#[test]
fn a_po_line_longer_than_64_kib_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path());
    let fr = Locale::parse("fr").unwrap();
    let po = Catalog::of(&pack, &fr).write(Format::Po);
    for long in ["a".repeat(70_000), "é".repeat(40_000)] {
        let translated = po.replace(
            "msgid \"Goodbye.\\n\"\nmsgstr \"\"",
            &format!("msgid \"Goodbye.\\n\"\nmsgstr \"{long}\""),
        );
        let imported = Catalog::read(&translated, Path::new("fr.po"))
            .unwrap()
            .import(&pack, &fr, |_| None)
            .unwrap();
        let (_, text) = &imported.files[0];
        assert!(
            text.ends_with(&format!("---\n{long}")),
            "{} bytes",
            text.len()
        );
    }
}

/// A PO file of `n` units of prompts the pack does not have.
fn po_of_units(n: usize) -> String {
    let mut po =
        "msgid \"\"\nmsgstr \"\"\n\"Project-Id-Version: shop\\n\"\n\"Language: ja\\n\"\n\n"
            .to_owned();
    for i in 0..n {
        po.push_str(&format!(
            "msgctxt \"p{i}:body\"\nmsgid \"x\"\nmsgstr \"y\"\n\n"
        ));
    }
    po
}

#[test]
fn a_file_of_more_units_than_any_pack_is_refused() {
    use promptreg::l10n::MAX_UNITS;

    assert!(Catalog::read(&po_of_units(MAX_UNITS), Path::new("ja.po")).is_ok());
    // What follows the unit too many is not read.
    let po = po_of_units(MAX_UNITS + 1) + "not PO\n";
    let mut xliff = "<xliff trgLang=\"ja\"><file original=\"shop\">".to_owned();
    for i in 0..=MAX_UNITS {
        xliff.push_str(&format!(
            "<unit id=\"p{i}:body\"><segment><source>x</source></segment></unit>"
        ));
    }
    xliff.push_str("</file></xliff>");
    for (text, name) in [(po, "ja.po"), (xliff, "ja.xlf")] {
        let err = Catalog::read(&text, Path::new(name)).unwrap_err();
        let message = &err.diagnostics()[0].message;
        assert!(
            message.contains(&format!("more than {MAX_UNITS} units")),
            "{name}: {message}"
        );
    }
}

#[test]
fn an_import_reports_at_most_100_problems_then_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path());
    let err = import(&pack, &po_of_units(300)).unwrap_err();
    let diagnostics = err.diagnostics();
    assert_eq!(diagnostics.len(), promptreg::MAX_DIAGNOSTICS_PER_FILE + 1);
    let last = diagnostics.last().unwrap();
    assert_eq!(last.code, DiagnosticCode::MoreProblems);
    // 300 unknown units, and the 3 of the pack the file lacks.
    assert!(
        last.message.starts_with("203 more problems"),
        "{}",
        last.message
    );
}

#[test]
fn a_unit_twice_in_a_file_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path());
    let po = Catalog::of(&pack, &ja()).write(Format::Po);
    let start = po.find("msgctxt \"farewell:body\"").unwrap();
    let message = &po[start..];
    let message = &message[..=message.find("\n\n").unwrap() + 1];
    let twice = format!(
        "{po}{}",
        message.replace("msgstr \"\"", "msgstr \"さようなら。\\n\"")
    );
    let err = import(&pack, &twice).unwrap_err();
    let messages: Vec<&str> = err
        .diagnostics()
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        ["unit `farewell:body` is in the file more than once"]
    );
}

#[test]
fn bidi_controls_in_a_translation_are_warned_about_by_the_import_and_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path());
    let fr = Locale::parse("fr").unwrap();
    let po = Catalog::of(&pack, &fr).write(Format::Po);
    let po = po.replace(
        "msgid \"Goodbye.\\n\"\nmsgstr \"\"",
        "msgid \"Goodbye.\\n\"\nmsgstr \"Au \u{202e}revoir\u{2066}.\\n\"",
    );
    let imported = Catalog::read(&po, Path::new("fr.po"))
        .unwrap()
        .import(&pack, &fr, |_| None)
        .unwrap();
    let warnings: Vec<_> = imported
        .warnings
        .iter()
        .map(|w| (w.code, w.message.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [(
            DiagnosticCode::BidiControl,
            "unit `farewell:body`: the translation holds 2 bidirectional-text control characters (the first U+202E): it shows in another order than the model reads it"
        )]
    );
    let (path, text) = &imported.files[0];
    std::fs::write(path, text).unwrap();
    let (_, diagnostics) = Pack::load_with_diagnostics(dir.path());
    let bidi: Vec<_> = diagnostics
        .iter()
        .filter(|d| d.code == DiagnosticCode::BidiControl)
        .collect();
    assert_eq!(bidi.len(), 1, "{diagnostics:?}");
    assert!(
        bidi[0].file.as_deref() == Some(path.as_path()),
        "{:?}",
        bidi[0]
    );
    assert!(bidi[0].is_warning() && bidi[0].position.is_some());
}

#[test]
fn bad_translation_files_are_refused_naming_the_unit() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path());
    let xliff = Catalog::of(&pack, &ja()).write(Format::Xliff);
    let message = |text: &str| match import(&pack, text) {
        Ok(imported) => panic!("imported {imported:?}"),
        Err(e) => e
            .diagnostics()
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("\n"),
    };

    // A translation that changes template syntax.
    let broken = xliff
        .replace("state=\"initial\"", "state=\"translated\"")
        .replace("<target>配達日", "<target>{{ date }}配達日");
    assert_eq!(
        message(&broken),
        "unit `greeting:pin_tail.1`: the translation changes the template: the translation adds `{{ date }}`"
    );
    // Another pack, another locale.
    assert!(
        message(&xliff.replace("original=\"shop\"", "original=\"other\""))
            .contains("for the pack `other`, not `shop`")
    );
    assert!(
        message(&xliff.replace("trgLang=\"ja\"", "trgLang=\"fr\""))
            .contains("translates into `fr`, not `ja`")
    );
    // Truncated: the XML does not close.
    let truncated = &xliff[..xliff.len() / 2];
    assert!(
        message(truncated).contains("truncated") || message(truncated).contains("not valid XML")
    );
    // A source that changed since the export.
    change_default(dir.path());
    let newer = Pack::load(dir.path()).unwrap();
    let err = Catalog::read(&xliff, Path::new("ja.xlf"))
        .unwrap()
        .import(&newer, &ja(), |_| None)
        .unwrap_err();
    assert!(
        err.diagnostics()[0]
            .message
            .starts_with("unit `greeting:body`: its source changed since the export")
    );
    // A PO file missing a unit, and one that is not PO at all.
    let po = Catalog::of(&pack, &ja()).write(Format::Po);
    let cut = po[..po.find("msgctxt \"greeting:body\"").unwrap()].to_owned();
    let reported = message(&cut);
    assert!(
        reported.contains("the file has no unit `greeting:body`"),
        "{reported}"
    );
    assert!(message("msgid \"unterminated").contains("line 1 is not PO syntax"));
    // Control characters and bidi overrides are escaped in reports.
    let sneaky = xliff.replace("original=\"shop\"", "original=\"sh\u{202e}op\u{1}\"");
    let reported = message(&sneaky);
    assert!(
        !reported.contains('\u{202e}') && !reported.contains('\u{1}'),
        "{reported}"
    );
}

#[test]
fn the_pseudo_locale_accents_text_and_keeps_the_template() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path());
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let ctx = serde_json::json!({ "name": "Ada", "vip": true });
    let text = registry.render_in("greeting", &ctx, "en-XA").unwrap();
    assert_eq!(
        text,
        "⟦Ĥééļļöö Ada, ŵééļçööɱéé ƀååçķ.⟧\n\n⟦Ñééṽééŕ þŕööɱîîšéé åå đééļîîṽééŕý đååţéé.⟧"
    );
}
