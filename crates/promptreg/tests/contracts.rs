//! Contracts in packs: tools and output schemas declared in front matter,
//! checked at load with located errors, translated by locale variants,
//! and shaped for each provider.

#![cfg(feature = "packs")]

use std::path::PathBuf;

use promptreg::pack::Pack;
use promptreg::{Diagnostic, DiagnosticCode, PromptRegistry, Provider, RenderRequest, Severity};
use serde_json::json;

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// A pack of prompt `p` (and its variants) from `files`.
fn pack_with(files: &[(&str, &str)]) -> Result<Pack, promptreg::Error> {
    let manifest = "name = \"t\"\nkeys = [\"p\"]\n[user]\nprompts_dir = \".t\"\n";
    let mut all = vec![("promptreg.toml", manifest)];
    all.extend_from_slice(files);
    Pack::from_files("t", all)
}

/// The diagnostics of a pack that does not load.
fn errors(files: &[(&str, &str)]) -> Vec<Diagnostic> {
    match pack_with(files) {
        Ok(_) => panic!("the pack loaded"),
        Err(e) => e.diagnostics().to_vec(),
    }
}

/// `code@line:column key.path: message` for each diagnostic.
fn brief(diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| {
            let at = d
                .position
                .map(|p| format!("{}:{}", p.line, p.column))
                .unwrap_or_default();
            format!(
                "{}@{at} {}: {}",
                d.code.as_str(),
                d.key_path.as_deref().unwrap_or(""),
                d.message
            )
        })
        .collect()
}

const TOOL: &str = "---
tools:
  - name: open_page
    description: Open a page.
    parameters:
      type: object
      properties:
        path: { type: string, description: The path }
      required: [path]
      additionalProperties: false
output:
  name: verdict
  schema:
    type: object
    properties:
      pass: { type: boolean, description: Whether it passed }
    required: [pass]
    additionalProperties: false
---
Guide the visitor.
";

#[test]
fn a_default_declares_tools_and_an_output_schema() {
    let pack = pack_with(&[("defaults/p.md", TOOL)]).unwrap();
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let contract = registry.snapshot().contract("p", "en").unwrap().unwrap();
    assert_eq!(contract.tools()[0].name(), "open_page");
    assert_eq!(contract.output().unwrap().name(), "verdict");
    let file = contract.provenance().unwrap().file.clone().unwrap();
    assert!(file.ends_with("defaults/p.md"), "{file:?}");
}

#[test]
fn a_variant_translates_descriptions_and_nothing_else() {
    let ja = "---
tools:
  open_page:
    description: ページを開きます。
    parameters: { path: パス }
output:
  description: 判定
  properties: { pass: 合格かどうか }
---
案内してください。
";
    let pack = pack_with(&[("defaults/p.md", TOOL), ("defaults/p.ja.md", ja)]).unwrap();
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let snapshot = registry.snapshot();
    let contract = snapshot.contract("p", "ja-JP").unwrap().unwrap();
    let tool = &contract.tools()[0];
    assert_eq!(tool.description(), "ページを開きます。");
    assert_eq!(
        tool.parameters().to_value()["properties"]["path"]["description"],
        "パス"
    );
    let output = contract.output().unwrap();
    assert_eq!(output.description(), Some("判定"));
    assert_eq!(
        output.schema().to_value()["properties"]["pass"]["description"],
        "合格かどうか"
    );
    // Other locales keep the default's.
    let en = snapshot.contract("p", "fr").unwrap().unwrap();
    assert_eq!(en.tools()[0].description(), "Open a page.");
}

#[test]
fn a_variant_that_changes_a_name_or_a_schema_is_refused_at_its_key() {
    let renamed = "---\ntools:\n  open_pages:\n    description: x\n---\nx\n";
    let found = brief(&errors(&[
        ("defaults/p.md", TOOL),
        ("defaults/p.ja.md", renamed),
    ]));
    assert_eq!(
        found,
        ["contract@3:3 tools.open_pages: the default declares no tool `open_pages`"]
    );
    let schema = "---\noutput:\n  schema: { type: object }\n---\nx\n";
    let found = brief(&errors(&[
        ("defaults/p.md", TOOL),
        ("defaults/p.ja.md", schema),
    ]));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(
            "contract@3:3 output.schema: a locale variant cannot change the output's `schema`"
        ),
        "{found:?}"
    );
    let list = "---\ntools:\n  - name: open_page\n    description: x\n---\nx\n";
    let found = brief(&errors(&[
        ("defaults/p.md", TOOL),
        ("defaults/p.ja.md", list),
    ]));
    assert!(
        found[0].contains("translates descriptions by tool name"),
        "{found:?}"
    );
    let unknown = "---\ntools:\n  open_page:\n    parameters: { pth: x }\n---\nx\n";
    let e = errors(&[("defaults/p.md", TOOL), ("defaults/p.ja.md", unknown)]);
    assert_eq!(
        brief(&e),
        ["contract@4:5 tools.open_page.parameters.pth: the schema has no property `pth`"]
    );
    assert_eq!(e[0].suggestion.as_deref(), Some("did you mean `path`?"));
}

#[test]
fn bad_schemas_are_located_errors_and_nothing_loads() {
    let cases = [
        (
            "tools:\n  - name: a\n    description: x\n    parameters: { type: object, properties: { n: { type: integr } } }\n",
            "contract@5:5 tools.0.parameters.properties.n.type: not a valid JSON Schema",
        ),
        (
            "tools:\n  - name: a\n    description: x\n    parameters: { $ref: \"https://example.invalid/s.json\" }\n",
            "contract@5:5 tools.0.parameters.$ref: `$ref: https://example.invalid/s.json` leaves the schema",
        ),
        (
            "tools: open_page\n",
            "contract@2:1 tools: `tools` is a string, not a list of tools",
        ),
        (
            "tools:\n  - name: a\n",
            "contract@3:3 tools.0.description: `description` is missing or blank",
        ),
        (
            "tools:\n  - name: a\n    description: x\n  - name: a\n    description: another\n",
            "contract@5:3 tools.1.name: two tools are named `a`",
        ),
        (
            "tools:\n  - nme: a\n    description: x\n",
            "contract@3:3 tools.0.nme: a tool has no key `nme`",
        ),
        (
            "output: { name: v }\n",
            "contract@2:1 output.schema: `output` has no `schema`",
        ),
        (
            "output:\n  schema: 3\n",
            "contract@3:3 output.schema: a JSON Schema is an object",
        ),
        (
            "model: { tools: [] }\ntools:\n  - name: a\n    description: x\n",
            "contract@2:1 model.tools: `model.tools` and `tools` both declare the prompt's tools",
        ),
    ];
    for (front_matter, expected) in cases {
        let file = format!("---\n{front_matter}---\nText.\n");
        let found = brief(&errors(&[("defaults/p.md", &file)]));
        assert!(
            found.iter().any(|f| f.starts_with(expected)),
            "{front_matter}\nexpected {expected}\nfound {found:#?}"
        );
    }
}

#[test]
fn a_deep_or_cyclic_schema_is_bounded() {
    let mut deep = String::from("{ type: string }");
    for _ in 0..100 {
        deep = format!("{{ items: {deep} }}");
    }
    let file =
        format!("---\ntools:\n  - name: a\n    description: x\n    parameters: {deep}\n---\nx\n");
    // The front matter's reader stops first (the schema's own bound,
    // 64 levels, holds for schemas read as JSON).
    let found = brief(&errors(&[("defaults/p.md", &file)]));
    assert!(found.iter().any(|f| f.contains("Depth")), "{found:?}");
    // A schema that refers to itself is recursion JSON Schema allows: it
    // loads, and the provider gets it as written.
    let cyclic = "---\ntools:\n  - name: tree\n    description: x\n    parameters:\n      type: object\n      properties:\n        children: { type: array, items: { $ref: \"#\" } }\n---\nx\n";
    let pack = pack_with(&[("defaults/p.md", cyclic)]).unwrap();
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
}

#[test]
fn provider_rules_and_unknown_keywords_are_warnings() {
    let file = "---
tools:
  - name: open page
    description: x
    parameters: { type: string }
output:
  schema: { type: object, properties: { a: { type: string } }, requried: [a] }
---
x
";
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("defaults")).unwrap();
    let manifest = "name = \"t\"\nkeys = [\"p\"]\n[user]\nprompts_dir = \".t\"\n";
    std::fs::write(dir.path().join("promptreg.toml"), manifest).unwrap();
    std::fs::write(dir.path().join("defaults/p.md"), file).unwrap();
    let (pack, diagnostics) = Pack::load_with_diagnostics(dir.path());
    assert!(pack.is_some(), "{diagnostics:#?}");
    assert!(
        diagnostics.iter().all(|d| d.severity == Severity::Warning),
        "{diagnostics:#?}"
    );
    let found = brief(&diagnostics);
    for expected in [
        "provider-rule@3:3 tools.0.name: the tool name `open page` is not",
        "provider-rule@5:5 tools.0.parameters: the parameters of `open page` are not an object schema",
        "unknown-schema-keyword@7:3 output.schema.requried: `requried` is no JSON Schema keyword",
        "provider-rule@7:3 output.schema: OpenAI enforces an output schema in strict mode only",
    ] {
        assert!(
            found.iter().any(|f| f.starts_with(expected)),
            "expected {expected}\nfound {found:#?}"
        );
    }
    let unknown = diagnostics
        .iter()
        .find(|d| d.code == DiagnosticCode::UnknownSchemaKeyword)
        .unwrap();
    assert_eq!(
        unknown.suggestion.as_deref(),
        Some("did you mean `required`?")
    );
}

#[test]
fn the_example_packs_declare_their_contracts() {
    let registry = PromptRegistry::new();
    Pack::load(example("web-agent"))
        .unwrap()
        .install(&registry)
        .unwrap();
    let ja = registry
        .snapshot()
        .contract("webagent-narrator.system", "ja")
        .unwrap()
        .unwrap();
    let names: Vec<&str> = ja.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["open_page", "search_site", "hand_over"]);
    assert_eq!(
        ja.tools()[0].description(),
        "サイトのページを開き、その本文を読みます。"
    );

    let registry = PromptRegistry::new();
    Pack::load(example("goal-agent"))
        .unwrap()
        .install(&registry)
        .unwrap();
    let auditor = registry
        .snapshot()
        .contract("auditor", "en")
        .unwrap()
        .unwrap();
    assert_eq!(auditor.output().unwrap().name(), "audit_verdict");
}

#[test]
fn a_render_for_each_provider_carries_the_contract() {
    let registry = PromptRegistry::new();
    Pack::load(example("web-agent"))
        .unwrap()
        .install(&registry)
        .unwrap();
    let ctx = json!({ "brand": "Acme" });
    let request = RenderRequest::new("webagent-narrator.system", &ctx)
        .locale_tag("ja")
        .unwrap();
    let openai = registry
        .provider_request(&request, Provider::OpenAiChat)
        .unwrap();
    assert_eq!(openai["model"], "gpt-4o-mini");
    assert_eq!(openai["max_tokens"], 1200, "the ja variant's settings");
    assert_eq!(openai["messages"][0]["role"], "system");
    assert_eq!(openai["tools"].as_array().unwrap().len(), 3);
    assert_eq!(openai["tools"][0]["function"]["strict"], true);
    let anthropic = registry
        .provider_request(&request, Provider::Anthropic)
        .unwrap();
    assert!(
        anthropic["system"]
            .as_str()
            .unwrap()
            .starts_with("あなたは")
    );
    assert_eq!(
        anthropic["tools"][1]["input_schema"]["properties"]["query"]["description"],
        "検索する語句"
    );
    let gemini = registry
        .provider_request(&request, Provider::Gemini)
        .unwrap();
    assert_eq!(gemini["generationConfig"]["maxOutputTokens"], 1200);
    assert_eq!(
        gemini["tools"][0]["functionDeclarations"][2]["name"],
        "hand_over"
    );
}

#[test]
fn trace_attributes_name_the_contract_s_digest() {
    use promptreg::trace_attributes::{AttributeValue, CONTRACT_DIGEST};
    let registry = PromptRegistry::new();
    Pack::load(example("goal-agent"))
        .unwrap()
        .install(&registry)
        .unwrap();
    let digest = |locale: &str| {
        let rendered = registry.render_traced_in("auditor", &(), locale).unwrap();
        rendered
            .trace_attributes()
            .into_iter()
            .find(|(name, _)| *name == CONTRACT_DIGEST)
            .map(|(_, value)| value)
    };
    let (Some(AttributeValue::String(en)), Some(AttributeValue::String(ja))) =
        (digest("en"), digest("ja"))
    else {
        panic!("no contract digest")
    };
    assert_eq!(en.len(), 16);
    // The Japanese contract translates descriptions: another digest.
    assert_ne!(en, ja);
    assert_eq!(digest("en"), Some(AttributeValue::String(en)));
    let plain = registry.render_traced_in("goal-stale", &(), "en").unwrap();
    assert!(
        plain
            .trace_attributes()
            .iter()
            .all(|(name, _)| *name != CONTRACT_DIGEST)
    );
}

/// The results of `tests` (a test file of `p`) against a pack of [`TOOL`]
/// with a Japanese variant: `(case, failure messages)`.
#[cfg(feature = "testing")]
fn run_cases(tests: &str) -> Result<Vec<(String, Vec<String>)>, promptreg::Error> {
    let ja = "---\ntools:\n  open_page:\n    description: ページを開きます。\n---\n案内します。\n";
    let files = [("defaults/p.md", TOOL), ("defaults/p.ja.md", ja)];
    let pack = pack_with(&files)?;
    let registry = PromptRegistry::new();
    pack.install(&registry)?;
    let tests = promptreg::testing::PromptTests::from_files(&pack, [("tests/p.toml", tests)])?;
    Ok(tests
        .run(&registry)
        .into_iter()
        .map(|r| (r.case, r.failures.into_iter().map(|f| f.message).collect()))
        .collect())
}

#[cfg(feature = "testing")]
#[test]
fn a_test_case_checks_a_sample_answer_and_tool_call_against_the_contract() {
    let results = run_cases(
        r#"prompt = "p"
[[case]]
name = "verdict"
answer = { pass = true }
[[case]]
name = "verdict-as-text"
answer = '{"pass": "yes", "score": 3}'
[[case]]
name = "call"
locale = "ja"
tool_call = { name = "open_page", arguments = { path = "/returns" } }
[[case]]
name = "call-without-path"
tool_call = { name = "open_page" }
"#,
    )
    .unwrap();
    assert_eq!(
        results,
        [
            ("verdict".to_owned(), vec![]),
            (
                "verdict-as-text".to_owned(),
                vec![
                    "at `pass`: \"yes\" is not of type \"boolean\"; at (the whole value): Additional properties are not allowed ('score' was unexpected)".to_owned()
                ]
            ),
            ("call".to_owned(), vec![]),
            (
                "call-without-path".to_owned(),
                vec!["at (the whole value): \"path\" is a required property".to_owned()]
            ),
        ]
    );
}

#[cfg(feature = "testing")]
#[test]
fn a_sample_the_contract_cannot_check_is_a_located_error() {
    let err = |tests: &str| brief(run_cases(tests).unwrap_err().diagnostics());
    assert_eq!(
        err("prompt = \"p\"\n[[case]]\nname = \"c\"\ntool_call = { name = \"open_pages\" }\n"),
        ["prompt-test@4:22 : `tool_call` names `open_pages`, a tool `p` does not offer"]
    );
    assert_eq!(
        err("prompt = \"p\"\n[[case]]\nname = \"c\"\nanswer = '{\"pass\": tru'\n"),
        ["prompt-test@4:10 : the text is not JSON: EOF while parsing a value at line 1 column 12"]
    );
    assert_eq!(
        err(
            "prompt = \"p\"\n[[case]]\nname = \"c\"\ntool_call = { name = \"open_page\", path = \"/\" }\n"
        ),
        [
            "prompt-test@4:35 : invalid test file: unknown field `path`, expected `name` or `arguments`"
        ]
    );
}

const TYPED: &str = "---
template: true
variables:
  tasks:
    schema:
      type: array
      items:
        type: object
        properties:
          title: { type: string }
          done: { type: boolean }
        required: [title]
  limit: { default: 3, schema: { type: integer, minimum: 1 } }
---
{% for t in tasks %}- {{ t.title }}
{% endfor %}At most {{ limit }}.
";

#[test]
fn a_render_s_context_is_validated_against_the_variables_schemas() {
    let pack = pack_with(&[("defaults/p.md", TYPED)]).unwrap();
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let ok = json!({ "tasks": [{ "title": "Export", "done": false }] });
    assert_eq!(registry.render("p", &ok).unwrap(), "- Export\nAt most 3.");
    let wrong = json!({ "tasks": [{ "title": "Export" }, { "done": "yes" }] });
    let err = registry.render("p", &wrong).unwrap_err().to_string();
    assert!(
        err.contains("variable `tasks` does not match its schema: at `tasks.1`: \"title\" is a required property; at `tasks.1.done`: \"yes\" is not of type \"boolean\""),
        "{err}"
    );
    let err = registry
        .render("p", &json!({ "tasks": [], "limit": 0 }))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("at `limit`: 0 is less than the minimum of 1"),
        "{err}"
    );
}

#[test]
fn a_variable_s_schema_and_its_default_are_checked_at_load() {
    let bad_schema = TYPED.replace("type: integer, minimum: 1", "type: integer, minimum: one");
    assert_eq!(
        brief(&errors(&[("defaults/p.md", &bad_schema)])),
        [
            "front-matter@13:3 variables.limit.schema.minimum: not a valid JSON Schema: \"one\" is not of type \"number\""
        ]
    );
    let bad_default = TYPED.replace("default: 3", "default: 0");
    assert_eq!(
        brief(&errors(&[("defaults/p.md", &bad_default)])),
        [
            "front-matter@13:3 : the declared `default` of `limit` does not match its schema: at `limit`: 0 is less than the minimum of 1"
        ]
    );
}

/// A pack of prompts `p` and `q` from `files`.
fn pack_of_two(files: &[(&str, &str)]) -> Result<Pack, promptreg::Error> {
    let manifest = "name = \"t\"\nkeys = [\"p\", \"q\"]\n[user]\nprompts_dir = \".t\"\n";
    let mut all = vec![("promptreg.toml", manifest)];
    all.extend_from_slice(files);
    Pack::from_files("t", all)
}

const SHARED_TOOL: &str = "description: Hand over to a person.\nparameters:\n  type: object\n  properties:\n    reason: { type: string }\n  required: [reason]\n";
const SHARED_SCHEMA: &str =
    "{\"type\": \"object\", \"properties\": {\"pass\": {\"type\": \"boolean\"}}}";

#[test]
fn prompts_share_tools_and_schemas_kept_in_files_of_their_own() {
    let pack = pack_of_two(&[
        ("tools/hand_over.yaml", SHARED_TOOL),
        ("schemas/verdict.json", SHARED_SCHEMA),
        ("defaults/p.md", "---\ntools: [hand_over]\noutput: verdict\n---\nP.\n"),
        (
            "defaults/q.md",
            "---\ntools:\n  - hand_over\n  - name: wave\n    description: Waves.\n    parameters: verdict\noutput:\n  name: q_answer\n  schema: verdict\n---\nQ.\n",
        ),
        ("defaults/q.ja.md", "---\ntools:\n  hand_over: { description: 担当者に引き継ぎます。 }\n---\nQ。\n"),
    ])
    .unwrap();
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let snapshot = registry.snapshot();
    let p = snapshot.contract("p", "en").unwrap().unwrap();
    assert_eq!(p.tools()[0].origin(), Some("tools/hand_over.yaml"));
    assert_eq!(p.tools()[0].description(), "Hand over to a person.");
    assert_eq!(p.output().unwrap().name(), "verdict");
    assert_eq!(p.output().unwrap().origin(), Some("schemas/verdict.json"));
    let q = snapshot.contract("q", "ja").unwrap().unwrap();
    assert_eq!(q.tools()[0].description(), "担当者に引き継ぎます。");
    assert_eq!(q.tools()[0].origin(), Some("tools/hand_over.yaml"));
    assert_eq!(q.tools()[1].origin(), Some("schemas/verdict.json"));
    assert_eq!(q.output().unwrap().name(), "q_answer");
    assert_eq!(q.tools()[0].parameters(), p.tools()[0].parameters());
}

#[test]
fn a_shared_file_that_is_wrong_or_missing_is_a_located_error() {
    let err = |files: &[(&str, &str)]| match pack_of_two(files) {
        Ok(_) => panic!("the pack loaded"),
        Err(e) => brief(e.diagnostics()),
    };
    let uses = ("defaults/p.md", "---\ntools: [hand_over]\n---\nP.\n");
    assert_eq!(
        err(&[("tools/hand_ovr.yaml", SHARED_TOOL), uses])[0],
        "contract@2:1 tools.0: the pack shares no tool `hand_over` (tools/hand_over.yaml)"
    );
    assert_eq!(
        err(&[("tools/hand_over.yaml", "description: [unclosed\n"), uses])[0],
        "contract@1:14 : invalid YAML: unclosed bracket '['"
    );
    assert_eq!(
        err(&[
            (
                "tools/hand_over.yaml",
                "description: Hand over.\nparameters: { type: objet }\n"
            ),
            uses
        ])[0],
        "contract@ parameters.type: not a valid JSON Schema: \"objet\" is not valid under any of the schemas listed in the 'anyOf' keyword"
    );
    assert_eq!(
        err(&[("tools/hand_over.yaml", "descripton: Hand over.\n"), uses])[0],
        "contract@ descripton: a tool has no key `descripton`"
    );
    assert_eq!(
        err(&[
            ("tools/hand_over.yaml", SHARED_TOOL),
            ("tools/hand_over.json", "{\"description\": \"Hand over.\"}"),
            uses
        ])[0],
        "contract@ : `hand_over` is declared twice, here and in tools/hand_over.yaml"
    );
    // Only the tool of that name is gone: a schema of that name stays.
    let twice_and_a_schema = err(&[
        ("tools/hand_over.yaml", SHARED_TOOL),
        ("tools/hand_over.json", "{\"description\": \"Hand over.\"}"),
        ("schemas/hand_over.json", SHARED_SCHEMA),
        (
            "defaults/p.md",
            "---\ntools: [hand_over]\noutput: hand_over\n---\nP.\n",
        ),
    ]);
    assert!(
        twice_and_a_schema[1].contains("shares no tool `hand_over`"),
        "{twice_and_a_schema:?}"
    );
    assert!(
        !twice_and_a_schema
            .iter()
            .any(|d| d.contains("shares no schema")),
        "{twice_and_a_schema:?}"
    );
    assert_eq!(
        err(&[
            ("schemas/verdict.json", "{\"type\": 3}"),
            ("defaults/p.md", "---\noutput: verdict\n---\nP.\n")
        ])[0],
        "contract@ type: not a valid JSON Schema: 3 is not valid under any of the schemas listed in the 'anyOf' keyword"
    );
}
