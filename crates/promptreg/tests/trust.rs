//! The trust boundary: a project's configuration reads only files inside the
//! project, symbolic links resolved, unless the user trusts the project in
//! the global settings; the user's own configuration reads anywhere.

#![cfg(feature = "config")]
#![cfg(unix)]

mod support;

use promptreg::prelude::*;
use std::fs;
use std::os::unix::fs::symlink;

use promptreg::config::{LoadOptions, LoadedConfig, check, trust_project};
use promptreg::{DiagnosticCode, ErrorKind, Origin, PromptRegistry, Severity};
use support::{DIR, SETTINGS, Sandbox};

const SECRET: &str = "An unrelated secret.";

fn registry() -> PromptRegistry {
    support::goal_registry()
}

/// Loads the sandbox's configuration: the auditor's render, or the codes
/// of the errors.
fn load(sandbox: &Sandbox) -> Result<String, Vec<DiagnosticCode>> {
    load_with(sandbox.options())
}

fn load_with(options: LoadOptions) -> Result<String, Vec<DiagnosticCode>> {
    let registry = registry();
    match registry.load_config(support::goal_agent_spec(), options) {
        Ok(_) => Ok(registry.render("auditor", &()).unwrap()),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Config);
            Err(e.diagnostics().iter().map(|d| d.code).collect())
        }
    }
}

fn trust(sandbox: &Sandbox) {
    let trusted =
        trust_project(&support::goal_agent_spec(), &sandbox.home(), &sandbox.cwd()).unwrap();
    assert!(trusted.added);
}

/// Trusts the project; the file refused before is read now.
fn trust_and_read_the_secret(sandbox: &Sandbox) {
    trust(sandbox);
    assert_eq!(
        load(sandbox).unwrap(),
        format!("Audit the work.\n\n{SECRET}")
    );
}

fn secret_in_home(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox.home_file("secret.md", SECRET)
}

fn append_settings() -> &'static str {
    r#"{ "prompts": { "auditor": { "mode": "append" } } }"#
}

// --- Prompt files and folders linked outside ----------------------------------------

#[test]
fn a_project_prompt_file_linked_outside_is_refused_until_trusted() {
    let sandbox = Sandbox::new();
    let secret = secret_in_home(&sandbox);
    sandbox.cwd_file(SETTINGS, append_settings());
    fs::create_dir_all(sandbox.cwd().join(DIR)).unwrap();
    let link = sandbox.cwd().join(DIR).join("auditor.md");
    symlink(&secret, &link).unwrap();

    let diagnostics = check(&support::goal_agent_spec(), &sandbox.options());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let d = &diagnostics[0];
    assert_eq!(
        (d.code, d.severity),
        (DiagnosticCode::OutsideProject, Severity::Error)
    );
    assert_eq!(d.file.as_deref(), Some(link.as_path()));
    let root = sandbox.cwd().canonicalize().unwrap();
    assert!(d.message.contains(&secret.display().to_string()), "{d}");
    let command = format!("promptreg trust {}", root.display());
    assert!(d.suggestion.as_deref().unwrap().contains(&command), "{d}");
    assert!(
        !d.to_string().contains(SECRET),
        "nothing of it is read: {d}"
    );
    assert_eq!(load(&sandbox), Err(vec![DiagnosticCode::OutsideProject]));

    trust_and_read_the_secret(&sandbox);
}

#[test]
fn a_project_prompt_file_linked_to_etc_passwd_is_refused() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(SETTINGS, append_settings());
    fs::create_dir_all(sandbox.cwd().join(DIR)).unwrap();
    symlink("/etc/passwd", sandbox.cwd().join(DIR).join("auditor.md")).unwrap();
    assert_eq!(load(&sandbox), Err(vec![DiagnosticCode::OutsideProject]));
}

#[test]
fn a_project_prompts_folder_linked_outside_is_not_even_listed() {
    let sandbox = Sandbox::new();
    sandbox.home_file("elsewhere/auditor.md", SECRET);
    // A file whose name matches no key would be warned about if listed.
    sandbox.home_file("elsewhere/private-notes.md", SECRET);
    sandbox.cwd_file(SETTINGS, append_settings());
    fs::create_dir_all(sandbox.cwd().join(DIR).parent().unwrap()).unwrap();
    symlink(
        sandbox.home().join("elsewhere"),
        sandbox.cwd().join(DIR.trim_end_matches('/')),
    )
    .unwrap();

    let diagnostics = check(&support::goal_agent_spec(), &sandbox.options());
    let codes: Vec<_> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [DiagnosticCode::OutsideProject], "{diagnostics:?}");
    assert!(
        diagnostics[0]
            .message
            .contains("this prompts folder leads to")
    );

    trust_and_read_the_secret(&sandbox);
}

#[test]
fn a_project_prompts_folder_linked_to_etc_is_refused() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(SETTINGS, append_settings());
    fs::create_dir_all(sandbox.cwd().join(".pi/pi-goal-xx")).unwrap();
    symlink("/etc", sandbox.cwd().join(".pi/pi-goal-xx/prompts")).unwrap();
    assert_eq!(load(&sandbox), Err(vec![DiagnosticCode::OutsideProject]));
}

#[test]
fn links_that_stay_inside_the_project_are_read_and_their_target_is_known() {
    let sandbox = Sandbox::new();
    let shared = sandbox.cwd_file("rules/shared.md", "A shared rule.");
    sandbox.cwd_file(SETTINGS, append_settings());
    fs::create_dir_all(sandbox.cwd().join(DIR)).unwrap();
    let link = sandbox.cwd().join(DIR).join("auditor.md");
    symlink("../../../rules/shared.md", &link).unwrap();

    let registry = registry();
    registry
        .load_config(support::goal_agent_spec(), sandbox.options())
        .unwrap();
    assert_eq!(
        registry.render("auditor", &()).unwrap(),
        "Audit the work.\n\nA shared rule."
    );
    let target = shared.canonicalize().unwrap();
    let files = LoadedConfig::of(&registry.snapshot())
        .unwrap()
        .files("auditor");
    assert_eq!(files[0].path, link);
    assert_eq!(files[0].target.as_deref(), Some(target.as_path()));
    let rendered = registry.render_traced("auditor", &()).unwrap();
    assert!(matches!(rendered.parts[1].origin, Origin::User { .. }));
    let user = rendered.parts[1].provenance.as_deref().unwrap();
    assert_eq!(user.file.as_deref(), Some(link.as_path()));
    assert_eq!(user.target.as_deref(), Some(target.as_path()));
}

#[test]
fn a_file_that_is_not_a_link_has_no_target() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Plain.");
    let registry = registry();
    registry
        .load_config(support::goal_agent_spec(), sandbox.options())
        .unwrap();
    assert_eq!(
        LoadedConfig::of(&registry.snapshot())
            .unwrap()
            .files("auditor")[0]
            .target,
        None
    );
}

#[test]
fn a_project_settings_file_linked_outside_is_refused() {
    let sandbox = Sandbox::new();
    let elsewhere = sandbox.home_file("elsewhere.json", append_settings());
    fs::create_dir_all(sandbox.cwd().join(".pi")).unwrap();
    symlink(&elsewhere, sandbox.cwd().join(SETTINGS)).unwrap();
    assert_eq!(load(&sandbox), Err(vec![DiagnosticCode::OutsideProject]));
    trust(&sandbox);
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Rule.");
    assert_eq!(load(&sandbox).unwrap(), "Audit the work.\n\nRule.");
}

#[test]
fn a_project_legacy_file_linked_outside_is_refused() {
    let sandbox = Sandbox::new();
    let secret = secret_in_home(&sandbox);
    fs::create_dir_all(sandbox.cwd().join(".pi")).unwrap();
    symlink(&secret, sandbox.cwd().join(".pi/auditor-prompt.md")).unwrap();
    assert_eq!(load(&sandbox), Err(vec![DiagnosticCode::OutsideProject]));
    trust_and_read_the_secret(&sandbox);
}

// --- Paths written in settings -------------------------------------------------------

#[test]
fn a_project_file_setting_under_home_is_refused_until_trusted() {
    let sandbox = Sandbox::new();
    sandbox.home_file(".ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----");
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "mode": "append", "file": "~/.ssh/id_rsa" } } }"#,
    );
    let diagnostics = check(&support::goal_agent_spec(), &sandbox.options());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0].code, DiagnosticCode::OutsideProject);
    // Located at the setting that named the file, where it is fixed.
    let d = &diagnostics[0];
    assert_eq!(d.key_path.as_deref(), Some("prompts.auditor.file"), "{d}");
    assert!(d.file.as_ref().unwrap().ends_with(SETTINGS), "{d}");
    assert!(
        d.message
            .starts_with("not read: this file `~/.ssh/id_rsa` is outside the project"),
        "{d}"
    );
    trust(&sandbox);
    assert!(load(&sandbox).unwrap().contains("OPENSSH"));
}

#[test]
fn a_project_file_setting_with_an_absolute_path_outside_is_refused() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "mode": "append", "file": "/etc/passwd" } } }"#,
    );
    assert_eq!(load(&sandbox), Err(vec![DiagnosticCode::OutsideProject]));
}

#[test]
fn a_project_file_setting_inside_the_project_is_read() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file("docs/rule.md", "Project rule.");
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "mode": "append", "file": "docs/rule.md" } } }"#,
    );
    assert_eq!(load(&sandbox).unwrap(), "Audit the work.\n\nProject rule.");
}

#[test]
fn a_project_prompts_dir_setting_cannot_lead_out() {
    let sandbox = Sandbox::new();
    sandbox.home_file("secrets/auditor.md", SECRET);
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "promptsDir": "../home/secrets/", "prompts": { "auditor": { "mode": "append" } } }"#,
    );
    let codes = load(&sandbox).unwrap_err();
    assert_eq!(codes, [DiagnosticCode::OutsideProject; 2]);
}

// --- The user's own configuration ----------------------------------------------------

#[test]
fn global_configuration_reads_anywhere() {
    let sandbox = Sandbox::new();
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().join("rule.md");
    fs::write(&elsewhere, "From elsewhere.").unwrap();
    // A `~` path, a link in the global prompts folder, and an absolute path.
    sandbox.home_file("rules/auditor.md", "From home.");
    fs::create_dir_all(sandbox.home().join(DIR)).unwrap();
    symlink(&elsewhere, sandbox.home().join(DIR).join("goal-stale.md")).unwrap();
    sandbox.home_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "mode": "override", "file": "~/rules/auditor.md" } } }"#,
    );
    assert_eq!(load(&sandbox).unwrap(), "From home.");

    sandbox.home_file(
        SETTINGS,
        format!(
            r#"{{ "prompts": {{ "auditor": {{ "mode": "override", "file": "{}" }} }} }}"#,
            elsewhere.display()
        ),
    );
    let registry = registry();
    registry
        .load_config(support::goal_agent_spec(), sandbox.options())
        .unwrap();
    assert_eq!(registry.render("auditor", &()).unwrap(), "From elsewhere.");
    assert_eq!(
        registry.render("goal-stale", &()).unwrap(),
        "Stale.\n\nFrom elsewhere."
    );
}

#[test]
fn a_global_block_keeps_its_trust_when_the_project_configures_other_keys() {
    let sandbox = Sandbox::new();
    sandbox.home_file("rules/auditor.md", "From home.");
    sandbox.home_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "mode": "override", "file": "~/rules/auditor.md" } } }"#,
    );
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "goal-stale": { "mode": "off" } } }"#,
    );
    assert_eq!(load(&sandbox).unwrap(), "From home.");
    // The project's block for the same key replaces the global one, and
    // with it the trust.
    sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "mode": "override", "file": "~/rules/auditor.md" } } }"#,
    );
    assert_eq!(load(&sandbox), Err(vec![DiagnosticCode::OutsideProject]));
}

#[test]
fn the_environment_settings_file_is_the_users_choice() {
    let sandbox = Sandbox::new();
    sandbox.home_file("rules/auditor.md", "From home.");
    let env = sandbox.home_file(
        "env-settings.json",
        r#"{ "prompts": { "auditor": { "mode": "override", "file": "~/rules/auditor.md" } } }"#,
    );
    let options = sandbox
        .options()
        .settings_env_value(Some(env.display().to_string()));
    assert_eq!(load_with(options).unwrap(), "From home.");
}

#[test]
fn a_project_that_is_home_is_the_users_own() {
    let sandbox = Sandbox::new();
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().join("rule.md");
    fs::write(&elsewhere, "From elsewhere.").unwrap();
    sandbox.home_file(
        SETTINGS,
        format!(
            r#"{{ "prompts": {{ "auditor": {{ "mode": "override", "file": "{}" }} }} }}"#,
            elsewhere.display()
        ),
    );
    let options = LoadOptions::new(sandbox.home(), sandbox.home());
    assert_eq!(load_with(options).unwrap(), "From elsewhere.");
}

// --- Trusting ---------------------------------------------------------------------------

#[test]
fn a_trusted_folder_trusts_the_projects_below_it_and_no_sibling() {
    let sandbox = Sandbox::new();
    let secret = secret_in_home(&sandbox);
    let settings = format!(
        r#"{{ "prompts": {{ "auditor": {{ "mode": "append", "file": "{}" }} }} }}"#,
        secret.display()
    );
    // `~/code` is trusted; projects in `~/code/app` and `~/code-other`.
    for project in ["code/app", "code-other"] {
        sandbox.home_file(&format!("{project}/{SETTINGS}"), &settings);
    }
    sandbox.home_file(SETTINGS, r#"{ "trustedProjects": ["~/code"] }"#);
    let options = |project: &str| LoadOptions::new(sandbox.home(), sandbox.home().join(project));
    assert_eq!(
        load_with(options("code/app")).unwrap(),
        format!("Audit the work.\n\n{SECRET}")
    );
    assert_eq!(
        load_with(options("code-other")),
        Err(vec![DiagnosticCode::OutsideProject])
    );
}

#[test]
fn a_trusted_entry_is_matched_through_links() {
    let sandbox = Sandbox::new();
    let secret = secret_in_home(&sandbox);
    symlink(sandbox.cwd(), sandbox.root().join("alias")).unwrap();
    sandbox.cwd_file(
        SETTINGS,
        format!(
            r#"{{ "prompts": {{ "auditor": {{ "mode": "append", "file": "{}" }} }} }}"#,
            secret.display()
        ),
    );
    // Trusted under one name, opened under the other.
    sandbox.home_file(
        SETTINGS,
        format!(
            r#"{{ "trustedProjects": ["{}"] }}"#,
            sandbox.root().join("alias").display()
        ),
    );
    assert!(load(&sandbox).is_ok());
    let options = LoadOptions::new(sandbox.home(), sandbox.root().join("alias"));
    sandbox.home_file(
        SETTINGS,
        format!(
            r#"{{ "trustedProjects": ["{}"] }}"#,
            sandbox.cwd().display()
        ),
    );
    assert!(load_with(options).is_ok());
}

#[test]
fn a_project_cannot_trust_itself() {
    let sandbox = Sandbox::new();
    let secret = secret_in_home(&sandbox);
    sandbox.cwd_file(
        SETTINGS,
        format!(
            r#"{{ "trustedProjects": ["/"], "prompts": {{ "auditor": {{ "mode": "append", "file": "{}" }} }} }}"#,
            secret.display()
        ),
    );
    let diagnostics = check(&support::goal_agent_spec(), &sandbox.options());
    let found: Vec<_> = diagnostics.iter().map(|d| (d.code, d.severity)).collect();
    assert_eq!(
        found,
        [
            (DiagnosticCode::TrustedProjects, Severity::Warning),
            (DiagnosticCode::OutsideProject, Severity::Error)
        ]
    );
    assert_eq!(diagnostics[0].key_path.as_deref(), Some("trustedProjects"));
}

#[test]
fn a_relative_trusted_entry_is_an_error() {
    let sandbox = Sandbox::new();
    sandbox.home_file(SETTINGS, r#"{ "trustedProjects": ["project", 3] }"#);
    let diagnostics = check(&support::goal_agent_spec(), &sandbox.options());
    let found: Vec<_> = diagnostics
        .iter()
        .map(|d| (d.code, d.key_path.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(
        found,
        [
            (DiagnosticCode::TrustedProjects, "trustedProjects[0]"),
            (DiagnosticCode::WrongType, "trustedProjects[1]")
        ]
    );
}

#[test]
fn trusting_keeps_the_settings_file_and_is_idempotent() {
    let sandbox = Sandbox::new();
    let original =
        "{\n  // my settings\n  \"prompts\": { \"auditor\": { \"mode\": \"append\" } },\n}\n";
    let settings = sandbox.home_file(SETTINGS, original);
    let spec = support::goal_agent_spec();
    let first = trust_project(&spec, &sandbox.home(), &sandbox.cwd()).unwrap();
    let root = sandbox.cwd().canonicalize().unwrap();
    assert_eq!(first.root, root);
    assert_eq!(first.entry, root.display().to_string());
    assert_eq!(first.settings_file, settings);
    let text = fs::read_to_string(&settings).unwrap();
    assert!(
        text.starts_with("{\n  // my settings\n  \"prompts\""),
        "{text}"
    );
    assert!(check(&spec, &sandbox.options()).is_empty());

    let again = trust_project(&spec, &sandbox.home(), &sandbox.cwd()).unwrap();
    assert!(!again.added);
    assert_eq!(fs::read_to_string(&settings).unwrap(), text);
    // A folder below is trusted by the same entry.
    fs::create_dir_all(sandbox.cwd().join("sub")).unwrap();
    let below = trust_project(&spec, &sandbox.home(), &sandbox.cwd().join("sub")).unwrap();
    assert_eq!((below.added, below.entry), (false, first.entry));
}

#[test]
fn trusting_creates_a_missing_settings_file() {
    let sandbox = Sandbox::new();
    let trusted =
        trust_project(&support::goal_agent_spec(), &sandbox.home(), &sandbox.cwd()).unwrap();
    let text = fs::read_to_string(&trusted.settings_file).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["trustedProjects"][0], trusted.entry);
}

#[test]
fn trusting_writes_through_a_linked_settings_file() {
    let sandbox = Sandbox::new();
    let dotfiles = sandbox.root().join("dotfiles/settings.json");
    support::write(&dotfiles, "{}\n");
    fs::create_dir_all(sandbox.home().join(".pi")).unwrap();
    let link = sandbox.home().join(SETTINGS);
    symlink(&dotfiles, &link).unwrap();
    trust(&sandbox);
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(
        fs::read_to_string(&dotfiles)
            .unwrap()
            .contains("trustedProjects")
    );
}

#[test]
fn trusting_refuses_what_it_cannot_do_and_changes_nothing() {
    let sandbox = Sandbox::new();
    let spec = support::goal_agent_spec();
    let missing = trust_project(&spec, &sandbox.home(), &sandbox.root().join("nowhere"));
    assert!(missing.unwrap_err().to_string().contains("nowhere"));

    let broken = "{ \"prompts\": ";
    let settings = sandbox.home_file(SETTINGS, broken);
    let err = trust_project(&spec, &sandbox.home(), &sandbox.cwd()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    assert_eq!(err.diagnostics()[0].code, DiagnosticCode::Syntax);
    assert_eq!(fs::read_to_string(&settings).unwrap(), broken);

    sandbox.home_file(SETTINGS, r#"{ "trustedProjects": "everything" }"#);
    let err = trust_project(&spec, &sandbox.home(), &sandbox.cwd()).unwrap_err();
    assert_eq!(err.diagnostics()[0].code, DiagnosticCode::WrongType);

    let no_global = promptreg::config::ConfigSpec::builder("app")
        .key("auditor")
        .prompts_dir(".app/prompts")
        .local_settings_file(".app/settings.json")
        .build()
        .unwrap();
    let err = trust_project(&no_global, &sandbox.home(), &sandbox.cwd()).unwrap_err();
    assert!(err.to_string().contains("no global settings file"), "{err}");
}

#[test]
fn a_reload_after_trusting_reads_the_file() {
    let sandbox = Sandbox::new();
    let secret = secret_in_home(&sandbox);
    sandbox.cwd_file(SETTINGS, append_settings());
    let registry = registry();
    registry
        .load_config(support::goal_agent_spec(), sandbox.options())
        .unwrap();
    fs::create_dir_all(sandbox.cwd().join(DIR)).unwrap();
    symlink(&secret, sandbox.cwd().join(DIR).join("auditor.md")).unwrap();
    assert!(registry.reload().is_err());
    assert_eq!(registry.render("auditor", &()).unwrap(), "Audit the work.");
    trust(&sandbox);
    registry.reload().unwrap();
    assert_eq!(
        registry.render("auditor", &()).unwrap(),
        format!("Audit the work.\n\n{SECRET}")
    );
}

#[test]
fn resolve_prompt_applies_the_rule_without_a_boundary() {
    let sandbox = Sandbox::new();
    secret_in_home(&sandbox);
    let settings = promptreg::config::PromptSettings {
        file: Some("~/secret.md".into()),
        ..Default::default()
    };
    let options = promptreg::config::ResolveOptions::new(DIR, sandbox.home());
    let resolved =
        promptreg::config::resolve_prompt("auditor", &settings, &sandbox.cwd(), "D", &options)
            .unwrap();
    assert_eq!(resolved.injected.as_deref(), Some(SECRET));
}
