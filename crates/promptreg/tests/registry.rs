//! The registry's rules, one test each, and the seed document's examples.

use promptreg::{
    Chat, ErrorKind, Locale, LocaleMatch, LocaleStep, Origin, Pin, Prompt, PromptRegistry,
};
use serde::Serialize;

#[derive(Serialize)]
struct Narration {
    brand: String,
    persona: String,
}

fn acme() -> Narration {
    Narration {
        brand: "Acme".into(),
        persona: "friendly".into(),
    }
}

#[derive(Serialize)]
struct Other;

fn registry_with(id: &str, body: &str) -> PromptRegistry {
    let registry = PromptRegistry::new();
    registry.register_default(id, body).unwrap();
    registry
}

// --- Registering, overriding, appending -----------------------------------

#[test]
fn static_text_is_a_renderer() {
    let registry = registry_with("task.system", "Do the task.");
    assert_eq!(registry.render("task.system", &()).unwrap(), "Do the task.");
    registry
        .register_default("owned", String::from("Owned text."))
        .unwrap();
    assert_eq!(registry.render("owned", &()).unwrap(), "Owned text.");
}

#[test]
fn closures_without_arguments_are_renderers() {
    let registry = PromptRegistry::new();
    registry
        .register_default("clock.system", || "Mind the time.".to_owned())
        .unwrap();
    registry
        .append("clock.system", || "Be brief.".to_owned())
        .unwrap();
    assert_eq!(
        registry.render("clock.system", &acme()).unwrap(),
        "Mind the time.\n\nBe brief."
    );
}

#[test]
fn render_plain_needs_no_context() {
    let registry = registry_with("translate.system", "Translate faithfully.");
    registry
        .set_override("translate.system", "ja", "忠実に翻訳してください。")
        .unwrap();
    assert_eq!(
        registry.render_plain("translate.system").unwrap(),
        "Translate faithfully."
    );
    assert_eq!(
        registry
            .render_plain_in("translate.system", "ja-JP")
            .unwrap(),
        "忠実に翻訳してください。"
    );
    assert_eq!(
        registry
            .snapshot()
            .render_plain("translate.system")
            .unwrap(),
        "Translate faithfully."
    );
    // A prompt that needs a context says so.
    registry
        .register_default("webagent-narrator.system", |n: &Narration, _: &Locale| {
            n.brand.clone()
        })
        .unwrap();
    let err = registry
        .render_plain("webagent-narrator.system")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ContextType);
}

#[test]
fn a_later_default_replaces_the_earlier_one_and_keeps_overrides() {
    let registry = registry_with("task.system", "v1");
    registry
        .set_override("task.system", "ja", "ja body")
        .unwrap();
    registry.register_default("task.system", "v2").unwrap();
    assert_eq!(registry.render("task.system", &()).unwrap(), "v2");
    assert_eq!(
        registry.render_in("task.system", &(), "ja").unwrap(),
        "ja body"
    );
}

#[test]
fn a_later_override_for_the_same_locale_wins() {
    let registry = registry_with("planner.system", "default");
    registry
        .set_override("planner.system", "ja", "first")
        .unwrap();
    registry
        .set_override("planner.system", "JA", "second")
        .unwrap();
    assert_eq!(
        registry.render_in("planner.system", &(), "ja").unwrap(),
        "second"
    );
}

#[test]
fn appenders_stack_in_registration_order() {
    let registry = registry_with("task.system", "Body.");
    registry.append("task.system", "One.").unwrap();
    registry.append("task.system", "Two.").unwrap();
    assert_eq!(
        registry.render("task.system", &()).unwrap(),
        "Body.\n\nOne.\n\nTwo."
    );
}

/// A snapshot joins adjacent static parts once, up to a budget of 8 MiB
/// of joined text; past it, parts are copied one by one. Both give the
/// same text, with computed parts among them or not, in every render.
#[test]
fn renders_are_the_same_within_and_beyond_what_a_snapshot_joins() {
    let registry = PromptRegistry::new();
    let large = "x".repeat(3 << 20);
    let ids = ["large.1", "large.2", "large.3", "large.static", "small"];
    for id in ids {
        let body = match id {
            "small" => "Body.".to_owned(),
            _ => large.clone(),
        };
        registry.register_default(id, body).unwrap();
        registry.append(id, "One.").unwrap();
        if id != "large.static" {
            registry
                .append(id, |l: &Locale| format!("In {l}."))
                .unwrap();
        }
        registry.append(id, "Two.").unwrap();
    }
    let expected = |id: &str| match id {
        "small" => "Body.\n\nOne.\n\nIn en.\n\nTwo.".to_owned(),
        "large.static" => format!("{large}\n\nOne.\n\nTwo."),
        _ => format!("{large}\n\nOne.\n\nIn en.\n\nTwo."),
    };
    // The first two large prompts use most of the budget up: the others
    // decide with too little left to join their body.
    for round in 0..2 {
        for id in ids {
            let text = registry.render_plain(id).unwrap();
            assert!(text == expected(id), "{id}, round {round}");
        }
    }
}

#[test]
fn append_all_reaches_prompts_registered_later_and_interleaves_by_order() {
    let registry = registry_with("a", "A.");
    registry.append("a", "a-1").unwrap();
    registry.append_all("global-1").unwrap();
    registry.append("a", "a-2").unwrap();
    registry.register_default("b", "B.").unwrap();
    registry.append_all("global-2").unwrap();

    assert_eq!(
        registry.render("a", &()).unwrap(),
        "A.\n\na-1\n\nglobal-1\n\na-2\n\nglobal-2"
    );
    assert_eq!(
        registry.render("b", &()).unwrap(),
        "B.\n\nglobal-1\n\nglobal-2"
    );
}

#[test]
fn appenders_apply_in_every_locale_after_an_override() {
    let registry = registry_with("x", "en body");
    registry.set_override("x", "ja", "ja body").unwrap();
    registry
        .append("x", |locale: &Locale| format!("rule for {locale}"))
        .unwrap();
    assert_eq!(
        registry.render_in("x", &(), "ja").unwrap(),
        "ja body\n\nrule for ja"
    );
    assert_eq!(
        registry.render_in("x", &(), "de").unwrap(),
        "en body\n\nrule for de"
    );
}

// --- reset, has, list -------------------------------------------------------

#[test]
fn reset_clears_overrides_and_appenders_but_keeps_default_and_pins() {
    let registry = PromptRegistry::new();
    registry
        .register("x", Prompt::new("body").pin_head("HEAD").pin_tail("TAIL"))
        .unwrap();
    registry.set_override("x", "en", "override").unwrap();
    registry.append("x", "extra").unwrap();
    assert_eq!(
        registry.render("x", &()).unwrap(),
        "HEAD\n\noverride\n\nTAIL\n\nextra"
    );

    registry.reset("x").unwrap();
    assert_eq!(registry.render("x", &()).unwrap(), "HEAD\n\nbody\n\nTAIL");
}

#[test]
fn reset_keeps_append_all_rules_and_reset_all_removes_everything_but_defaults() {
    let registry = registry_with("x", "body");
    registry.append_all("global").unwrap();
    registry.append("x", "own").unwrap();
    registry
        .set_override("y", "ja", "only an override")
        .unwrap();

    registry.reset("x").unwrap();
    assert_eq!(registry.render("x", &()).unwrap(), "body\n\nglobal");

    registry.reset_all();
    assert_eq!(registry.render("x", &()).unwrap(), "body");
    assert!(!registry.has("y"));
}

#[test]
fn reset_of_an_unknown_id_is_an_error_with_a_suggestion() {
    let registry = registry_with("planner.system", "p");
    let err = registry.reset("planer.system").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownId);
    assert_eq!(err.suggestion(), Some("did you mean `planner.system`?"));
}

#[test]
fn reset_of_an_appender_only_id_clears_its_appenders() {
    let registry = PromptRegistry::new();
    registry.append("planer.system", "typo rule").unwrap();
    // Something was registered under the id, so this is no error...
    registry.reset("planer.system").unwrap();
    // ...and the appender is gone: a default registered later renders alone.
    registry.register_default("planer.system", "body").unwrap();
    assert_eq!(registry.render("planer.system", &()).unwrap(), "body");
    // Nothing is left under an id reset twice.
    let registry = PromptRegistry::new();
    registry.append("only-appended", "a").unwrap();
    registry.reset("only-appended").unwrap();
    assert_eq!(
        registry.reset("only-appended").unwrap_err().kind(),
        ErrorKind::UnknownId
    );
    assert!(registry.problems().is_empty());
}

#[test]
fn problems_name_ids_with_overrides_or_appenders_but_no_default() {
    let registry = registry_with("planner.system", "p");
    registry.append("planer.system", "a typo").unwrap();
    registry
        .set_override("translate.system", "ja", "翻訳")
        .unwrap();
    registry
        .set_override("planner.system", "ja", "計画")
        .unwrap();
    // A typo is listed as if it were a prompt...
    assert!(registry.list().iter().any(|id| id == "translate.system"));
    // ...and `problems` says what is wrong with each such id.
    let problems = registry.problems();
    let found: Vec<(&str, &str, Option<&str>)> = problems
        .iter()
        .map(|p| {
            let d = &p.diagnostic;
            (p.id.as_str(), d.message.as_str(), d.suggestion.as_deref())
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "planer.system",
                "`planer.system` has appenders but no default is registered",
                Some("did you mean `planner.system`?")
            ),
            (
                "translate.system",
                "`translate.system` has overrides (ja) but no default is registered",
                Some(
                    "register a default for it, or remove the overrides and appenders if the id is misspelt"
                )
            ),
        ]
    );
    assert!(
        problems
            .iter()
            .all(|p| p.diagnostic.code == promptreg::DiagnosticCode::NoDefault)
    );
    // Registering the default solves it.
    registry.register_default("translate.system", "t").unwrap();
    assert_eq!(registry.snapshot().problems().len(), 1);
}

#[test]
fn has_is_true_for_a_default_or_an_override_only() {
    let registry = registry_with("with-default", "d");
    registry.set_override("with-override", "ja", "o").unwrap();
    registry.append("only-appended", "a").unwrap();

    assert!(registry.has("with-default"));
    assert!(registry.has("with-override"));
    assert!(!registry.has("only-appended"));
    assert!(!registry.has("missing"));
    assert!(!registry.has("../etc/passwd"));
}

#[test]
fn list_is_every_registered_id_in_byte_order() {
    let registry = PromptRegistry::new();
    for id in ["task.system", "Zeta", "alpha", "planner.system", "9lives"] {
        registry.register_default(id, "x").unwrap();
    }
    registry.set_override("override-only", "ja", "o").unwrap();
    registry.append("appended-only", "a").unwrap();

    let ids: Vec<String> = registry.list().iter().map(|id| id.to_string()).collect();
    assert_eq!(
        ids,
        [
            "9lives",
            "Zeta",
            "alpha",
            "override-only",
            "planner.system",
            "task.system"
        ]
    );
}

// --- Locales ----------------------------------------------------------------

fn localised() -> PromptRegistry {
    let registry = registry_with("narrator", "default");
    for locale in ["ja", "zh-Hant", "zh", "en-001", "es-419", "en"] {
        registry
            .set_override("narrator", locale, format!("override {locale}"))
            .unwrap();
    }
    registry
}

#[test]
fn override_lookup_walks_the_cldr_chain() {
    let registry = localised();
    for (locale, expected) in [
        ("ja", "override ja"),
        ("ja-JP", "override ja"),
        ("zh-TW", "override zh-Hant"),
        ("zh-HK", "override zh-Hant"),
        ("zh-CN", "override zh"),
        ("en-GB", "override en-001"),
        ("en-US", "override en"),
        ("es-MX", "override es-419"),
    ] {
        assert_eq!(
            registry.render_in("narrator", &(), locale).unwrap(),
            expected,
            "{locale}"
        );
    }
}

#[test]
fn traditional_chinese_does_not_take_the_simplified_override() {
    let registry = registry_with("narrator", "default");
    registry.set_override("narrator", "zh", "简体").unwrap();
    assert_eq!(
        registry.render_in("narrator", &(), "zh-TW").unwrap(),
        "default"
    );
    assert_eq!(
        registry.render_in("narrator", &(), "zh-CN").unwrap(),
        "简体"
    );
}

#[test]
fn after_the_chain_comes_the_fallback_locale_then_the_default() {
    let registry = registry_with("narrator", "default");
    assert_eq!(
        registry.render_in("narrator", &(), "fr").unwrap(),
        "default"
    );

    registry.set_override("narrator", "en", "english").unwrap();
    assert_eq!(
        registry.render_in("narrator", &(), "fr").unwrap(),
        "english"
    );

    registry.set_override("narrator", "de", "deutsch").unwrap();
    registry.set_fallback_locale("de-AT").unwrap();
    assert_eq!(registry.fallback_locale().as_str(), "de-AT");
    assert_eq!(
        registry.render_in("narrator", &(), "fr").unwrap(),
        "deutsch"
    );
}

/// The body for `locale` and the step of locale matching that chose it.
fn matched(registry: &PromptRegistry, locale: &str) -> (String, Option<LocaleStep>) {
    let rendered = registry.render_traced_in("narrator", &(), locale).unwrap();
    let step = match &rendered.parts[0].origin {
        Origin::Override { step, .. } => Some(*step),
        _ => None,
    };
    (rendered.text, step)
}

#[test]
fn a_variant_of_the_same_language_and_script_comes_before_the_fallback_locale() {
    let registry = registry_with("narrator", "default");
    for locale in ["en", "zh-TW", "pt-BR", "zh"] {
        registry.set_override("narrator", locale, locale).unwrap();
    }
    // zh-HK -> zh-Hant (no variant) -> same script: zh-TW.
    assert_eq!(
        matched(&registry, "zh-HK"),
        ("zh-TW".into(), Some(LocaleStep::SameScript))
    );
    assert_eq!(
        matched(&registry, "zh-MO"),
        ("zh-TW".into(), Some(LocaleStep::SameScript))
    );
    // Portuguese before English.
    assert_eq!(
        matched(&registry, "pt-PT"),
        ("pt-BR".into(), Some(LocaleStep::SameScript))
    );
    // Never across scripts: Simplified Chinese keeps its own variant.
    assert_eq!(
        matched(&registry, "zh-CN"),
        ("zh".into(), Some(LocaleStep::Parent))
    );
    assert_eq!(
        matched(&registry, "zh-TW"),
        ("zh-TW".into(), Some(LocaleStep::Exact))
    );
    assert_eq!(
        matched(&registry, "fr"),
        ("en".into(), Some(LocaleStep::Fallback))
    );
}

#[test]
fn simplified_chinese_never_gets_a_traditional_variant() {
    let registry = registry_with("narrator", "default");
    registry.set_override("narrator", "zh-TW", "正體").unwrap();
    registry.set_override("narrator", "zh-HK", "港").unwrap();
    for locale in ["zh-CN", "zh", "zh-SG", "zh-Hans"] {
        assert_eq!(
            matched(&registry, locale),
            ("default".into(), None),
            "{locale}"
        );
    }
}

#[test]
fn among_same_script_variants_the_likely_region_comes_first_then_the_tag() {
    let registry = registry_with("narrator", "default");
    for locale in ["pt-MZ", "pt-AO"] {
        registry.set_override("narrator", locale, locale).unwrap();
    }
    // Neither is the likely region of `pt` (BR): sorted by tag.
    assert_eq!(matched(&registry, "pt-PT").0, "pt-AO");
    registry.set_override("narrator", "pt-BR", "pt-BR").unwrap();
    assert_eq!(matched(&registry, "pt-PT").0, "pt-BR");
    // The order of registration does not matter.
    let other = registry_with("narrator", "default");
    for locale in ["pt-BR", "pt-AO", "pt-MZ"] {
        other.set_override("narrator", locale, locale).unwrap();
    }
    assert_eq!(matched(&other, "pt-PT").0, "pt-BR");
    // Overrides of other languages in the same script are not candidates.
    let latin = registry_with("narrator", "default");
    latin.set_override("narrator", "es", "es").unwrap();
    assert_eq!(matched(&latin, "pt-PT").0, "default");
}

#[test]
fn reset_forgets_same_script_variants() {
    let registry = registry_with("narrator", "default");
    registry.set_override("narrator", "zh-TW", "正體").unwrap();
    registry.reset("narrator").unwrap();
    assert_eq!(matched(&registry, "zh-HK").0, "default");
}

#[test]
fn locales_are_accepted_in_any_case_and_with_underscores() {
    let registry = localised();
    assert_eq!(
        registry.render_in("narrator", &(), "ZH_tw").unwrap(),
        "override zh-Hant"
    );
    registry.set_locale("es_mx").unwrap();
    assert_eq!(registry.locale().as_str(), "es-MX");
}

#[test]
fn invalid_locales_are_errors_naming_the_tag() {
    let registry = registry_with("narrator", "default");
    for result in [
        registry.set_override("narrator", "en--US", "x"),
        registry.set_locale("x"),
        registry.set_fallback_locale(""),
        registry.render_in("narrator", &(), "en--US").map(drop),
    ] {
        let err = result.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidLocale);
        assert!(err.locale().is_some());
    }
    // Nothing changed.
    assert_eq!(registry.locale().as_str(), "en");
}

#[test]
fn only_overrides_for_other_locales_is_an_error_listing_them() {
    let registry = PromptRegistry::new();
    registry.set_override("narrator", "ja", "ja").unwrap();
    let err = registry.render_in("narrator", &(), "fr").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NoPromptForLocale);
    assert_eq!(err.locale(), Some("fr"));
    assert!(err.to_string().contains("overrides for ja"), "{err}");
}

// --- Ids and errors -----------------------------------------------------------

#[test]
fn every_call_taking_an_id_validates_it() {
    let registry = PromptRegistry::new();
    for bad in ["../../etc/passwd", "a/b", "", "a..b"] {
        let errors = [
            registry.register_default(bad, "x").unwrap_err(),
            registry.register(bad, Prompt::new("x")).unwrap_err(),
            registry.set_override(bad, "en", "x").unwrap_err(),
            registry.append(bad, "x").unwrap_err(),
            registry.reset(bad).unwrap_err(),
            registry.render(bad, &()).unwrap_err(),
            registry.render_traced(bad, &()).unwrap_err(),
        ];
        for err in errors {
            assert_eq!(err.kind(), ErrorKind::InvalidId, "{bad:?}: {err}");
            assert_eq!(err.id(), Some(bad));
        }
    }
    assert!(registry.list().is_empty());
}

#[test]
fn an_unknown_id_suggests_the_nearest_registered_one() {
    let registry = registry_with("planner.system", "p");
    registry.register_default("task.system", "t").unwrap();
    let err = registry.render("planer.system", &()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownId);
    assert_eq!(err.id(), Some("planer.system"));
    assert_eq!(
        err.to_string(),
        "unknown prompt id `planer.system` (did you mean `planner.system`?)"
    );
}

// --- Typed contexts -------------------------------------------------------------

#[test]
fn a_typed_renderer_gets_its_context() {
    let registry = PromptRegistry::new();
    registry
        .register_default("narrator", |ctx: &Narration, locale: &Locale| {
            format!("{} guide, {} tone, {locale}", ctx.brand, ctx.persona)
        })
        .unwrap();
    assert_eq!(
        registry.render_in("narrator", &acme(), "ja").unwrap(),
        "Acme guide, friendly tone, ja"
    );
}

#[test]
fn a_context_of_another_type_is_an_error_naming_id_and_both_types() {
    let registry = PromptRegistry::new();
    registry
        .register_default("narrator", |ctx: &Narration, _: &Locale| ctx.brand.clone())
        .unwrap();
    let err = registry.render("narrator", &Other).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ContextType);
    assert_eq!(err.id(), Some("narrator"));
    let message = err.to_string();
    assert!(message.contains("registry::Narration"), "{message}");
    assert!(message.contains("registry::Other"), "{message}");
    assert!(message.contains("default"), "{message}");
}

#[test]
fn context_free_renderers_attach_to_any_prompt() {
    let registry = PromptRegistry::new();
    registry
        .register_default("narrator", |ctx: &Narration, _: &Locale| ctx.brand.clone())
        .unwrap();
    registry.append("narrator", "Static rule.").unwrap();
    registry
        .append("narrator", |locale: &Locale| format!("Answer in {locale}."))
        .unwrap();
    registry.append_all("Global rule.").unwrap();
    assert_eq!(
        registry.render("narrator", &acme()).unwrap(),
        "Acme\n\nStatic rule.\n\nAnswer in en.\n\nGlobal rule."
    );
}

// --- Pinned blocks ----------------------------------------------------------------

#[test]
fn pinned_blocks_survive_overrides_in_every_locale() {
    let registry = PromptRegistry::new();
    registry
        .register(
            "goal-running",
            Prompt::new("Default instructions.")
                .pin_head("[PI GOAL ACTIVE]")
                .pin_head(|ctx: &Narration, _: &Locale| format!("Objective: serve {}", ctx.brand))
                .pin_tail("Verification contract."),
        )
        .unwrap();
    registry
        .set_override("goal-running", "ja", "日本語の指示。")
        .unwrap();

    let expected_ja =
        "[PI GOAL ACTIVE]\n\nObjective: serve Acme\n\n日本語の指示。\n\nVerification contract.";
    assert_eq!(
        registry.render_in("goal-running", &acme(), "ja").unwrap(),
        expected_ja
    );
    let expected_en = "[PI GOAL ACTIVE]\n\nObjective: serve Acme\n\nDefault instructions.\n\nVerification contract.";
    assert_eq!(
        registry.render_in("goal-running", &acme(), "en").unwrap(),
        expected_en
    );
}

fn auditor() -> PromptRegistry {
    let registry = PromptRegistry::new();
    registry
        .register(
            "auditor",
            Prompt::new("Audit the work.")
                .pin_head("[AUDIT]")
                .pin_tail("Answer PASS or FAIL.")
                .pin_tail("Cite the evidence."),
        )
        .unwrap();
    registry
}

#[test]
fn pinned_blocks_can_be_translated_per_locale() {
    let registry = auditor();
    registry
        .set_override("auditor", "ja", "作業を監査する。")
        .unwrap();
    registry
        .translate_pin("auditor", "ja", Pin::Tail(0), "PASS か FAIL で答える。")
        .unwrap();
    // Follows the same matching as the body: ja-JP takes the ja text.
    assert_eq!(
        registry.render_in("auditor", &(), "ja-JP").unwrap(),
        "[AUDIT]\n\n作業を監査する。\n\nPASS か FAIL で答える。\n\nCite the evidence."
    );
    // Other locales keep the default's text.
    assert_eq!(
        registry.render_in("auditor", &(), "fr").unwrap(),
        "[AUDIT]\n\nAudit the work.\n\nAnswer PASS or FAIL.\n\nCite the evidence."
    );
}

#[test]
fn translated_pins_stay_when_the_body_is_replaced_and_are_traced() {
    let registry = auditor();
    registry
        .translate_pin("auditor", "zh-TW", Pin::Head(0), "[審核]")
        .unwrap();
    registry.append("auditor", "appended").unwrap();
    let rendered = registry.render_traced_in("auditor", &(), "zh-HK").unwrap();
    assert_eq!(rendered.part_text(&rendered.parts[0]), "[審核]");
    assert_eq!(
        rendered.parts[0].origin,
        Origin::PinnedHead {
            index: 0,
            translation: Some(LocaleMatch {
                locale: Locale::parse("zh-TW").unwrap(),
                step: LocaleStep::SameScript,
            }),
        }
    );
    assert_eq!(
        rendered.parts[0].origin.to_string(),
        "pinned head block #1 (`zh-TW` translation)"
    );
    assert_eq!(
        rendered.parts[2].origin,
        Origin::PinnedTail {
            index: 0,
            translation: None
        }
    );
}

#[test]
fn translating_a_pin_the_default_lacks_is_an_error_and_changes_nothing() {
    let registry = auditor();
    let before = registry.render_in("auditor", &(), "ja").unwrap();
    for pin in [Pin::Head(1), Pin::Tail(2)] {
        let err = registry
            .translate_pin("auditor", "ja", pin, "x")
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownPin);
        assert_eq!(err.id(), Some("auditor"));
        assert_eq!(err.locale(), Some("ja"));
    }
    let err = registry
        .translate_pin("auditor", "ja", Pin::Tail(2), "x")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot translate pinned tail block #3 of prompt `auditor` for `ja`: its default has 2 pinned tail blocks (pins are counted from 0 in the order the default declares them)"
    );
    assert_eq!(registry.render_in("auditor", &(), "ja").unwrap(), before);
}

#[test]
fn pin_translations_may_come_before_the_default_and_reset_clears_them() {
    let registry = PromptRegistry::new();
    registry
        .translate_pin("auditor", "ja", Pin::Tail(0), "日本語のピン")
        .unwrap();
    registry
        .translate_pin("auditor", "ja", Pin::Tail(5), "never rendered")
        .unwrap();
    assert!(!registry.has("auditor"));
    registry
        .register("auditor", Prompt::new("Audit.").pin_tail("English pin"))
        .unwrap();
    assert_eq!(
        registry.render_in("auditor", &(), "ja").unwrap(),
        "Audit.\n\n日本語のピン"
    );
    registry.reset("auditor").unwrap();
    assert_eq!(
        registry.render_in("auditor", &(), "ja").unwrap(),
        "Audit.\n\nEnglish pin"
    );
}

// --- Composition --------------------------------------------------------------------

#[test]
fn blank_parts_add_nothing_and_blank_lines_around_parts_are_dropped() {
    let registry = PromptRegistry::new();
    registry
        .register(
            "x",
            Prompt::new("\n  body line\n\n")
                .pin_head("   ")
                .pin_tail(""),
        )
        .unwrap();
    registry.append("x", "\n- rule one\n- rule two\n").unwrap();
    registry.append("x", |_: &Locale| String::new()).unwrap();
    registry.append_all(" \n\t\n").unwrap();
    assert_eq!(
        registry.render("x", &()).unwrap(),
        "  body line\n\n- rule one\n- rule two"
    );
}

#[test]
fn a_prompt_whose_every_part_is_blank_renders_empty() {
    let registry = registry_with("x", "  \n");
    assert_eq!(registry.render("x", &()).unwrap(), "");
}

// --- Panicking renderers -----------------------------------------------------------------

#[test]
fn a_panicking_renderer_is_an_error_naming_the_part_and_the_registry_stays_usable() {
    let registry = registry_with("x", "body");
    registry.register_default("other", "fine").unwrap();
    registry.append("x", "first").unwrap();
    registry
        .append("x", |_: &Locale| -> String { panic!("boom") })
        .unwrap();

    let err = registry.render("x", &()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RendererPanicked);
    assert_eq!(err.id(), Some("x"));
    let message = err.to_string();
    assert!(message.contains("appender #2"), "{message}");
    assert!(message.contains("boom"), "{message}");

    registry
        .set_override("x", "ja", |_: &Locale| -> String { panic!("ja broke") })
        .unwrap();
    let err = registry.render_in("x", &(), "ja").unwrap_err();
    assert!(err.to_string().contains("override for `ja`"), "{err}");

    // Every other call still works, on this thread and others.
    assert_eq!(registry.render("other", &()).unwrap(), "fine");
    std::thread::scope(|s| {
        s.spawn(|| assert_eq!(registry.render("other", &()).unwrap(), "fine"));
    });
    registry.reset("x").unwrap();
    assert_eq!(registry.render("x", &()).unwrap(), "body");
}

#[test]
fn a_panicking_pin_is_named() {
    let registry = PromptRegistry::new();
    registry
        .register(
            "x",
            Prompt::new("body").pin_tail(|_: &Locale| -> String { panic!("pin") }),
        )
        .unwrap();
    let err = registry.render("x", &()).unwrap_err();
    assert!(err.to_string().contains("pinned tail block #1"), "{err}");
}

// --- Trace -----------------------------------------------------------------------------

#[test]
fn render_traced_records_origin_and_range_of_every_part() {
    let registry = PromptRegistry::new();
    registry
        .register("x", Prompt::new("body").pin_head("HEAD").pin_tail("TAIL"))
        .unwrap();
    registry.set_override("x", "zh-Hant", "正體").unwrap();
    registry.append_all("global").unwrap();
    registry.append("x", "own").unwrap();
    registry.append("x", "").unwrap();

    let rendered = registry.render_traced_in("x", &(), "zh-TW").unwrap();
    assert_eq!(
        rendered.text,
        registry.render_in("x", &(), "zh-TW").unwrap()
    );
    assert_eq!(rendered.locale.as_str(), "zh-TW");

    let parts: Vec<(Origin, &str)> = rendered
        .parts
        .iter()
        .map(|p| (p.origin.clone(), rendered.part_text(p)))
        .collect();
    assert_eq!(
        parts,
        [
            (
                Origin::PinnedHead {
                    index: 0,
                    translation: None
                },
                "HEAD"
            ),
            (
                Origin::Override {
                    locale: Locale::parse("zh-Hant").unwrap(),
                    step: LocaleStep::Parent,
                },
                "正體"
            ),
            (
                Origin::PinnedTail {
                    index: 0,
                    translation: None
                },
                "TAIL"
            ),
            (Origin::GlobalAppender { index: 0 }, "global"),
            (Origin::Appender { index: 0 }, "own"),
        ]
    );
    // Ranges are in order and do not overlap the separators.
    for pair in rendered.parts.windows(2) {
        assert_eq!(
            &rendered.text[pair[0].range.end..pair[1].range.start],
            "\n\n"
        );
    }
}

#[test]
fn render_traced_names_the_default_when_no_override_matches() {
    let registry = localised();
    let rendered = registry.render_traced_in("narrator", &(), "fr").unwrap();
    assert_eq!(
        rendered.parts[0].origin,
        Origin::Override {
            locale: Locale::parse("en").unwrap(),
            step: LocaleStep::Fallback,
        }
    );
    let registry = registry_with("y", "body");
    let rendered = registry.render_traced("y", &()).unwrap();
    assert_eq!(rendered.parts[0].origin, Origin::Default);
}

// --- The process-level registry -----------------------------------------------------

#[test]
fn the_global_registry_is_one_instance() {
    let a = PromptRegistry::global();
    let b = PromptRegistry::global();
    assert!(std::ptr::eq(a, b));
    a.register_default("global-test.system", "from anywhere")
        .unwrap();
    assert_eq!(
        b.render("global-test.system", &()).unwrap(),
        "from anywhere"
    );
}

#[test]
fn a_snapshot_keeps_its_state_while_the_registry_changes() {
    let registry = registry_with("x", "before");
    let snapshot = registry.snapshot();
    registry.register_default("x", "after").unwrap();
    assert_eq!(snapshot.render("x", &()).unwrap(), "before");
    assert_eq!(registry.render("x", &()).unwrap(), "after");
}

// --- The seed document's examples -------------------------------------------------------

const SEED_IDS: [&str; 9] = [
    "inline-edit.system",
    "markdown-edit.system",
    "voice-cleanup.system",
    "translate.system",
    "dwell-classify.system",
    "planner.system",
    "webagent-narrator.system",
    "webagent-cot.system",
    "task.system",
];

fn seed_registry() -> PromptRegistry {
    let registry = PromptRegistry::new();
    for id in SEED_IDS {
        registry
            .register_default(id, format!("{id} default"))
            .unwrap();
    }
    registry
}

#[test]
fn seed_multi_locale_launch() {
    let registry = seed_registry();
    for locale in ["ja", "es", "fr"] {
        registry
            .set_override(
                "webagent-narrator.system",
                locale,
                move |ctx: &Narration, _: &Locale| format!("[{locale}] {}", ctx.brand),
            )
            .unwrap();
    }
    let narrator = |locale| {
        registry
            .render_in("webagent-narrator.system", &acme(), locale)
            .unwrap()
    };
    assert_eq!(narrator("ja"), "[ja] Acme");
    assert_eq!(narrator("es-MX"), "[es] Acme");
    assert_eq!(narrator("fr-CA"), "[fr] Acme");
    // EN and zh-TW get the default.
    assert_eq!(narrator("en"), "webagent-narrator.system default");
    assert_eq!(narrator("zh-TW"), "webagent-narrator.system default");
}

#[test]
fn seed_compliance_loop_over_list() {
    let registry = seed_registry();
    let compliance = "Compliance:\n- Never disclose personal data.";
    for id in registry.list() {
        registry.append(&id, compliance).unwrap();
    }
    for id in SEED_IDS {
        assert_eq!(
            registry.render(id, &()).unwrap(),
            format!("{id} default\n\n{compliance}")
        );
    }
}

#[test]
fn seed_runtime_locale_switch() {
    let registry = seed_registry();
    registry
        .set_override("inline-edit.system", "ja", "インライン編集")
        .unwrap();
    assert_eq!(
        registry.render("inline-edit.system", &()).unwrap(),
        "inline-edit.system default"
    );
    registry.set_locale("ja").unwrap();
    assert_eq!(
        registry.render("inline-edit.system", &()).unwrap(),
        "インライン編集"
    );
    registry.set_locale("en").unwrap();
    assert_eq!(
        registry.render("inline-edit.system", &()).unwrap(),
        "inline-edit.system default"
    );
}

#[test]
fn seed_reset_returns_to_the_sdk_default() {
    let registry = seed_registry();
    registry
        .set_override("planner.system", "en", "custom")
        .unwrap();
    registry.append("planner.system", "extra").unwrap();
    registry.reset("planner.system").unwrap();
    assert_eq!(
        registry.render("planner.system", &()).unwrap(),
        "planner.system default"
    );
    assert!(registry.has("planner.system"));
}

#[cfg(feature = "templates")]
#[test]
fn model_settings_follow_locale_matching_and_reset_clears_a_locales() {
    use promptreg::JsonObject;
    use serde_json::json;

    let settings = |v| JsonObject::from_value(v).unwrap();
    let registry = PromptRegistry::new();
    let prompt =
        Prompt::new("Narrate.").with_model(settings(json!({ "model": "m", "temperature": 0.2 })));
    registry.register("narrator", prompt).unwrap();
    registry
        .set_model_settings("narrator", "zh-TW", settings(json!({ "model": "m-hant" })))
        .unwrap();
    let name = |locale: &str| {
        registry
            .model_settings_in("narrator", locale)
            .unwrap()
            .and_then(|s| s.model_name())
    };
    assert_eq!(name("zh-HK").as_deref(), Some("m-hant"), "same script");
    assert_eq!(
        name("zh-CN").as_deref(),
        Some("m"),
        "another script: the default's"
    );
    assert_eq!(
        registry
            .model_settings("narrator")
            .unwrap()
            .unwrap()
            .get("temperature"),
        Some(json!(0.2))
    );
    assert_eq!(
        registry.model_settings("narator").unwrap_err().kind(),
        ErrorKind::UnknownId
    );
    registry.reset("narrator").unwrap();
    assert_eq!(name("zh-TW").as_deref(), Some("m"));
    let plain = registry_with("plain", "No settings.");
    assert_eq!(plain.model_settings("plain").unwrap(), None);
    assert_eq!(plain.render_traced("plain", &()).unwrap().model, None);
}

#[cfg(feature = "packs")]
#[test]
fn overrides_set_one_by_one_match_as_the_same_overrides_installed_at_once() {
    let locales: Vec<String> = [
        "zh-HK",
        "pt-MZ",
        "pt-AO",
        "zh-TW",
        "pt-BR",
        "sr-Latn-RS",
        "sr-ME",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain((0..200).map(|n| format!("en-US-v{n:05}")))
    .collect();
    let one_by_one = registry_with("narrator", "default");
    for locale in &locales {
        one_by_one
            .set_override("narrator", locale, locale.as_str())
            .unwrap();
    }
    let mut files = vec![
        (
            "promptreg.toml".to_owned(),
            "name = \"t\"\nkeys = [\"narrator\"]\n[user]\nprompts_dir = \".t\"\n".to_owned(),
        ),
        ("defaults/narrator.md".to_owned(), "default".to_owned()),
    ];
    files.extend(
        locales
            .iter()
            .map(|l| (format!("defaults/narrator.{l}.md"), l.clone())),
    );
    let at_once = PromptRegistry::new();
    promptreg::pack::Pack::from_files("t", files)
        .unwrap()
        .install(&at_once)
        .unwrap();
    at_once.set_fallback_locale("en").unwrap();
    for probe in [
        "pt-PT",
        "zh-MO",
        "zh-SG",
        "sr-Latn-BA",
        "sr-Cyrl-BA",
        "en-GB",
        "en-US-v00123",
        "fr",
    ] {
        assert_eq!(
            matched(&one_by_one, probe),
            matched(&at_once, probe),
            "{probe}"
        );
    }
    assert_eq!(matched(&one_by_one, "zh-MO").0, "zh-TW");
}

#[test]
fn a_part_that_fails_is_named_on_every_render_not_only_the_first() {
    // The first render decides the parts once; later ones reuse the
    // decision, and a failure must still name the part that failed.
    let registry = PromptRegistry::new();
    registry
        .register(
            "narrator",
            Prompt::new("Narrate.").pin_tail(|ctx: &Narration, _: &Locale| ctx.brand.clone()),
        )
        .unwrap();
    registry.append("narrator", "Static rule.").unwrap();
    let full = registry
        .render_traced_in("narrator", &Other, "ja")
        .unwrap_err()
        .to_string();
    assert!(full.contains("pinned tail block #1"), "{full}");
    for _ in 0..2 {
        let err = registry.render_in("narrator", &Other, "ja").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ContextType);
        assert_eq!(err.to_string(), full);
    }
    assert_eq!(
        registry.render_in("narrator", &acme(), "ja").unwrap(),
        "Narrate.\n\nAcme\n\nStatic rule."
    );

    registry
        .register(
            "dialogue",
            Prompt::chat(
                Chat::new()
                    .system("Be brief.")
                    .user(|ctx: &Narration, _: &Locale| ctx.persona.clone()),
            ),
        )
        .unwrap();
    let full = registry
        .render_messages_traced_in("dialogue", &Other, "ja", &[])
        .unwrap_err()
        .to_string();
    for _ in 0..2 {
        let err = registry
            .render_messages_in("dialogue", &Other, "ja", &[])
            .unwrap_err();
        assert_eq!(err.to_string(), full);
    }
}
