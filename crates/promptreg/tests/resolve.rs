//! The stateless resolution rule, line by line.

#![cfg(feature = "config")]

mod support;

use std::path::Path;

use promptreg::config::{
    Mode, PromptSettings, ResolveOptions, Resolved, Source, UserBlock, resolve_block,
    resolve_prompt,
};
use promptreg::{ErrorKind, Locale};
use support::Sandbox;

const DIR: &str = ".app/prompts";
const KEY: &str = "auditor";
const DEFAULT: &str = "Default text.";

fn options(sandbox: &Sandbox) -> ResolveOptions {
    ResolveOptions::new(DIR, sandbox.home())
}

fn settings(mode: Option<Mode>) -> PromptSettings {
    PromptSettings {
        mode,
        ..Default::default()
    }
}

fn resolve(sandbox: &Sandbox, cfg: &PromptSettings) -> Resolved {
    resolve_prompt(KEY, cfg, &sandbox.cwd(), DEFAULT, &options(sandbox)).unwrap()
}

fn global(sandbox: &Sandbox, text: &str) {
    sandbox.home_file(&format!("{DIR}/{KEY}.md"), text);
}

fn local(sandbox: &Sandbox, text: &str) {
    sandbox.cwd_file(&format!("{DIR}/{KEY}.md"), text);
}

fn expect(final_text: &str, injected: Option<&str>, source: Source) -> Resolved {
    Resolved {
        final_text: final_text.to_owned(),
        injected: injected.map(str::to_owned),
        source,
    }
}

fn appended(block: &str) -> String {
    format!("{DEFAULT}\n\n{block}")
}

/// Every mode against no file, global only, local only, and both.
/// A source is written as its name, the one bindings and `--json` show.
#[test]
fn a_source_serialises_as_its_name() {
    for (source, name) in [
        (Source::Inline, "inline"),
        (Source::Global, "global"),
        (Source::Local, "local"),
        (Source::Merged, "merged"),
        (Source::None, "none"),
    ] {
        assert_eq!(source.as_str(), name);
        assert_eq!(serde_json::to_value(source).unwrap(), name);
    }
}

#[test]
fn each_mode_with_each_combination_of_files() {
    let none = expect(DEFAULT, None, Source::None);
    let g = "Global block.";
    let l = "Local block.";
    let merged = "Global block.\n\nLocal block.";
    #[rustfmt::skip]
    let table: Vec<(Option<Mode>, [Resolved; 3])> = vec![
        // mode: [global only, local only, both]
        (None, [expect(&appended(g), Some(g), Source::Global), expect(&appended(l), Some(l), Source::Local), expect(&appended(l), Some(l), Source::Local)]),
        (Some(Mode::GlobalLocal), [expect(&appended(g), Some(g), Source::Global), expect(&appended(l), Some(l), Source::Local), expect(&appended(l), Some(l), Source::Local)]),
        (Some(Mode::Append), [expect(&appended(g), Some(g), Source::Global), expect(&appended(l), Some(l), Source::Local), expect(&appended(l), Some(l), Source::Local)]),
        (Some(Mode::Override), [expect(g, Some(g), Source::Global), expect(l, Some(l), Source::Local), expect(l, Some(l), Source::Local)]),
        (Some(Mode::Local), [none.clone(), expect(&appended(l), Some(l), Source::Local), expect(&appended(l), Some(l), Source::Local)]),
        (Some(Mode::GlobalLocalMerge), [expect(&appended(g), Some(g), Source::Global), expect(&appended(l), Some(l), Source::Local), expect(&appended(merged), Some(merged), Source::Merged)]),
        (Some(Mode::Off), [none.clone(), none.clone(), none.clone()]),
    ];
    for (mode, [global_only, local_only, both]) in table {
        let cfg = settings(mode);

        let sandbox = Sandbox::new();
        assert_eq!(resolve(&sandbox, &cfg), none, "{mode:?}, no file");

        let sandbox = Sandbox::new();
        global(&sandbox, &format!("\n{g}\n"));
        assert_eq!(
            resolve(&sandbox, &cfg),
            global_only,
            "{mode:?}, global only"
        );

        let sandbox = Sandbox::new();
        local(&sandbox, l);
        assert_eq!(resolve(&sandbox, &cfg), local_only, "{mode:?}, local only");

        let sandbox = Sandbox::new();
        global(&sandbox, g);
        local(&sandbox, l);
        assert_eq!(resolve(&sandbox, &cfg), both, "{mode:?}, both");
    }
}

/// The block alone says what `resolve_prompt` does with the default: in
/// every mode, with each file, and inline.
#[test]
fn the_block_alone_says_whether_it_replaces_the_default() {
    let sandbox = Sandbox::new();
    let cwd = sandbox.cwd();
    let block = |cfg: &PromptSettings| resolve_block(KEY, cfg, &cwd, &options(&sandbox)).unwrap();
    assert_eq!(block(&settings(None)), None);
    local(&sandbox, "Local block.\n");
    for mode in Mode::ALL {
        let inline = PromptSettings {
            mode: Some(mode),
            inline: Some(" Inline. ".into()),
            ..Default::default()
        };
        let expected = UserBlock {
            text: "Inline.".into(),
            source: Source::Inline,
            replaces_default: true,
        };
        assert_eq!(block(&inline).as_ref(), Some(&expected), "{mode:?}, inline");
        assert_eq!(expected.apply_to(DEFAULT), "Inline.");

        let from_file = block(&settings(Some(mode)));
        let resolved = resolve(&sandbox, &settings(Some(mode)));
        if mode == Mode::Off {
            assert_eq!(from_file, None);
            continue;
        }
        let from_file = from_file.unwrap();
        assert_eq!(from_file.source, Source::Local, "{mode:?}");
        assert_eq!(
            from_file.replaces_default,
            mode == Mode::Override,
            "{mode:?}"
        );
        assert_eq!(from_file.apply_to(DEFAULT), resolved.final_text, "{mode:?}");
    }
}

#[test]
fn blank_files_count_as_absent() {
    let sandbox = Sandbox::new();
    global(&sandbox, "Global block.");
    local(&sandbox, "  \n\t\n");
    let merged = resolve(&sandbox, &settings(Some(Mode::GlobalLocalMerge)));
    assert_eq!(
        merged,
        expect(
            &appended("Global block."),
            Some("Global block."),
            Source::Global
        )
    );
    let default_mode = resolve(&sandbox, &settings(None));
    assert_eq!(default_mode.source, Source::Global);

    let sandbox = Sandbox::new();
    global(&sandbox, "");
    local(&sandbox, "\n");
    assert_eq!(resolve(&sandbox, &settings(None)).source, Source::None);
}

#[test]
fn inline_wins_in_every_mode_including_off() {
    let sandbox = Sandbox::new();
    global(&sandbox, "Global block.");
    local(&sandbox, "Local block.");
    for mode in Mode::ALL.map(Some).into_iter().chain([None]) {
        let cfg = PromptSettings {
            mode,
            inline: Some("  Inline rule.\n".into()),
            file: Some("elsewhere.md".into()),
        };
        assert_eq!(
            resolve(&sandbox, &cfg),
            expect("Inline rule.", Some("Inline rule."), Source::Inline),
            "{mode:?}"
        );
    }
}

#[test]
fn blank_inline_is_ignored() {
    let sandbox = Sandbox::new();
    local(&sandbox, "Local block.");
    let cfg = PromptSettings {
        inline: Some(" \n ".into()),
        ..Default::default()
    };
    assert_eq!(resolve(&sandbox, &cfg).source, Source::Local);
}

#[test]
fn file_setting_with_tilde_relative_missing_and_blank() {
    let sandbox = Sandbox::new();
    local(&sandbox, "Local block.");
    sandbox.home_file("rules/mine.md", "From home.");
    sandbox.cwd_file("docs/rule.md", "From the project.");
    sandbox.cwd_file("docs/blank.md", "   ");
    let with_file = |file: &str, mode| PromptSettings {
        mode,
        inline: None,
        file: Some(file.into()),
    };

    let tilde = resolve(&sandbox, &with_file(" ~/rules/mine.md ", None));
    assert_eq!(
        tilde,
        expect(&appended("From home."), Some("From home."), Source::Local)
    );

    let relative = resolve(&sandbox, &with_file("docs/rule.md", Some(Mode::Override)));
    assert_eq!(
        relative,
        expect(
            "From the project.",
            Some("From the project."),
            Source::Local
        )
    );

    let absolute_path = sandbox.cwd().join("docs/rule.md");
    let absolute = resolve(&sandbox, &with_file(absolute_path.to_str().unwrap(), None));
    assert_eq!(absolute.injected.as_deref(), Some("From the project."));

    // Missing and blank files fall through to the mode's files.
    for fallthrough in ["docs/missing.md", "docs/blank.md", "   "] {
        let resolved = resolve(&sandbox, &with_file(fallthrough, None));
        assert_eq!(
            resolved.injected.as_deref(),
            Some("Local block."),
            "{fallthrough:?}"
        );
    }

    // Mode off injects nothing, not even the named file.
    let off = resolve(&sandbox, &with_file("docs/rule.md", Some(Mode::Off)));
    assert_eq!(off.source, Source::None);
}

#[test]
fn an_empty_cwd_consults_no_local_file() {
    let sandbox = Sandbox::new();
    global(&sandbox, "Global block.");
    local(&sandbox, "Local block.");
    let resolved = resolve_prompt(
        KEY,
        &settings(None),
        Path::new(""),
        DEFAULT,
        &options(&sandbox),
    )
    .unwrap();
    assert_eq!(resolved.source, Source::Global);
    let only_local = resolve_prompt(
        KEY,
        &settings(Some(Mode::Local)),
        Path::new(""),
        DEFAULT,
        &options(&sandbox),
    )
    .unwrap();
    assert_eq!(only_local.source, Source::None);
    // A relative `file` needs a cwd to resolve against.
    let cfg = PromptSettings {
        file: Some(format!("{DIR}/{KEY}.md")),
        ..Default::default()
    };
    let relative = resolve_prompt(KEY, &cfg, Path::new(""), DEFAULT, &options(&sandbox)).unwrap();
    assert_eq!(relative.source, Source::Global);
}

#[test]
fn custom_and_absolute_prompt_directories() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file("custom/auditor.md", "Custom.");
    let custom = ResolveOptions::new("custom", sandbox.home());
    let resolved = resolve_prompt(KEY, &settings(None), &sandbox.cwd(), DEFAULT, &custom).unwrap();
    assert_eq!(resolved.injected.as_deref(), Some("Custom."));

    // An absolute directory is read once, as the global one, never under home.
    let shared = sandbox.root().join("shared");
    support::write(&shared.join("auditor.md"), "Shared.");
    let absolute = ResolveOptions::new(shared.to_str().unwrap(), sandbox.home());
    let resolved = resolve_prompt(
        KEY,
        &settings(Some(Mode::GlobalLocalMerge)),
        &sandbox.cwd(),
        DEFAULT,
        &absolute,
    )
    .unwrap();
    assert_eq!(
        resolved,
        expect(&appended("Shared."), Some("Shared."), Source::Global)
    );
}

#[test]
fn keys_are_isolated() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/goal-running.md"), "Goal block.");
    assert_eq!(resolve(&sandbox, &settings(None)).source, Source::None);
    let goal = resolve_prompt(
        "goal-running",
        &settings(None),
        &sandbox.cwd(),
        DEFAULT,
        &options(&sandbox),
    )
    .unwrap();
    assert_eq!(goal.injected.as_deref(), Some("Goal block."));
}

#[test]
fn editing_a_file_changes_the_next_result() {
    let sandbox = Sandbox::new();
    local(&sandbox, "First.");
    assert_eq!(
        resolve(&sandbox, &settings(None)).injected.as_deref(),
        Some("First.")
    );
    local(&sandbox, "Second.");
    assert_eq!(
        resolve(&sandbox, &settings(None)).injected.as_deref(),
        Some("Second.")
    );
    std::fs::remove_file(sandbox.cwd().join(DIR).join("auditor.md")).unwrap();
    assert_eq!(resolve(&sandbox, &settings(None)).source, Source::None);
}

#[test]
fn locale_files_are_tried_along_the_chain_before_the_plain_file() {
    let sandbox = Sandbox::new();
    local(&sandbox, "Plain.");
    sandbox.cwd_file(&format!("{DIR}/{KEY}.zh-Hant.md"), "正體。");
    let mut opts = options(&sandbox);
    opts.locale = Some(Locale::parse("zh-TW").unwrap());
    let resolved = resolve_prompt(KEY, &settings(None), &sandbox.cwd(), DEFAULT, &opts).unwrap();
    assert_eq!(resolved.injected.as_deref(), Some("正體。"));
    opts.locale = Some(Locale::parse("zh-CN").unwrap());
    let resolved = resolve_prompt(KEY, &settings(None), &sandbox.cwd(), DEFAULT, &opts).unwrap();
    assert_eq!(resolved.injected.as_deref(), Some("Plain."));
}

#[test]
fn keys_that_would_escape_the_directory_are_refused() {
    let sandbox = Sandbox::new();
    for key in ["tool-../../x", "../auditor", "a/b", ""] {
        let err = resolve_prompt(
            key,
            &settings(None),
            &sandbox.cwd(),
            DEFAULT,
            &options(&sandbox),
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidId, "{key:?}");
    }
}

fn resolve_err(sandbox: &Sandbox, options: &ResolveOptions) -> promptreg::Error {
    resolve_prompt(KEY, &settings(None), &sandbox.cwd(), DEFAULT, options).unwrap_err()
}

#[test]
fn unreadable_files_are_errors_not_absent() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/{KEY}.md"), b"ok\xff");
    let err = resolve_err(&sandbox, &options(&sandbox));
    assert_eq!(err.kind(), ErrorKind::Config);
    let d = &err.diagnostics()[0];
    assert!(d.message.contains("byte offset 2"), "{d}");
    assert!(d.file.as_ref().unwrap().ends_with("auditor.md"));

    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.cwd().join(DIR).join("auditor.md")).unwrap();
    let err = resolve_err(&sandbox, &options(&sandbox));
    assert!(err.to_string().contains("is a directory"), "{err}");

    let sandbox = Sandbox::new();
    local(&sandbox, &"x".repeat(100));
    let mut small = options(&sandbox);
    small.max_file_size = 10;
    let err = resolve_prompt(KEY, &settings(None), &sandbox.cwd(), DEFAULT, &small).unwrap_err();
    assert!(err.to_string().contains("larger than the limit"), "{err}");
}

/// The stateless resolver and a loaded configuration choose the same user
/// file for every render locale: both match the files' locales as a render
/// matches a prompt's variants (chain, same language and script, fallback).
mod the_same_file_as_a_loaded_configuration {
    use promptreg::config::{ConfigSpec, LoadOptions};
    use promptreg::prelude::*;
    use promptreg::{Locale, PromptRegistry};
    use proptest::prelude::*;

    use super::*;

    const TAGS: [&str; 18] = [
        "en", "en-001", "en-GB", "zh", "zh-TW", "zh-Hant", "zh-HK", "zh-CN", "pt", "pt-BR",
        "pt-PT", "sr", "sr-Latn", "sr-Cyrl", "ja", "fr", "es-419", "es-MX",
    ];

    fn loaded(sandbox: &Sandbox, locale: &str) -> String {
        let registry = PromptRegistry::new();
        registry.register_default(KEY, DEFAULT).unwrap();
        let spec = ConfigSpec::builder("app")
            .key(KEY)
            .prompts_dir(DIR)
            .build()
            .unwrap();
        let options = LoadOptions::new(sandbox.home(), sandbox.cwd());
        registry.load_config(spec, options).unwrap();
        registry.render_in(KEY, &(), locale).unwrap()
    }

    fn stateless(sandbox: &Sandbox, locale: &str) -> String {
        let mut opts = options(sandbox);
        opts.locale = Some(Locale::parse(locale).unwrap());
        let cfg = settings(None);
        resolve_prompt(KEY, &cfg, &sandbox.cwd(), DEFAULT, &opts)
            .unwrap()
            .final_text
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn for_every_locale(
            files in proptest::sample::subsequence(TAGS.to_vec(), 0..6),
            plain in any::<bool>(),
            locale in proptest::sample::select(TAGS.to_vec()),
        ) {
            let sandbox = Sandbox::new();
            for tag in &files {
                sandbox.cwd_file(&format!("{DIR}/{KEY}.{tag}.md"), format!("From {tag}."));
            }
            if plain {
                local(&sandbox, "Plain.");
            }
            prop_assert_eq!(stateless(&sandbox, locale), loaded(&sandbox, locale));
        }
    }

    /// The cases the issue names, written out.
    #[test]
    fn hong_kong_portugal_serbian_latin_and_world_english() {
        let sandbox = Sandbox::new();
        for tag in ["zh-TW", "pt-BR", "sr-Latn", "en"] {
            sandbox.cwd_file(&format!("{DIR}/{KEY}.{tag}.md"), format!("From {tag}."));
        }
        for (locale, file) in [
            ("zh-HK", "zh-TW"),
            ("pt-PT", "pt-BR"),
            ("sr-Latn-RS", "sr-Latn"),
            ("en-001", "en"),
            ("fr", "en"),
        ] {
            let expected = appended(&format!("From {file}."));
            assert_eq!(stateless(&sandbox, locale), expected, "{locale}");
            assert_eq!(loaded(&sandbox, locale), expected, "{locale}");
        }
    }
}
