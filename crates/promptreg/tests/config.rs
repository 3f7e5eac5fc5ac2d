//! User configuration loaded into a registry: settings files, prompt
//! directories, locale files, legacy names, reload, check, schema.

#![cfg(feature = "config")]

mod support;

use promptreg::config::{ConfigSpec, LoadedConfig, check};
use promptreg::prelude::*;
use promptreg::{DiagnosticCode, ErrorKind, Origin, Prompt, PromptRegistry, Severity, SourceKind};
use support::Sandbox;

use support::{DIR, SETTINGS};

fn spec() -> ConfigSpec {
    support::goal_agent_spec()
}

fn registry() -> PromptRegistry {
    let registry = PromptRegistry::new();
    registry
        .register(
            "goal-running",
            Prompt::new("Work on the goal.")
                .pin_head("[PI GOAL ACTIVE]")
                .pin_tail("Verification contract."),
        )
        .unwrap();
    registry
        .register_default("auditor", "Audit the work.")
        .unwrap();
    registry
        .register_default("tool-get-goal", "Returns the goal.")
        .unwrap();
    registry
        .register_default("goal-stale", "The checkpoint is stale.")
        .unwrap();
    registry
}

fn loaded(sandbox: &Sandbox) -> PromptRegistry {
    let registry = registry();
    registry.load_config(spec(), sandbox.options()).unwrap();
    registry
}

fn render(registry: &PromptRegistry, id: &str) -> String {
    registry.render(id, &()).unwrap()
}

// --- The user layer in the composition -----------------------------------

#[test]
fn a_user_file_is_appended_after_the_body_and_before_tail_pins_and_appenders() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/goal-running.md"), "Delegate to a team.\n");
    let registry = loaded(&sandbox);
    registry.append_all("Compliance.").unwrap();
    assert_eq!(
        render(&registry, "goal-running"),
        "[PI GOAL ACTIVE]\n\nWork on the goal.\n\nDelegate to a team.\n\nVerification contract.\n\nCompliance."
    );
}

#[test]
fn override_mode_replaces_only_the_body_and_keeps_the_pins() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/goal-running.md"), "Only this.");
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "goal-running": { "mode": "override" } } }"#,
    );
    let registry = loaded(&sandbox);
    assert_eq!(
        render(&registry, "goal-running"),
        "[PI GOAL ACTIVE]\n\nOnly this.\n\nVerification contract."
    );
}

#[test]
fn the_user_layer_builds_on_the_hosts_locale_override() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "User rule.");
    let registry = loaded(&sandbox);
    registry
        .set_override("auditor", "ja", "監査してください。")
        .unwrap();
    assert_eq!(
        registry.render_in("auditor", &(), "ja").unwrap(),
        "監査してください。\n\nUser rule."
    );
}

#[test]
fn inline_settings_win_over_files_and_replace_the_body() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "From a file.");
    sandbox.cwd_file(
        SETTINGS,
        r#"{
            // Inline wins even in mode off.
            "prompts": { "auditor": { "mode": "off", "inline": "Reject unless the verifier hash is present." } },
        }"#,
    );
    let registry = loaded(&sandbox);
    assert_eq!(
        render(&registry, "auditor"),
        "Reject unless the verifier hash is present."
    );
}

#[test]
fn mode_off_injects_nothing() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/tool-get-goal.md"), "Injected.");
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "tool-get-goal": { "mode": "off" } } }"#,
    );
    let registry = loaded(&sandbox);
    assert_eq!(render(&registry, "tool-get-goal"), "Returns the goal.");
}

#[test]
fn merge_mode_adds_global_then_local() {
    let sandbox = Sandbox::new();
    sandbox.home_file(&format!("{DIR}/auditor.md"), "Global rule.");
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Local rule.");
    sandbox.home_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "mode": "global-local-merge" } } }"#,
    );
    let registry = loaded(&sandbox);
    assert_eq!(
        render(&registry, "auditor"),
        "Audit the work.\n\nGlobal rule.\n\nLocal rule."
    );
}

#[test]
fn locale_files_follow_the_registry_chain_and_fallback() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Plain.");
    sandbox.cwd_file(&format!("{DIR}/auditor.ja.md"), "日本語。");
    sandbox.home_file(&format!("{DIR}/auditor.zh-Hant.md"), "正體。");
    let registry = loaded(&sandbox);
    let block = |locale: &str| {
        let text = registry.render_in("auditor", &(), locale).unwrap();
        text.strip_prefix("Audit the work.\n\n").unwrap().to_owned()
    };
    assert_eq!(block("ja-JP"), "日本語。");
    // Local wins over global, and the local plain file counts as local.
    assert_eq!(block("zh-TW"), "Plain.");
    assert_eq!(block("fr"), "Plain.");

    // The registry's fallback locale's files come before the plain file.
    sandbox.cwd_file(&format!("{DIR}/auditor.en.md"), "English.");
    registry.reload().unwrap();
    assert_eq!(block("fr"), "English.");
}

#[test]
fn locale_files_of_the_same_language_and_script_come_before_the_fallback() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/auditor.en.md"), "English.");
    sandbox.cwd_file(&format!("{DIR}/auditor.zh-TW.md"), "正體。");
    sandbox.cwd_file(&format!("{DIR}/auditor.pt-BR.md"), "Português.");
    let registry = loaded(&sandbox);
    let block = |locale: &str| {
        let text = registry.render_in("auditor", &(), locale).unwrap();
        text.strip_prefix("Audit the work.\n\n").unwrap().to_owned()
    };
    // As with the registry's own variants: same script, never across.
    assert_eq!(block("zh-HK"), "正體。");
    assert_eq!(block("pt-PT"), "Português.");
    assert_eq!(block("zh-CN"), "English.");
}

// --- Settings files --------------------------------------------------------------

#[test]
fn local_settings_replace_the_global_block_of_a_key_only() {
    let sandbox = Sandbox::new();
    sandbox.home_file(
        SETTINGS,
        r#"{ "prompts": {
            "auditor": { "inline": "Global auditor." },
            "goal-stale": { "inline": "Global stale." },
        } }"#,
    );
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "mode": "off" } } }"#,
    );
    let registry = loaded(&sandbox);
    // The local block has no inline: the global inline is gone with its block.
    assert_eq!(render(&registry, "auditor"), "Audit the work.");
    assert_eq!(render(&registry, "goal-stale"), "Global stale.");
}

#[test]
fn the_environment_settings_file_is_read_last() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "inline": "Local." } } }"#,
    );
    let env_file = sandbox.cwd_file(
        "ci-settings.json",
        r#"{ "prompts": { "auditor": { "inline": "From env." } } }"#,
    );
    let registry = registry();
    let options = sandbox
        .options()
        .settings_env_value(Some("ci-settings.json".into()));
    registry.load_config(spec(), options).unwrap();
    assert_eq!(render(&registry, "auditor"), "From env.");
    assert_eq!(
        LoadedConfig::of(&registry.snapshot())
            .unwrap()
            .settings()
            .files()
            .last(),
        Some(&env_file)
    );

    // A variable naming a file that does not exist is an error.
    let missing = sandbox
        .options()
        .settings_env_value(Some("nope.json".into()));
    let err = registry.load_config(spec(), missing).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("PI_GOAL_SETTINGS_FILE names a settings file that does not exist"),
        "{message}"
    );
    // The path is said once, where the diagnostic says which file.
    assert_eq!(message.matches("nope.json").count(), 1, "{message}");
}

#[test]
fn prompts_dir_setting_moves_the_directory() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file("my-prompts/auditor.md", "Moved.");
    sandbox.cwd_file(SETTINGS, r#"{ "promptsDir": "my-prompts" }"#);
    let registry = loaded(&sandbox);
    assert_eq!(render(&registry, "auditor"), "Audit the work.\n\nMoved.");
}

#[test]
fn a_file_setting_reads_that_file() {
    let sandbox = Sandbox::new();
    sandbox.home_file("rules/auditor.md", "From home.");
    // The user's own settings: a project's may not read home (tests/trust.rs).
    sandbox.home_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "file": "~/rules/auditor.md", "mode": "override" } } }"#,
    );
    let registry = loaded(&sandbox);
    assert_eq!(render(&registry, "auditor"), "From home.");
}

#[test]
fn a_blank_file_named_by_a_setting_is_reported_at_the_setting_and_falls_through() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(
        "rules/auditor.md",
        "---\ndescription: nothing yet\n---\n  \n",
    );
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "From the directory.");
    let settings = sandbox.cwd_file(
        SETTINGS,
        "{\n  \"prompts\": {\n    \"auditor\": { \"mode\": \"override\", \"file\": \"rules/auditor.md\" }\n  }\n}",
    );
    let registry = registry();
    let report = registry.load_config(spec(), sandbox.options()).unwrap();
    // The rule falls through to the prompt directory, as documented.
    assert_eq!(render(&registry, "auditor"), "From the directory.");
    // One warning, where the setting is; not a second one about the file.
    assert_eq!(report.warnings.len(), 1, "{:#?}", report.warnings);
    let w = &report.warnings[0];
    assert_eq!(w.code, DiagnosticCode::MissingSettingFile);
    assert_eq!(w.file.as_deref(), Some(settings.as_path()));
    assert_eq!(w.key_path.as_deref(), Some("prompts.auditor.file"));
    assert_eq!(w.position.map(|p| (p.line, p.column)), Some((3, 46)));
    assert!(w.message.contains("which is empty"), "{w}");
}

#[test]
fn a_relative_file_setting_without_a_project_folder_is_reported() {
    let sandbox = Sandbox::new();
    sandbox.home_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "file": "rules/auditor.md" } } }"#,
    );
    let no_project = promptreg::config::LoadOptions::new(sandbox.home(), "");
    let diagnostics = check(&spec(), &no_project);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0].code, DiagnosticCode::MissingSettingFile);
    assert_eq!(
        diagnostics[0].key_path.as_deref(),
        Some("prompts.auditor.file")
    );
    assert!(
        diagnostics[0].message.contains("no project folder"),
        "{}",
        diagnostics[0]
    );
}

// --- Legacy names ------------------------------------------------------------------

#[test]
fn legacy_aliases_apply_when_the_explicit_block_is_absent() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "auditorPrompt": "Legacy auditor.", "goalPrompt": "Legacy goal.", "goalPromptMode": "append" }"#,
    );
    let registry = loaded(&sandbox);
    assert_eq!(render(&registry, "auditor"), "Legacy auditor.");
    assert_eq!(
        render(&registry, "goal-running"),
        "[PI GOAL ACTIVE]\n\nLegacy goal.\n\nVerification contract."
    );
}

#[test]
fn an_explicit_block_wins_over_a_legacy_alias_with_a_warning() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(
        SETTINGS,
        r#"{
  "auditorPrompt": "Legacy.",
  "prompts": { "auditor": { "inline": "Explicit." } }
}"#,
    );
    let registry = registry();
    let warnings = registry
        .load_config(spec(), sandbox.options())
        .unwrap()
        .warnings;
    assert_eq!(render(&registry, "auditor"), "Explicit.");
    assert_eq!(warnings.len(), 1);
    let w = &warnings[0];
    assert_eq!(
        (w.severity, w.code),
        (Severity::Warning, DiagnosticCode::LegacyShadowed)
    );
    // It points at the block in force, and names the ignored key's line.
    assert_eq!(w.key_path.as_deref(), Some("prompts.auditor"));
    assert_eq!(w.position.map(|p| (p.line, p.column)), Some((3, 16)));
    assert!(w.message.contains("`auditorPrompt` on line 2"), "{w}");
}

#[test]
fn legacy_files_are_a_fallback_and_never_read_in_mode_off() {
    let sandbox = Sandbox::new();
    sandbox.home_file(".pi/auditor-prompt.md", "Global legacy.");
    sandbox.cwd_file(".pi/auditor-prompt.md", "Local legacy.");
    sandbox.home_file(".pi/goal-prompt.md", "Goal legacy.");
    let registry = loaded(&sandbox);
    assert_eq!(
        render(&registry, "auditor"),
        "Audit the work.\n\nLocal legacy."
    );
    assert!(render(&registry, "goal-running").contains("Goal legacy."));

    // The unified path wins when it yields something, and `check` says
    // which files it leaves unread, naming both.
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Unified.");
    registry.reload().unwrap();
    assert_eq!(render(&registry, "auditor"), "Audit the work.\n\nUnified.");
    let warnings = check(&spec(), &sandbox.options());
    let shadowed: Vec<_> = warnings
        .iter()
        .filter(|d| d.code == DiagnosticCode::LegacyShadowed)
        .collect();
    assert_eq!(shadowed.len(), 2, "{warnings:?}");
    let local = sandbox.cwd().join(".pi/auditor-prompt.md");
    let local_warning = shadowed
        .iter()
        .find(|d| d.file.as_deref() == Some(&local))
        .unwrap();
    let unified = sandbox.cwd().join(DIR).join("auditor.md");
    assert_eq!(
        local_warning.message,
        format!(
            "legacy file {} is not read: {} configures `auditor`",
            local.display(),
            unified.display()
        )
    );

    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "goal-running": { "mode": "off" } } }"#,
    );
    registry.reload().unwrap();
    assert!(!render(&registry, "goal-running").contains("Goal legacy."));
}

// --- Loading, reloading, failing -------------------------------------------------------

#[test]
fn renders_read_no_files_until_reload() {
    let sandbox = Sandbox::new();
    let file = sandbox.cwd_file(&format!("{DIR}/auditor.md"), "First.");
    let registry = loaded(&sandbox);
    std::fs::write(&file, "Second.").unwrap();
    assert_eq!(render(&registry, "auditor"), "Audit the work.\n\nFirst.");
    registry.reload().unwrap();
    assert_eq!(render(&registry, "auditor"), "Audit the work.\n\nSecond.");
    std::fs::remove_file(&file).unwrap();
    registry.reload().unwrap();
    assert_eq!(render(&registry, "auditor"), "Audit the work.");
}

#[test]
fn a_reload_reports_which_keys_changed() {
    let sandbox = Sandbox::new();
    let auditor = sandbox.cwd_file(&format!("{DIR}/auditor.md"), "First.");
    sandbox.home_file(&format!("{DIR}/goal-stale.ja.md"), "古い。");
    let registry = registry();
    let first = registry.load_config(spec(), sandbox.options()).unwrap();
    assert_eq!(first.changed, ["auditor", "goal-stale"]);

    assert!(registry.reload().unwrap().changed.is_empty());

    std::fs::write(&auditor, "Second.").unwrap();
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "tool-get-goal": { "mode": "off" } } }"#,
    );
    assert_eq!(
        registry.reload().unwrap().changed,
        ["auditor", "tool-get-goal"]
    );

    std::fs::remove_file(&auditor).unwrap();
    assert_eq!(registry.reload().unwrap().changed, ["auditor"]);
}

#[test]
fn the_configuration_paths_include_files_that_do_not_exist_yet() {
    let sandbox = Sandbox::new();
    let registry = loaded(&sandbox);
    let snapshot = registry.snapshot();
    let paths = LoadedConfig::of(&snapshot).unwrap().paths();
    assert!(paths.files.contains(&sandbox.cwd().join(SETTINGS)));
    assert!(paths.files.contains(&sandbox.home().join(SETTINGS)));
    assert!(
        paths
            .files
            .contains(&sandbox.cwd().join(".pi/auditor-prompt.md"))
    );
    assert!(
        paths
            .dirs
            .contains(&sandbox.cwd().join(".pi/pi-goal-xx/prompts/"))
    );
}

#[test]
fn a_failed_reload_keeps_the_previous_configuration() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Good.");
    let settings = sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "mode": "override" } } }"#,
    );
    let registry = loaded(&sandbox);
    assert_eq!(render(&registry, "auditor"), "Good.");

    std::fs::write(
        &settings,
        r#"{ "prompts": { "auditor": { "mode": "overide" } } }"#,
    )
    .unwrap();
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Changed.");
    let err = registry.reload().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    assert!(
        err.to_string().contains("did you mean `override`?"),
        "{err}"
    );
    assert_eq!(render(&registry, "auditor"), "Good.");

    sandbox.cwd_file(&format!("{DIR}/auditor.md"), b"\xff\xfe");
    std::fs::write(&settings, "{}").unwrap();
    assert!(registry.reload().is_err());
    assert_eq!(render(&registry, "auditor"), "Good.");

    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Fixed.");
    registry.reload().unwrap();
    assert_eq!(render(&registry, "auditor"), "Audit the work.\n\nFixed.");
}

#[test]
fn a_failed_first_load_leaves_the_registry_without_user_configuration() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(SETTINGS, "{ not json");
    let registry = registry();
    assert!(registry.load_config(spec(), sandbox.options()).is_err());
    assert_eq!(render(&registry, "auditor"), "Audit the work.");
    assert_eq!(registry.reload().unwrap_err().kind(), ErrorKind::NotLoaded);
}

#[test]
fn unload_returns_to_the_hosts_prompts() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "User.");
    let registry = loaded(&sandbox);
    registry.unload_config();
    assert_eq!(render(&registry, "auditor"), "Audit the work.");
}

#[test]
fn prompt_files_with_keys_that_would_escape_are_never_read() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "tool-../../x": { "inline": "x" } } }"#,
    );
    let err = registry()
        .load_config(spec(), sandbox.options())
        .unwrap_err();
    let d = &err.diagnostics()[0];
    assert_eq!(d.code, DiagnosticCode::InvalidPromptKey);
    assert_eq!(d.key_path.as_deref(), Some("prompts.tool-../../x"));
}

// --- Trace -------------------------------------------------------------------------------

#[test]
fn render_traced_names_the_settings_file_and_the_prompt_file() {
    let sandbox = Sandbox::new();
    let file = sandbox.home_file(&format!("{DIR}/auditor.ja.md"), "日本語。");
    let settings = sandbox.cwd_file(
        SETTINGS,
        "{\n  \"prompts\": {\n    \"auditor\": { \"mode\": \"append\" }\n  }\n}",
    );
    let registry = loaded(&sandbox);
    let rendered = registry.render_traced_in("auditor", &(), "ja").unwrap();
    assert_eq!(rendered.parts.len(), 2);
    assert_eq!(
        rendered.parts[1].origin,
        Origin::User {
            replaces_body: false
        }
    );
    let user = rendered.parts[1].provenance.as_deref().unwrap();
    assert_eq!(user.source, SourceKind::User);
    assert_eq!(user.what, "global file");
    assert_eq!(user.mode.as_deref(), Some("append"));
    assert_eq!(user.file.as_deref(), Some(file.as_path()));
    assert_eq!(user.locale.as_ref().map(|l| l.as_str()), Some("ja"));
    let source = user.chosen_by.as_ref().unwrap();
    assert_eq!(source.file, settings);
    assert_eq!(source.key_path, "prompts.auditor");
    assert_eq!((source.line, source.column), (3, 5));
    assert_eq!(rendered.part_text(&rendered.parts[1]), "日本語。");
}

// --- check -----------------------------------------------------------------------------

#[test]
fn check_reports_every_problem_at_once() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(
        SETTINGS,
        r#"{
  "prompts": {
    "goal-runing": { "mode": "append" },
    "auditor": { "mode": "replace", "inlin": "x", "file": 3 },
  },
  "promptDir": "x",
  "auditorPrompt": "shadowed",
}"#,
    );
    sandbox.cwd_file(&format!("{DIR}/goal-runing.md"), "Typo.");
    sandbox.cwd_file(&format!("{DIR}/goal-stale.md"), " \n");
    sandbox.home_file(&format!("{DIR}/auditr.ja.md"), "Typo with a locale.");
    let diagnostics = check(&spec(), &sandbox.options());
    let summary: Vec<String> = diagnostics
        .iter()
        .map(|d| {
            format!(
                "{} {:?} {}",
                d.severity,
                d.code,
                sandbox.redact(&d.to_string())
            )
        })
        .collect();
    insta::assert_snapshot!(summary.join("\n"));
}

#[test]
fn check_of_a_clean_configuration_is_empty() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "$schema": "./schema.json", "prompts": { "tool-get-goal": { "mode": "off" } } }"#,
    );
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Fine.");
    sandbox.cwd_file(&format!("{DIR}/README.txt"), "Not a prompt file.");
    assert_eq!(check(&spec(), &sandbox.options()), []);
}

// --- Schema ----------------------------------------------------------------------------

#[test]
#[cfg(feature = "schema")]
fn the_schema_describes_keys_patterns_and_legacy_names() {
    let schema = promptreg::config::settings_schema(&spec());
    insta::assert_json_snapshot!(schema.as_value());
}
