//! The bad-input catalogue: every folder in `tests/inputs/bad/` is laid over
//! a working configuration, which is then reloaded. Each case gets one
//! snapshot of what happened (the diagnostics with their locations, or the
//! load and render result), and the harness asserts that a failed load or
//! reload changed nothing: the previous configuration renders exactly as
//! before.
//!
//! A case folder mirrors the sandbox (`home/...`, `project/...`); a `setup`
//! file makes what git cannot hold, one instruction per line:
//! `huge PATH BYTES`, `dir PATH`, `file PATH`, `symlink-loop PATH`,
//! `fifo PATH`, `symlink PATH TARGET` (a link at PATH, replacing a file or
//! folder there, to TARGET: absolute, or relative to the sandbox), and
//! `write PATH TEXT` (the rest of the line), where the path and the text
//! may hold `[TEXT*N]` for TEXT repeated N times and the escapes `\0`,
//! `\e` (ESC), `\a` (BEL) and `\n`.

#![cfg(feature = "config")]

mod support;

use promptreg::prelude::*;
use std::fs;
use std::path::Path;

use promptreg::config::LoadedConfig;
use promptreg::{ErrorKind, Locale, PromptRegistry};
use support::{DIR, SETTINGS, Sandbox};

const BASELINE_RULE: &str = "Baseline rule.";

fn registry() -> PromptRegistry {
    support::goal_registry()
}

/// Renders of the prompts the cases touch, to compare states.
fn state(registry: &PromptRegistry) -> Vec<String> {
    ["auditor", "goal-stale"]
        .iter()
        .map(|id| match registry.render(id, &()) {
            Ok(text) => text,
            Err(e) => format!("error: {e}"),
        })
        .collect()
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&path, &target);
        } else if path.file_name().unwrap() != "setup" {
            fs::copy(&path, &target).unwrap();
        }
    }
}

/// Runs the case's `setup` instructions in the sandbox.
fn set_up(case: &Path, root: &Path) {
    let Ok(setup) = fs::read_to_string(case.join("setup")) else {
        return;
    };
    for line in setup.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let path = root.join(expand(words[1]));
        let _ = fs::remove_file(&path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        match words[0] {
            "huge" => fs::write(&path, "x".repeat(words[2].parse().unwrap())).unwrap(),
            "dir" => fs::create_dir_all(&path).unwrap(),
            "file" => {
                let _ = fs::remove_dir_all(&path);
                fs::write(&path, "a file where a directory belongs").unwrap();
            }
            "symlink-loop" => std::os::unix::fs::symlink(&path, &path).unwrap(),
            "symlink" => {
                let _ = fs::remove_dir_all(&path);
                std::os::unix::fs::symlink(root.join(words[2]), &path).unwrap();
            }
            "write" => {
                let text = line.splitn(3, ' ').nth(2).unwrap_or_default();
                fs::write(&path, expand(text)).unwrap();
            }
            "fifo" => {
                let made = std::process::Command::new("mkfifo").arg(&path).status();
                assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
            }
            other => panic!("unknown setup instruction `{other}`"),
        }
    }
}

/// A setup text with its repetitions and escapes expanded.
fn expand(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('[') {
        out.push_str(&unescape(&rest[..start]));
        let token = &rest[start + 1..];
        let repeated = token.find(']').and_then(|end| {
            let (unit, count) = token[..end].rsplit_once('*')?;
            Some((unescape(unit).repeat(count.parse().ok()?), end))
        });
        match repeated {
            Some((text, end)) => {
                out.push_str(&text);
                rest = &token[end + 1..];
            }
            None => {
                out.push('[');
                rest = token;
            }
        }
    }
    out.push_str(&unescape(rest));
    out
}

fn unescape(text: &str) -> String {
    text.replace("\\0", "\0")
        .replace("\\e", "\u{1b}")
        .replace("\\a", "\u{7}")
        .replace("\\n", "\n")
}

/// What a report may show of any one diagnostic, whatever the input.
fn assert_bounded(d: &promptreg::Diagnostic) {
    let shown = d.to_string();
    assert!(shown.len() <= 2000, "a message of {} bytes", shown.len());
    assert!(
        !shown.contains(['\u{1b}', '\u{7}', '\0']),
        "a raw control character in {shown}"
    );
    if let Some(excerpt) = &d.excerpt {
        assert!(excerpt.text.lines().count() <= 3, "{excerpt:?}");
        assert!(excerpt.text.chars().count() <= 1000, "{excerpt:?}");
        assert!(
            !excerpt.text.contains(['\u{1b}', '\u{7}', '\0']),
            "{excerpt:?}"
        );
    }
}

#[test]
fn bad_inputs() {
    insta::glob!("inputs/bad/*", |case| {
        let sandbox = Sandbox::new();
        sandbox.cwd_file(
            SETTINGS,
            r#"{ "prompts": { "auditor": { "mode": "append" } } }"#,
        );
        sandbox.cwd_file(&format!("{DIR}/auditor.md"), BASELINE_RULE);
        let registry = registry();
        registry
            .load_config(support::goal_agent_spec(), sandbox.options())
            .unwrap();
        let before = state(&registry);
        let settings_before = LoadedConfig::of(&registry.snapshot()).map(|c| c.settings().clone());
        assert_eq!(before[0], format!("Audit the work.\n\n{BASELINE_RULE}"));

        copy_tree(case, sandbox.root());
        set_up(case, sandbox.root());

        let report = match registry.reload() {
            Err(error) => {
                assert_eq!(error.kind(), ErrorKind::Config);
                assert!(!error.diagnostics().is_empty());
                for d in error.diagnostics().iter().filter(|d| d.is_error()) {
                    assert!(d.file.is_some(), "every error names its file: {d}");
                }
                error.diagnostics().iter().for_each(assert_bounded);
                // Nothing half-applied, nothing lost.
                assert_eq!(
                    state(&registry),
                    before,
                    "a failed reload changed the registry"
                );
                assert_eq!(
                    LoadedConfig::of(&registry.snapshot()).map(|c| c.settings().clone()),
                    settings_before
                );
                // A first load fails the same way and installs nothing.
                let fresh = self::registry();
                let first = fresh.load_config(support::goal_agent_spec(), sandbox.options());
                assert_eq!(first.unwrap_err().diagnostics(), error.diagnostics());
                assert_eq!(state(&fresh), ["Audit the work.", "Stale."]);
                let diagnostics = support::report(error.diagnostics(), |text| sandbox.redact(text));
                format!("load failed: {:?}\n{diagnostics}\n", error.kind())
            }
            Ok(loaded) => {
                let mut out = "loaded\n".to_owned();
                loaded.warnings.iter().for_each(assert_bounded);
                for w in &loaded.warnings {
                    out.push_str(&format!(
                        "warning {:?}: {}\n",
                        w.code,
                        sandbox.redact(&w.to_string())
                    ));
                }
                for (id, text) in ["auditor", "goal-stale"].iter().zip(state(&registry)) {
                    out.push_str(&format!("render {id}: {}\n", sandbox.redact(&text)));
                }
                out
            }
        };
        insta::assert_snapshot!(report);
    });
}

/// The pack every case of `inputs/bad-packs/` is laid over: a template
/// that includes a snippet, and a test file.
#[cfg(feature = "testing")]
const BASE_PACK: &[(&str, &str)] = &[
    (
        "promptreg.toml",
        "name = \"base\"\nkeys = [\"greeting\", \"farewell\"]\n[user]\nprompts_dir = \".base/prompts\"\n",
    ),
    (
        "defaults/greeting.md",
        "---\ntemplate: true\nvariables:\n  name:\n---\nHello {{ name }}!\n{% include \"sign-off\" %}\n",
    ),
    ("defaults/farewell.md", "Goodbye."),
    ("snippets/sign-off.md", "Signed, the team."),
    ("snippets/sign-off.ja.md", "チームより"),
    (
        "tests/greeting.toml",
        "prompt = \"greeting\"\n[[case]]\nname = \"hello\"\ncontext = { name = \"Ada\" }\ncontains = \"Signed\"\n",
    ),
];

/// Renders of the base pack's prompts, to compare states.
#[cfg(feature = "testing")]
fn pack_state(registry: &PromptRegistry) -> Vec<String> {
    let ctx = serde_json::json!({ "name": "Ada" });
    [("greeting", "en"), ("greeting", "ja"), ("farewell", "en")]
        .iter()
        .map(|(id, locale)| match registry.render_in(id, &ctx, *locale) {
            Ok(text) => text,
            Err(e) => format!("error: {e}"),
        })
        .collect()
}

/// The bad-input catalogue of packs: every folder in
/// `tests/inputs/bad-packs/` is laid over [`BASE_PACK`] (its `pack/`
/// folder over the pack), which is then reloaded and its tests read again.
/// A failed reload changes nothing; tests that fail to load run nothing.
#[cfg(feature = "testing")]
#[test]
fn bad_pack_inputs() {
    use promptreg::pack::Pack;
    use promptreg::testing::PromptTests;

    insta::glob!("inputs/bad-packs/*", |case| {
        let sandbox = Sandbox::new();
        let dir = sandbox.root().join("pack");
        for (path, text) in BASE_PACK {
            support::write(&dir.join(path), text);
        }
        let registry = PromptRegistry::new();
        let pack = Pack::load(&dir).unwrap();
        pack.install(&registry).unwrap();
        let before = pack_state(&registry);
        assert_eq!(
            before,
            [
                "Hello Ada!\nSigned, the team.",
                "Hello Ada!\nチームより",
                "Goodbye."
            ]
        );
        let cases_before = PromptTests::load(&pack).unwrap().cases().len();

        copy_tree(case, sandbox.root());
        set_up(case, sandbox.root());

        let redact = |text: &str| sandbox.redact(text);
        let mut out = String::new();
        match registry.reload() {
            Err(error) => {
                assert_eq!(error.kind(), ErrorKind::Config);
                error.diagnostics().iter().for_each(assert_bounded);
                assert_eq!(
                    pack_state(&registry),
                    before,
                    "a failed reload changed the registry"
                );
                let first = Pack::load(&dir).unwrap_err();
                assert_eq!(first.diagnostics(), error.diagnostics());
                out.push_str(&format!(
                    "pack: load failed\n{}\n",
                    support::report(error.diagnostics(), redact)
                ));
            }
            Ok(_) => out.push_str("pack: loaded\n"),
        }
        if let Ok(pack) = Pack::load(&dir) {
            match PromptTests::load(&pack) {
                Err(error) => {
                    error.diagnostics().iter().for_each(assert_bounded);
                    for d in error.diagnostics().iter().filter(|d| d.is_error()) {
                        assert!(d.file.is_some() && d.position.is_some(), "{d}");
                    }
                    out.push_str(&format!(
                        "tests: load failed\n{}\n",
                        support::report(error.diagnostics(), redact)
                    ));
                }
                Ok(tests) => {
                    assert_eq!(tests.cases().len(), cases_before);
                    out.push_str("tests: loaded\n");
                }
            }
        }
        insta::assert_snapshot!(out);
    });
}

#[test]
fn the_catalogue_has_at_least_forty_cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inputs/bad");
    assert!(fs::read_dir(dir).unwrap().count() >= 40);
}

/// Bad ids and locales through the API: refused, and nothing changes.
#[test]
fn bad_ids_and_locales_change_nothing() {
    let registry = registry();
    registry.set_override("auditor", "ja", "日本語").unwrap();
    let before = (
        state(&registry),
        registry.list(),
        registry.locale(),
        registry.fallback_locale(),
    );
    let long = "a".repeat(129);
    for id in [
        "a/b",
        "..",
        "a..b",
        "has space",
        "tab\t",
        "bell\u{7}",
        long.as_str(),
        "",
        "-x",
    ] {
        for err in [
            registry.register_default(id, "x").unwrap_err(),
            registry.set_override(id, "en", "x").unwrap_err(),
            registry.append(id, "x").unwrap_err(),
            registry.reset(id).unwrap_err(),
            registry.render(id, &()).unwrap_err(),
        ] {
            assert_eq!(err.kind(), ErrorKind::InvalidId, "{id:?}");
            assert_eq!(err.id(), Some(id));
        }
    }
    for tag in ["en--US", "x", "", "und", "en_", "12", "en US"] {
        for err in [
            registry.set_locale(tag).unwrap_err(),
            registry.set_fallback_locale(tag).unwrap_err(),
            registry.set_override("auditor", tag, "x").unwrap_err(),
            registry.render_in("auditor", &(), tag).unwrap_err(),
            Locale::parse(tag).unwrap_err(),
        ] {
            assert_eq!(err.kind(), ErrorKind::InvalidLocale, "{tag:?}");
            assert_eq!(err.locale(), Some(tag));
        }
    }
    let after = (
        state(&registry),
        registry.list(),
        registry.locale(),
        registry.fallback_locale(),
    );
    assert_eq!(after, before);
}
