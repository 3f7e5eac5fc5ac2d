//! The example packs load and render; pack and template rules; manifest
//! and front matter errors.

#![cfg(feature = "packs")]

mod support;

use promptreg::prelude::*;
use std::path::{Path, PathBuf};

use promptreg::config::LoadOptions;
use promptreg::pack::Pack;
use promptreg::{DiagnosticCode, ErrorKind, PromptRegistry};
use serde_json::json;
use support::Sandbox;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn installed(name: &str) -> (Pack, PromptRegistry) {
    let pack = Pack::load(example(name)).unwrap();
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    (pack, registry)
}

fn context(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(example(name).join("context.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every prompt of the pack in en, ja, zh-TW and fr, one snapshot per pack.
fn render_all(name: &str) -> String {
    let (pack, registry) = installed(name);
    assert_eq!(pack.warnings(), [], "{name} has warnings");
    let ctx = context(name);
    let mut out = String::new();
    for prompt in pack.prompts() {
        for locale in ["en", "ja", "zh-TW", "fr"] {
            // Chat prompts as role-headed text.
            let text = registry
                .render_chat_as_text(prompt.id(), &ctx, locale, &[])
                .unwrap();
            out.push_str(&format!("===== {} [{locale}]\n{text}\n", prompt.id()));
        }
    }
    out
}

#[test]
fn the_web_agent_pack_renders_every_prompt_in_every_locale() {
    insta::assert_snapshot!(render_all("web-agent"));
}

#[test]
fn the_goal_agent_pack_renders_every_prompt_in_every_locale() {
    insta::assert_snapshot!(render_all("goal-agent"));
}

#[test]
fn the_web_agent_pack_declares_the_nine_seed_ids() {
    let (pack, registry) = installed("web-agent");
    let ids: Vec<String> = registry.list().iter().map(|id| id.to_string()).collect();
    assert_eq!(ids.len(), 9);
    let narrator = pack.prompt("webagent-narrator.system").unwrap();
    let locales: Vec<&str> = narrator.variants().map(|(l, _)| l.as_str()).collect();
    assert_eq!(locales, ["ja", "zh-TW"]);
    assert!(
        narrator
            .description()
            .unwrap()
            .starts_with("WebAgent narrator")
    );
}

#[test]
fn the_goal_agent_pack_declares_the_configuration_of_the_seed() {
    let pack = Pack::load(example("goal-agent")).unwrap();
    let spec = pack.spec();
    assert_eq!(spec.prompts_dir(), ".pi/pi-goal-xx/prompts/");
    assert_eq!(
        spec.global_settings_file(),
        Some(".pi/pi-goal-xx-settings.json")
    );
    assert_eq!(spec.settings_env(), Some("PI_GOAL_SETTINGS_FILE"));
    assert!(spec.is_known_key("tool-get-goal"));
    assert_eq!(spec.legacy_aliases().len(), 4);
    assert_eq!(spec.legacy_files().len(), 2);
}

#[test]
fn an_override_of_goal_running_keeps_the_pinned_blocks() {
    let (pack, registry) = installed("goal-agent");
    let sandbox = Sandbox::new();
    sandbox.cwd_file(
        ".pi/pi-goal-xx/prompts/goal-running.md",
        "Delegate implementation to a team.",
    );
    sandbox.cwd_file(
        ".pi/pi-goal-xx-settings.json",
        r#"{ "prompts": { "goal-running": { "mode": "override" } } }"#,
    );
    registry
        .load_config(pack.spec().clone(), sandbox.options())
        .unwrap();
    let text = registry
        .render("goal-running", &context("goal-agent"))
        .unwrap();
    assert!(text.starts_with("[PI GOAL ACTIVE goalId=g-42]"), "{text}");
    assert!(text.contains("- [x] Write a failing test"), "{text}");
    assert!(
        text.contains("\n\nDelegate implementation to a team.\n\n"),
        "{text}"
    );
    assert!(
        text.ends_with("Report the command you ran and its result."),
        "{text}"
    );
    assert!(!text.contains("Work through the task list"), "{text}");
}

#[test]
fn an_embedded_pack_is_the_same_as_the_folder() {
    let dir = example("web-agent");
    let mut files = vec![(
        "promptreg.toml".to_owned(),
        std::fs::read_to_string(dir.join("promptreg.toml")).unwrap(),
    )];
    for folder in ["defaults", "tools"] {
        for entry in std::fs::read_dir(dir.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            let name = format!("{folder}/{}", path.file_name().unwrap().to_str().unwrap());
            files.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    let embedded = Pack::from_files("web-agent", files).unwrap();
    let loaded = Pack::load(&dir).unwrap();
    let ids = |p: &Pack| p.prompts().map(|p| p.id().to_string()).collect::<Vec<_>>();
    assert_eq!(ids(&embedded), ids(&loaded));
}

// --- Template rules -------------------------------------------------------------

fn pack_with(files: &[(&str, &str)]) -> Result<Pack, promptreg::Error> {
    let manifest = "name = \"t\"\nkeys = [\"p\", \"q\"]\n[user]\nprompts_dir = \".t\"\n";
    let mut all = vec![("promptreg.toml", manifest)];
    all.extend_from_slice(files);
    Pack::from_files("t", all)
}

fn render_pack(files: &[(&str, &str)], ctx: serde_json::Value) -> Result<String, promptreg::Error> {
    let registry = PromptRegistry::new();
    pack_with(files)?.install(&registry)?;
    registry.render("p", &ctx)
}

#[test]
fn files_are_literal_unless_marked_as_templates() {
    let text = render_pack(
        &[("defaults/p.md", "Use `{{ x }}` in Jinja code.")],
        json!({}),
    )
    .unwrap();
    assert_eq!(text, "Use `{{ x }}` in Jinja code.");
}

#[test]
fn a_missing_variable_is_an_error_naming_it_and_the_file() {
    let err = render_pack(
        &[(
            "defaults/p.md",
            "---\ntemplate: true\n---\n\nHello {{ nmae }}",
        )],
        json!({ "name": "Ada" }),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Template);
    let message = err.to_string();
    assert!(message.contains("`nmae`"), "{message}");
    assert!(message.contains("defaults/p.md:5"), "{message}");
}

#[test]
fn a_required_variable_is_checked_before_rendering() {
    let file = "---\ntemplate: true\nvariables:\n  name: { required: true }\n---\nHello {{ name }}";
    let err = render_pack(&[("defaults/p.md", file)], json!({})).unwrap_err();
    assert!(err.to_string().contains("`name`"), "{err}");
    assert_eq!(
        render_pack(&[("defaults/p.md", file)], json!({ "name": "Ada" })).unwrap(),
        "Hello Ada"
    );
}

#[test]
fn a_value_of_the_wrong_type_is_an_error_naming_the_variable_and_both_types() {
    let file =
        "---\ntemplate: true\nvariables:\n  pantry: { type: list }\n---\n{{ pantry | join(', ') }}";
    let err = render_pack(&[("defaults/p.md", file)], json!({ "pantry": "rice" })).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Template);
    assert_eq!(err.id(), Some("p"));
    let message = err.to_string();
    assert!(
        message.contains(
            "variable `pantry` is declared `type: list`, but the context gives a string (\"rice\")"
        ),
        "{message}"
    );
    assert!(message.contains("defaults/p.md"), "{message}");
    assert_eq!(
        render_pack(
            &[("defaults/p.md", file)],
            json!({ "pantry": ["rice", "beans"] })
        )
        .unwrap(),
        "rice, beans"
    );
}

#[test]
fn untyped_declarations_accept_any_value() {
    let file = "---\ntemplate: true\nvariables:\n  pantry:\n---\n{{ pantry | join(', ') }}";
    assert_eq!(
        render_pack(&[("defaults/p.md", file)], json!({ "pantry": "rice" })).unwrap(),
        "r, i, c, e"
    );
}

#[test]
fn typed_variables_check_pins_and_variants_too() {
    let files = [
        (
            "defaults/p.md",
            "---\ntemplate: true\nvariables:\n  n: { type: number }\npin_tail: \"#{{ n }}\"\n---\nBody {{ n }}",
        ),
        ("defaults/p.ja.md", "---\ntemplate: true\n---\n本文 {{ n }}"),
    ];
    for locale in ["en", "ja"] {
        let registry = PromptRegistry::new();
        pack_with(&files).unwrap().install(&registry).unwrap();
        let err = registry
            .render_in("p", &json!({ "n": "7" }), locale)
            .unwrap_err();
        assert!(
            err.to_string().contains("`n` is declared `type: number`"),
            "{err}"
        );
        assert!(registry.render_in("p", &json!({ "n": 7 }), locale).is_ok());
    }
}

#[test]
fn undeclared_variable_warnings_carry_their_line() {
    let pack = pack_with(&[(
        "defaults/p.md",
        "---\ntemplate: true\n---\nHello\n  {{ persona }}",
    )])
    .unwrap();
    let warning = &pack.warnings()[0];
    assert_eq!(warning.code, DiagnosticCode::UndeclaredVariable);
    let position = warning.position.unwrap();
    assert_eq!((position.line, position.column), (5, 6));
}

#[test]
fn a_variant_translates_the_pinned_blocks_by_position() {
    let files = [
        (
            "defaults/p.md",
            "---\ntemplate: true\nvariables:\n  id:\npin_head: \"[ACTIVE id={{ id }}]\"\npin_tail: [Verify first., Answer PASS or FAIL.]\n---\nWork.",
        ),
        (
            "defaults/p.ja.md",
            "---\ntemplate: true\npin_tail: [先に検証してください。, PASS か FAIL で答えてください。]\n---\n作業してください。",
        ),
    ];
    let pack = pack_with(&files).unwrap();
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let ctx = json!({ "id": 7 });
    assert_eq!(
        registry.render_in("p", &ctx, "ja-JP").unwrap(),
        "[ACTIVE id=7]\n\n作業してください。\n\n先に検証してください。\n\nPASS か FAIL で答えてください。"
    );
    // The head block is not translated: the default's text stays.
    // A user's override of the body keeps the translated pins.
    let sandbox = Sandbox::new();
    sandbox.cwd_file(".t/p.md", "User body.");
    sandbox.cwd_file(
        ".t/settings.json",
        r#"{ "prompts": { "p": { "mode": "override" } } }"#,
    );
    let spec = promptreg::config::ConfigSpec::builder("t")
        .key("p")
        .prompts_dir(".t")
        .settings_file(".t/settings.json")
        .build()
        .unwrap();
    registry.load_config(spec, sandbox.options()).unwrap();
    assert_eq!(
        registry.render_in("p", &ctx, "ja").unwrap(),
        "[ACTIVE id=7]\n\nUser body.\n\n先に検証してください。\n\nPASS か FAIL で答えてください。"
    );
}

#[test]
fn a_variant_with_the_wrong_number_of_pins_is_an_error_with_file_and_line() {
    let err = pack_with(&[
        ("defaults/p.md", "---\npin_tail: [A, B]\n---\nBody"),
        (
            "defaults/p.ja.md",
            "---\n# comment\npin_tail: [A]\n---\n本文",
        ),
    ])
    .unwrap_err();
    let d = &err.diagnostics()[0];
    assert_eq!(d.code, DiagnosticCode::FrontMatter);
    assert!(d.file.as_ref().unwrap().ends_with("defaults/p.ja.md"));
    assert_eq!(d.position.map(|p| p.line), Some(3));
    assert!(
        d.message
            .contains("gives 1 block but the default of `p` pins 2 blocks"),
        "{d}"
    );
}

#[test]
fn a_reload_drops_the_pin_translations_a_variant_no_longer_gives() {
    let sandbox = Sandbox::new();
    let root = sandbox.root().join("pack");
    support::write(
        &root.join("promptreg.toml"),
        "name = \"t\"\nkeys = [\"p\"]\n[user]\nprompts_dir = \".t\"\n",
    );
    support::write(
        &root.join("defaults/p.md"),
        "---\npin_tail: Pin.\n---\nBody.",
    );
    support::write(
        &root.join("defaults/p.ja.md"),
        "---\npin_tail: ピン。\n---\n本文。",
    );
    let registry = PromptRegistry::new();
    Pack::load(&root).unwrap().install(&registry).unwrap();
    assert_eq!(
        registry.render_in("p", &(), "ja").unwrap(),
        "本文。\n\nピン。"
    );
    std::fs::write(root.join("defaults/p.ja.md"), "本文。").unwrap();
    registry.reload().unwrap();
    assert_eq!(
        registry.render_in("p", &(), "ja").unwrap(),
        "本文。\n\nPin."
    );
}

#[test]
fn the_goal_agent_pack_ends_a_japanese_render_with_japanese_pins() {
    let (_, registry) = installed("goal-agent");
    let ctx = context("goal-agent");
    let last = |id: &str| {
        let rendered = registry.render_traced_in(id, &ctx, "ja-JP").unwrap();
        let last = rendered.parts.last().unwrap().clone();
        (rendered.part_text(&last).to_owned(), last.origin)
    };
    // The auditor's variant translates its pin.
    let (text, origin) = last("auditor");
    assert!(
        matches!(
            origin,
            promptreg::Origin::PinnedTail {
                translation: Some(_),
                ..
            }
        ),
        "{origin:?}"
    );
    assert!(!text.contains("Verify"), "{text}");
    // goal-running's pin is the `verification` snippet, whose Japanese
    // variant the render's locale selects: the pin needs no translation.
    for id in ["goal-running", "goal-continuation"] {
        let rendered = registry.render_traced_in(id, &ctx, "ja-JP").unwrap();
        let contract = rendered
            .parts
            .iter()
            .find(|p| rendered.part_text(p).contains("complete_goal"))
            .unwrap();
        assert!(
            matches!(
                contract.origin,
                promptreg::Origin::PinnedTail {
                    translation: None,
                    ..
                }
            ),
            "{id}: {:?}",
            contract.origin
        );
        assert!(rendered.part_text(contract).starts_with("検証条件"), "{id}");
    }
}

#[test]
fn context_values_are_inserted_as_text() {
    let file = "---\ntemplate: true\n---\n{{ secret }}";
    let text = render_pack(
        &[("defaults/p.md", file)],
        json!({ "secret": "{{ 7 * 7 }}{% raw %}" }),
    )
    .unwrap();
    assert_eq!(text, "{{ 7 * 7 }}{% raw %}");
}

#[test]
fn a_runaway_template_stops_with_an_error() {
    let file = "---\ntemplate: true\n---\n{% for i in range(10000) %}{% for j in range(10000) %}.{% endfor %}{% endfor %}";
    let err = render_pack(&[("defaults/p.md", file)], json!({})).unwrap_err();
    assert!(err.to_string().contains("ran out of fuel"), "{err}");
}

#[test]
fn typed_contexts_are_visible_to_templates_by_field_name() {
    #[derive(serde::Serialize)]
    struct Narration {
        brand: String,
    }
    let registry = PromptRegistry::new();
    pack_with(&[(
        "defaults/p.md",
        "---\ntemplate: true\n---\n{{ brand }} / {{ locale }}",
    )])
    .unwrap()
    .install(&registry)
    .unwrap();
    let text = registry
        .render_in(
            "p",
            &Narration {
                brand: "Acme".into(),
            },
            "ja",
        )
        .unwrap();
    assert_eq!(text, "Acme / ja");
}

#[test]
fn user_files_can_be_templates_too() {
    let (pack, registry) = installed("web-agent");
    let sandbox = Sandbox::new();
    sandbox.cwd_file(
        ".webagent/prompts/task.system.md",
        "---\ntemplate: true\nvariables:\n  brand:\n---\nAlways mention {{ brand }}.",
    );
    registry
        .load_config(
            pack.spec().clone(),
            LoadOptions::new(sandbox.home(), sandbox.cwd()),
        )
        .unwrap();
    let text = registry
        .render("task.system", &context("web-agent"))
        .unwrap();
    assert!(text.ends_with("Always mention Acme Outdoor."), "{text}");
}

#[test]
fn a_locale_suffix_on_a_pattern_key_is_a_variant_not_another_id() {
    let manifest = "name = \"t\"\nkey_patterns = [\"tool-*\"]\n[user]\nprompts_dir = \".t\"\n";
    let pack = Pack::from_files(
        "t",
        [
            ("promptreg.toml", manifest),
            ("defaults/tool-pause.md", "Pause the goal."),
            ("defaults/tool-pause.ja.md", "目標を一時停止します。"),
            // `system` is no language: the whole name is the id.
            ("defaults/tool-pause.system.md", "A tool with a dotted id."),
        ],
    )
    .unwrap();
    let ids: Vec<&str> = pack.prompts().map(|p| p.id().as_str()).collect();
    assert_eq!(ids, ["tool-pause", "tool-pause.system"]);
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    assert_eq!(
        registry.render_in("tool-pause", &(), "ja").unwrap(),
        "目標を一時停止します。"
    );
    assert_eq!(
        registry.render("tool-pause.system", &()).unwrap(),
        "A tool with a dotted id."
    );
}

// --- Load errors, all at once --------------------------------------------------------

#[test]
fn pack_errors_are_reported_all_at_once() {
    let err = pack_with(&[
        ("defaults/p.md", "---\ntemplate: true\n---\n{% if %}"),
        ("defaults/undeclared.md", "x"),
        ("defaults/q.md", "---\ndescription: [unclosed\n---\nx"),
        ("defaults/q.ja-jp.md", "a"),
        ("defaults/q.ja_JP.md", "b"),
    ])
    .unwrap_err();
    let codes: Vec<DiagnosticCode> = err.diagnostics().iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [
            DiagnosticCode::UndeclaredId,
            DiagnosticCode::TemplateSyntax,
            DiagnosticCode::FrontMatter,
            // `q`'s default fails, so its variants wait: their duplicate
            // shows once it loads.
            DiagnosticCode::SkippedChecks,
        ],
        "{err:#?}"
    );
}

#[test]
fn pack_fixtures() {
    insta::glob!("inputs/packs/*", |dir| {
        let diagnostics = Pack::check(dir);
        let root = dir.display().to_string();
        insta::assert_snapshot!(support::report(&diagnostics, |text| text.replace(&root, "[pack]")));
    });
}

/// A pack without end-user configuration (no `[user]`) loads; its users'
/// prompt files, should the application read any, are in
/// `.<name>/prompts/`.
#[test]
fn a_manifest_without_user_configuration_loads() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("defaults")).unwrap();
    std::fs::write(dir.path().join("defaults/a.md"), "Hello.\n").unwrap();
    std::fs::write(
        dir.path().join("promptreg.toml"),
        "name = \"quiet\"\nkeys = [\"a\"]\n",
    )
    .unwrap();
    let pack = Pack::load(dir.path()).unwrap();
    assert_eq!(pack.spec().prompts_dir(), ".quiet/prompts/");
    assert_eq!(pack.spec().global_settings_file(), None);
}

#[test]
fn default_files_are_read_with_the_manifests_max_file_size() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = |limit: u64| {
        format!(
            "name = \"big\"\nkeys = [\"long\"]\n[user]\nprompts_dir = \".big\"\nmax_file_size = {limit}\n"
        )
    };
    std::fs::create_dir_all(dir.path().join("defaults")).unwrap();
    // Larger than the default limit of 1 MiB.
    let text = "x".repeat(1_500_000);
    std::fs::write(dir.path().join("defaults/long.md"), &text).unwrap();

    std::fs::write(dir.path().join("promptreg.toml"), manifest(2_000_000)).unwrap();
    let pack = Pack::load(dir.path()).unwrap();
    assert!(pack.prompt("long").unwrap().default_prompt().is_some());

    std::fs::write(dir.path().join("promptreg.toml"), manifest(1_000)).unwrap();
    let (pack, diagnostics) = Pack::load_with_diagnostics(dir.path());
    assert!(pack.is_none());
    let codes: Vec<DiagnosticCode> = diagnostics.iter().map(|d| d.code).collect();
    // Too large, and not reported as missing as well.
    assert_eq!(codes, [DiagnosticCode::FileTooLarge]);
}

#[test]
fn a_locale_variant_sets_model_settings_keys_over_its_defaults() {
    let pack = Pack::from_files(
        "inline",
        [
            ("promptreg.toml", "name = \"m\"\nkeys = [\"narrator\"]\n[user]\nprompts_dir = \".m\"\n"),
            (
                "defaults/narrator.md",
                "---\nmodel:\n  model: small\n  temperature: 0.2\n  response_format: { type: json_object }\nmetadata:\n  owner: web\n---\nNarrate.\n",
            ),
            ("defaults/narrator.ja.md", "---\nmodel:\n  temperature: 0.7\n---\n語る。\n"),
            ("defaults/narrator.fr.md", "Raconte.\n"),
        ],
    )
    .unwrap();
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let settings = |locale| {
        registry
            .model_settings_in("narrator", locale)
            .unwrap()
            .unwrap()
            .to_value()
    };
    let default = json!({ "model": "small", "temperature": 0.2, "response_format": { "type": "json_object" } });
    assert_eq!(settings("en"), default);
    assert_eq!(
        settings("fr"),
        default,
        "a variant without `model` keeps the default's"
    );
    let ja = json!({ "model": "small", "temperature": 0.7, "response_format": { "type": "json_object" } });
    assert_eq!(
        settings("ja-JP"),
        ja,
        "found by locale matching, merged per key"
    );
    let rendered = registry.render_traced_in("narrator", &(), "ja").unwrap();
    assert_eq!(rendered.model.unwrap().to_value(), ja);
    assert_eq!(
        rendered.metadata.unwrap().to_value(),
        json!({ "owner": "web" })
    );
    let explained =
        serde_json::to_value(registry.render_traced_in("narrator", &(), "fr").unwrap()).unwrap();
    assert_eq!(explained["model"], default);
    assert_eq!(explained["metadata"], json!({ "owner": "web" }));
}

#[test]
fn a_reload_replaces_model_settings_a_variant_no_longer_gives() {
    let sandbox = Sandbox::new();
    let root = sandbox.root().join("pack");
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "promptreg.toml",
        "name = \"m\"\nkeys = [\"a\"]\n[user]\nprompts_dir = \".m\"\n",
    );
    write("defaults/a.md", "---\nmodel: { model: small }\n---\nA\n");
    write(
        "defaults/a.ja.md",
        "---\nmodel: { model: small-ja }\n---\nエー\n",
    );
    let registry = PromptRegistry::new();
    Pack::load(&root).unwrap().install(&registry).unwrap();
    let name = |registry: &PromptRegistry| {
        registry
            .model_settings_in("a", "ja")
            .unwrap()
            .and_then(|s| s.model_name())
    };
    assert_eq!(name(&registry).as_deref(), Some("small-ja"));
    write("defaults/a.ja.md", "エー\n");
    registry.reload().unwrap();
    assert_eq!(name(&registry).as_deref(), Some("small"));
}

/// A pack whose `greeting` includes the `sign-off` snippet from its body.
fn snippet_pack(root: &std::path::Path, snippet: &str) {
    support::write(
        &root.join("promptreg.toml"),
        "name = \"s\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".s\"\n",
    );
    support::write(
        &root.join("defaults/greeting.md"),
        "---\ntemplate: true\nvariables:\n  team: { default: shop }\n---\nHello.\n{% include \"sign-off\" %}\n",
    );
    support::write(&root.join("snippets/sign-off.md"), snippet);
}

#[test]
fn a_changed_snippet_is_reloaded_and_its_variables_count_as_used() {
    let dir = tempfile::tempdir().unwrap();
    snippet_pack(dir.path(), "The {{ team }} team.");
    let (pack, diagnostics) = Pack::load_with_diagnostics(dir.path());
    // `team` is used by the snippet only: not an unused variable.
    assert_eq!(diagnostics, []);
    let registry = PromptRegistry::new();
    pack.unwrap().install(&registry).unwrap();
    assert_eq!(
        registry.render("greeting", &()).unwrap(),
        "Hello.\nThe shop team."
    );

    std::fs::write(
        dir.path().join("snippets/sign-off.md"),
        "Bye from {{ team }}.",
    )
    .unwrap();
    let report = registry.reload().unwrap();
    assert_eq!(report.changed, ["greeting"]);
    assert_eq!(
        registry.render("greeting", &()).unwrap(),
        "Hello.\nBye from shop."
    );
}

#[test]
fn a_runaway_snippet_runs_out_of_the_including_renders_fuel() {
    let dir = tempfile::tempdir().unwrap();
    snippet_pack(
        dir.path(),
        "Signed.\n{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
    );
    let registry = PromptRegistry::new();
    Pack::load(dir.path()).unwrap().install(&registry).unwrap();
    let err = registry.render("greeting", &()).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("ran out of fuel"), "{message}");
    // The snippet's file and line, and where it was included from.
    assert!(message.contains("snippets/sign-off.md:2"), "{message}");
    assert!(message.contains("included from"), "{message}");
}

#[test]
fn a_variable_a_snippet_reads_but_the_prompt_does_not_declare_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    snippet_pack(dir.path(), "The {{ team }} team, {{ signer }}.");
    let diagnostics = Pack::check(dir.path());
    let codes: Vec<_> = diagnostics
        .iter()
        .map(|d| (d.code, d.message.clone()))
        .collect();
    assert_eq!(
        codes,
        [(
            DiagnosticCode::UndeclaredVariable,
            "template uses `signer`, which its front matter does not declare".to_owned()
        )]
    );
}

#[test]
fn a_snippet_with_variants_only_is_a_load_error() {
    let dir = tempfile::tempdir().unwrap();
    snippet_pack(dir.path(), "Signed.");
    std::fs::remove_file(dir.path().join("snippets/sign-off.md")).unwrap();
    support::write(&dir.path().join("snippets/sign-off.ja.md"), "署名");
    let (pack, diagnostics) = Pack::load_with_diagnostics(dir.path());
    assert!(pack.is_none());
    assert!(
        diagnostics[0]
            .message
            .starts_with("snippet `sign-off` has locale variants but no default"),
        "{diagnostics:?}"
    );
    assert_eq!(
        diagnostics[0].suggestion.as_deref(),
        Some("create snippets/sign-off.md")
    );
}

/// Where a render of `p` in `locale` finds its body: the variant's locale
/// and the step, or `None` for the default.
fn lookup(registry: &PromptRegistry, locale: &str) -> Option<(String, promptreg::LocaleStep)> {
    let found = registry.snapshot().locale_lookup("p", locale).unwrap();
    found.matched.map(|m| (m.locale.to_string(), m.step))
}

#[test]
fn same_script_matching_holds_among_thousands_of_variants_and_after_removing_some() {
    use promptreg::LocaleStep::{Exact, SameScript};
    let sandbox = Sandbox::new();
    let root = sandbox.root().join("pack");
    support::write(
        &root.join("promptreg.toml"),
        "name = \"t\"\nkeys = [\"p\"]\n[user]\nprompts_dir = \".t\"\n",
    );
    support::write(&root.join("defaults/p.md"), "default");
    let mut locales: Vec<String> = (0..3000).map(|n| format!("en-US-v{n:05}")).collect();
    locales.extend(["pt-AO", "pt-MZ", "pt-BR", "zh-TW", "zh-HK"].map(str::to_owned));
    for locale in &locales {
        support::write(&root.join(format!("defaults/p.{locale}.md")), locale);
    }
    let registry = PromptRegistry::new();
    Pack::load(&root).unwrap().install(&registry).unwrap();
    let at = |tag: &str, step| Some((tag.to_owned(), step));
    assert_eq!(lookup(&registry, "pt-PT"), at("pt-BR", SameScript));
    assert_eq!(lookup(&registry, "zh-MO"), at("zh-TW", SameScript));
    // `US` is the likely region of `en`: the first of them by tag.
    assert_eq!(lookup(&registry, "en-GB"), at("en-US-v00000", SameScript));
    assert_eq!(lookup(&registry, "en-US-v02999"), at("en-US-v02999", Exact));
    assert_eq!(registry.render_in("p", &(), "zh-MO").unwrap(), "zh-TW");

    // Removing variants reindexes what is left.
    for gone in ["pt-BR", "zh-TW", "en-US-v00000"] {
        std::fs::remove_file(root.join(format!("defaults/p.{gone}.md"))).unwrap();
    }
    registry.reload().unwrap();
    assert_eq!(lookup(&registry, "pt-PT"), at("pt-AO", SameScript));
    assert_eq!(lookup(&registry, "zh-MO"), at("zh-HK", SameScript));
    assert_eq!(lookup(&registry, "en-GB"), at("en-US-v00001", SameScript));
    assert_eq!(registry.render_in("p", &(), "zh-MO").unwrap(), "zh-HK");
    for gone in ["pt-AO", "pt-MZ", "zh-HK"] {
        std::fs::remove_file(root.join(format!("defaults/p.{gone}.md"))).unwrap();
    }
    registry.reload().unwrap();
    assert_eq!(lookup(&registry, "pt-PT"), None);
    assert_eq!(registry.render_in("p", &(), "zh-MO").unwrap(), "default");
}

/// A pack of `a` (clean) and `b` (a variant that does not compile), with
/// a test file for each.
fn partly_broken() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| support::write(&dir.path().join(path), text);
    write(
        "promptreg.toml",
        "name = \"part\"\nkeys = [\"a\", \"b\"]\n[user]\nprompts_dir = \".part\"\n",
    );
    write("defaults/a.md", "Hello.");
    write("defaults/b.md", "Bye.");
    write("defaults/b.fr.md", "---\ntemplate: true\n---\n{{ oops }");
    write(
        "tests/a.toml",
        "prompt = \"a\"\n[[case]]\nname = \"hi\"\ncontains = \"Hello\"\n",
    );
    write(
        "tests/b.toml",
        "prompt = \"b\"\n[[case]]\nname = \"bye\"\ncontains = \"Bye\"\n",
    );
    dir
}

#[test]
fn a_best_effort_load_leaves_out_the_prompts_with_errors_and_reports_them_all() {
    let dir = partly_broken();
    let Err((Some(pack), diagnostics)) = Pack::try_load(dir.path()) else {
        panic!("errors confined to b give the pack without it");
    };
    assert!(pack.prompt("a").is_some());
    assert!(pack.prompt("b").is_none());
    let failed: Vec<&str> = pack.failed_prompts().map(|id| id.as_str()).collect();
    assert_eq!(failed, ["b"]);
    assert!(pack.warnings().iter().all(|d| !d.is_error()));
    // The same diagnostics as the strict load, which fails.
    let shown = |ds: &[promptreg::Diagnostic]| ds.iter().map(|d| d.to_string()).collect::<Vec<_>>();
    assert_eq!(shown(&diagnostics), shown(&Pack::check(dir.path())));
    assert!(Pack::load(dir.path()).is_err());
    // b's test file is not read; a's cases are.
    #[cfg(feature = "testing")]
    {
        let tests = promptreg::testing::PromptTests::load(&pack).unwrap();
        let prompts: Vec<&str> = tests.cases().iter().map(|c| c.prompt.as_str()).collect();
        assert_eq!(prompts, ["a"]);
    }
}

#[test]
fn a_reload_of_a_partly_loaded_pack_is_strict() {
    let dir = partly_broken();
    let Err((Some(pack), _)) = Pack::try_load(dir.path()) else {
        panic!("errors confined to b give the pack without it");
    };
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    support::write(&dir.path().join("defaults/a.md"), "Changed.");
    assert!(registry.reload().is_err());
    assert_eq!(registry.render("a", &()).unwrap(), "Hello.");
}

#[test]
fn an_error_in_a_snippet_or_the_manifest_gives_no_pack_at_all() {
    let dir = partly_broken();
    support::write(&dir.path().join("snippets/s.md"), "{% if %}");
    assert!(matches!(Pack::try_load(dir.path()), Err((None, _))));
    std::fs::remove_file(dir.path().join("snippets/s.md")).unwrap();
    support::write(
        &dir.path().join("promptreg.toml"),
        "name = \"part\"\nkeys = [\"a\", \"b\"]\nunknown = 1\n",
    );
    assert!(matches!(Pack::try_load(dir.path()), Err((None, _))));
    // Nothing wrong: the whole pack.
    std::fs::remove_file(dir.path().join("defaults/b.fr.md")).unwrap();
    support::write(
        &dir.path().join("promptreg.toml"),
        "name = \"part\"\nkeys = [\"a\", \"b\"]\n[user]\nprompts_dir = \".part\"\n",
    );
    let pack = Pack::try_load(dir.path()).unwrap();
    assert_eq!(pack.prompts().count(), 2);
}
